// The sweep's aggregation against hand-computed values: accuracy after the first r runs, mean and
// population std over seeds, macro-F1, lenient math scores, exact "alone" call counts and the
// sharing totals, and the CSV export.
import { describe, expect, it } from 'vitest';
import type { TaskDefinition } from '../../../electron/common/task';
import { aggregateSweep, meanStd, scoreUpTo, sweepPointsCsv, type SweepCell } from '../../../electron/experiments';
import type { JobRow, RowRun, StoredRunExamples } from '../../../electron/jobs';
import { loadBuiltInTasks } from '../../../electron/tasks';
import { formatSweep } from '../../../electron/cli/commands/sweep';
import type { SweepResult } from '../../../electron/common/contract/sweeps';
import { boundsText } from '../../../electron/common/contract/interval';

const tasks = await loadBuiltInTasks();
const sst2 = tasks.find((t) => t.id === 'sst2') as TaskDefinition;
const math = tasks.find((t) => t.kind === 'math') as TaskDefinition;

function run(j: number, labels: (string | null)[], paraphrases: string[] = [], raws?: string[]): RowRun {
  return {
    run: j,
    seed: 1 + 10000 * j,
    paraphrases,
    predictions: labels.map((label, variant) => ({ variant, label, raw: raws?.[variant] ?? label ?? '' })),
    fallback: null,
  };
}

function row(index: number, gold: string | null, runs: RowRun[], evaluationCalls = 0): JobRow {
  return {
    index,
    line: index + 2,
    input: `input ${index}`,
    gold,
    goldRaw: gold,
    status: 'done',
    prediction: null,
    correct: null,
    lenientCorrect: null,
    confidence: 1,
    votes: {},
    tieBreak: 'none',
    runs,
    baseline: null,
    stages: {
      examples: { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 },
      paraphrases: { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 },
      evaluation: { calls: evaluationCalls, promptTokens: 100 * evaluationCalls, completionTokens: 0, ms: 0 },
    },
    ms: 0,
    error: null,
  };
}

function examples(j: number, calls = 2): StoredRunExamples {
  return {
    run: j,
    seed: 1 + 10000 * j,
    examples: [{ text: `ex ${j}`, label: 'positive' }],
    filtered: { wrongLabel: 0, duplicate: 0, malformed: 0, empty: 0, overK: 0 },
    // A job that read them from the cache records them as free.
    stats: calls > 0 ? { calls, promptTokens: 10, completionTokens: 5, ms: 1 } : { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 },
  };
}

describe('meanStd', () => {
  it('is the mean and the population standard deviation', () => {
    expect(meanStd([])).toBeNull();
    expect(meanStd([0.5])).toEqual({ mean: 0.5, std: 0 });
    const v = meanStd([0.5, 0.75, 1])!;
    expect(v.mean).toBeCloseTo(0.75, 12);
    expect(v.std).toBeCloseTo(Math.sqrt((0.0625 + 0 + 0.0625) / 3), 12);
  });
});

describe('scoreUpTo', () => {
  // Row 0 (gold positive): run 0 says negative, runs 1 and 2 say positive.
  // Row 1 (gold negative): every run says negative.
  const rows = [
    row(0, 'positive', [run(0, ['negative']), run(1, ['positive']), run(2, ['positive'])]),
    row(1, 'negative', [run(0, ['negative']), run(1, ['negative']), run(2, ['negative'])]),
  ];

  it('re-votes with the first r runs only', () => {
    // r=1: row 0 wrong. r=2: one vote each, the first run's original breaks the tie: negative, wrong. r=3: positive.
    expect(scoreUpTo(sst2, rows, 1)).toMatchObject({ scored: 2, accuracy: 0.5 });
    expect(scoreUpTo(sst2, rows, 2)).toMatchObject({ scored: 2, accuracy: 0.5 });
    expect(scoreUpTo(sst2, rows, 3)).toMatchObject({ scored: 2, accuracy: 1, macroF1: 1, lenientAccuracy: null });
  });

  it('macro-F1 over the labels present (sklearn default)', () => {
    // r=1: predictions negative, negative; gold positive, negative. negative: P=1/2 R=1 F1=2/3; positive: F1=0.
    expect(scoreUpTo(sst2, rows, 1).macroF1).toBeCloseTo((2 / 3 + 0) / 2, 12);
  });

  it('skips rows without gold or not done', () => {
    const more = [...rows, row(2, null, [run(0, ['positive'])]), { ...row(3, 'positive', [run(0, ['positive'])]), status: 'pending' as const }];
    expect(scoreUpTo(sst2, more, 3)).toMatchObject({ scored: 2, accuracy: 1 });
  });

  it('math: strict on the extracted answer, lenient on the gold string in a winning raw output', () => {
    const rs = [row(0, '12', [run(0, ['13'], [], ['I think 12 then Final Answer: 13']), run(1, ['12'], [], ['Final Answer: 12'])])];
    // r=1: 13 wins; strict wrong, but its raw contains "12": lenient right.
    expect(scoreUpTo(math, rs, 1)).toMatchObject({ accuracy: 0, lenientAccuracy: 1, macroF1: null });
  });
});

describe('aggregateSweep', () => {
  const grid = { n: [0, 1], k: [2], r: [1, 2], seeds: [1, 2] };
  // n=0: one variant per run. n=1: original + one paraphrase per run.
  const cell = (n: number, seed: number, correctAt: (j: number) => boolean, done = true): SweepCell => ({
    n,
    k: 2,
    seed,
    done,
    rows: [
      row(
        0,
        'positive',
        [0, 1].map((j) => run(j, Array.from({ length: n + 1 }, () => (correctAt(j) ? 'positive' : 'negative')), n > 0 ? [`para ${j}`] : [])),
        2 * (n + 1),
      ),
    ],
    // The n=0 job of each seed generated the examples; the n=1 job read them from the cache.
    runExamples: [examples(0, n === 0 ? 2 : 0), examples(1, n === 0 ? 2 : 0)],
    elapsedMs: 1000,
  });
  const cells = [cell(0, 1, () => true), cell(0, 2, (j) => j === 1), cell(1, 1, () => true), cell(1, 2, () => false)];
  const agg = aggregateSweep({ task: sst2, grid, cells, made: { generatorCalls: 6, evaluatorCalls: 8, tokens: 1000 } });

  it('one point per (n, k, r), n-major, with mean and std over seeds', () => {
    expect(agg.points.map((p) => [p.n, p.k, p.r])).toEqual([
      [0, 2, 1],
      [0, 2, 2],
      [1, 2, 1],
      [1, 2, 2],
    ]);
    const at = (n: number, r: number) => agg.points.find((p) => p.n === n && p.r === r)!;
    // n=0 r=1: seed 1 right, seed 2 wrong (run 0). r=2: seed 2 has one vote each, run 0's original wins: wrong.
    expect(at(0, 1).accuracy).toEqual({ mean: 0.5, std: 0.5 });
    expect(at(0, 2).accuracy).toEqual({ mean: 0.5, std: 0.5 });
    expect(at(1, 2).accuracy).toEqual({ mean: 0.5, std: 0.5 });
    expect(at(0, 1).seeds).toEqual([1, 2]);
  });

  it('counts what each point costs alone, exactly, and what sharing saved', () => {
    const at = (n: number, r: number) => agg.points.find((p) => p.n === n && p.r === r)!;
    // sst2 at k=2: one call per label per run (2). n=1 adds one paraphrase call per row and run.
    // Evaluator: one call per distinct prompt (n+1 variants per run).
    expect(at(0, 1).perSeed[0]!.cost).toMatchObject({ generatorCalls: 2, evaluatorCalls: 1 });
    expect(at(0, 2).perSeed[0]!.cost).toMatchObject({ generatorCalls: 4, evaluatorCalls: 2 });
    expect(at(1, 2).perSeed[0]!.cost).toMatchObject({ generatorCalls: 6, evaluatorCalls: 4 });
    expect(at(1, 2).calls).toEqual({ mean: 10, std: 0 });
    // Alone: per seed (2+4) for n=0 plus (3+6) for n=1 → 15, two seeds → 30 generator calls;
    // evaluator (1+2) + (2+4) = 9 per seed → 18.
    expect(agg.sharing.generatorCalls).toEqual({ alone: 30, made: 6, saved: 24 });
    expect(agg.sharing.evaluatorCalls).toEqual({ alone: 18, made: 8, saved: 10 });
  });

  it('tokens come from where the work was done; seconds are those tokens at the sweep throughput', () => {
    const p = agg.points.find((x) => x.n === 1 && x.r === 1)!.perSeed[0]!;
    // Examples of run 0 (15 tokens, from the n=0 job) + half the row's evaluation tokens (400 of 2 runs).
    expect(p.cost.tokens).toBe(15 + 200);
    // 4 jobs × 1 s for 1000 tokens made.
    expect(p.cost.seconds).toBeCloseTo(215 * (4 / 1000), 9);
  });

  it('where no job holds the cost of cached work (lost to a kill, then read back), the mean measured call stands in', () => {
    // Run 1's examples and row 0's paraphrases were generated by no job that kept their cost.
    const lost = cells.map((c) => ({
      ...c,
      runExamples: [examples(0, c.n === 0 ? 2 : 0), examples(1, 0)],
      rows: c.rows.map((r) => ({ ...r, stages: { ...r.stages!, paraphrases: { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 } } })),
    }));
    const withParaphrases = { ...lost[2]!, seed: 3, rows: lost[2]!.rows.map((r) => ({ ...r, index: 9, stages: { ...r.stages!, paraphrases: { calls: 2, promptTokens: 30, completionTokens: 10, ms: 0 } } })) };
    const a = aggregateSweep({ task: sst2, grid: { ...grid, seeds: [1, 2, 3] }, cells: [...lost, withParaphrases], made: { generatorCalls: 0, evaluatorCalls: 0, tokens: 0 } });
    const n0 = a.points.find((x) => x.n === 0 && x.r === 2)!.perSeed[0]!;
    // Run 0 measured (15), run 1 estimated: 2 calls × 7.5 tokens; plus the row's 200 evaluation tokens.
    expect(n0.cost.tokens).toBe(15 + 15 + 200);
    const n1 = a.points.find((x) => x.n === 1 && x.r === 2)!.perSeed[0]!;
    // Paraphrases: 2 runs × 20 tokens a call (the only measured row: 40 tokens over 2 calls); evaluation 400.
    expect(n1.cost.tokens).toBe(15 + 15 + 400 + 40);
  });

  it('leaves out jobs that are not done', () => {
    const partial = aggregateSweep({ task: sst2, grid, cells: [cells[0]!, { ...cells[1]!, done: false }], made: { generatorCalls: 0, evaluatorCalls: 0, tokens: 0 } });
    const p = partial.points.find((x) => x.n === 0 && x.r === 1)!;
    expect(p.seeds).toEqual([1]);
    expect(p.accuracy).toEqual({ mean: 1, std: 0 });
    expect(partial.points.find((x) => x.n === 1)!.accuracy).toBeNull();
  });

  it('exports one CSV line per point', () => {
    const lines = sweepPointsCsv(agg.points).trimEnd().split('\r\n');
    expect(lines[0]).toBe('n,k,r,seeds,accuracy_mean,accuracy_std,accuracy_low,accuracy_high,tied_for_best,macro_f1_mean,macro_f1_std,macro_f1_low,macro_f1_high,lenient_accuracy_mean,lenient_accuracy_std,calls_mean,calls_std,tokens_mean,tokens_std,seconds_mean,seconds_std');
    expect(lines).toHaveLength(5);
    expect(lines[1]!.startsWith('0,2,1,1 2,0.5,0.5,')).toBe(true);
    const p = agg.points[0]!;
    expect(lines[1]!.split(',').slice(6, 9)).toEqual([String(p.accuracyInterval!.low), String(p.accuracyInterval!.high), String(p.tiedForBest)]);
    expect(lines[1]!.split(',').slice(11, 13)).toEqual([String(p.macroF1Interval!.low), String(p.macroF1Interval!.high)]);
    // No lenient score for a classification task: empty cells.
    expect(lines[1]!.split(',').slice(13, 15)).toEqual(['', '']);
  });

  it('prints each point with both intervals, the tied ones starred, and says how they were worked out', () => {
    const result = { id: 's1', name: 'grid', status: 'done', taskId: 'sst2', taskKind: 'classification', dataPath: '/d.jsonl', rows: 2, progress: { jobsDone: 4, jobsTotal: 4 }, generator: '/g', evaluator: '/g', deterministic: null, error: null, sharing: agg.sharing, points: agg.points } as unknown as SweepResult;
    const text = formatSweep(result);
    const p = agg.points.find((x) => x.accuracy !== null)!;
    expect(text).toContain(boundsText(p.accuracyInterval));
    expect(text).toContain(boundsText(p.macroF1Interval, 'number'));
    expect(text.split('\n').filter((l) => /^\s*\* \d/.test(l))).toHaveLength(agg.points.filter((x) => x.tiedForBest).length);
    expect(text).toContain('95 % intervals by the percentile bootstrap over rows and seeds');
  });

  it('gives each point its interval over rows and seeds, and the points tied for best (docs/method.md §16)', () => {
    for (const p of agg.points) {
      if (p.accuracy === null) continue;
      // Both seeds scored the same rows: the interval's estimate is the mean over seeds.
      expect(p.accuracyInterval).toMatchObject({ estimate: p.accuracy.mean, method: 'bootstrap-rows-seeds', level: 0.95 });
      expect(p.accuracyInterval!.low).toBeLessThanOrEqual(p.accuracy.mean);
      expect(p.accuracyInterval!.high).toBeGreaterThanOrEqual(p.accuracy.mean);
      // Macro-F1 alike: the mean over seeds with its bootstrap over rows and seeds.
      expect(p.macroF1Interval!.estimate).toBeCloseTo(p.macroF1!.mean, 12);
      expect(p.macroF1Interval).toMatchObject({ method: 'bootstrap-rows-seeds', level: 0.95 });
      expect(p.macroF1Interval!.low).toBeLessThanOrEqual(p.macroF1!.mean);
      expect(p.macroF1Interval!.high).toBeGreaterThanOrEqual(p.macroF1!.mean);
    }
    const best = agg.points.filter((p) => p.best);
    expect(best).toHaveLength(1);
    expect(best[0]!.accuracy!.mean).toBe(Math.max(...agg.points.map((p) => p.accuracy?.mean ?? -1)));
    expect(best[0]!.tiedForBest).toBe(true);
    // On a handful of rows nothing is told apart from the best: every scored point is tied with it, each compared seed by seed.
    for (const p of agg.points.filter((x) => !x.best && x.accuracy !== null)) {
      expect(p.tiedForBest).toBe(true);
      expect(p.versusBest).toMatchObject({ test: 'sign-exact', difference: { method: 'bootstrap-paired' } });
    }
    // The same sweep read again shows the same intervals.
    const again = aggregateSweep({ task: sst2, grid, cells, made: { generatorCalls: 6, evaluatorCalls: 8, tokens: 1000 } });
    expect(again.points.map((p) => p.accuracyInterval)).toEqual(agg.points.map((p) => p.accuracyInterval));
  });
});
