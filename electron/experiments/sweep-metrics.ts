// A sweep's numbers, as pure functions over its jobs' stored rows, so they can be checked against
// hand-computed values and recomputed at any time (also on a sweep that is half done).
//
// A sweep holds one job per (n, k, seed), run at the largest r. Point (n, k, r) for a seed reads
// that job's first r runs: run j's seed is seed + 10000·j whatever r is, its examples depend on
// (task, k, seed, run, generator) only and its paraphrases on (n, seed, run, input), so re-voting
// the first r runs gives exactly the label a job at r would give (test/unit/engine/classify.test.ts
// pins that on the engine).
//
// Cost of a point "alone" is what a fresh job at that setting would spend on the same rows with an
// empty cache: calls are counted exactly from what was stored; tokens and seconds are apportioned
// from the measured work (see pointCost).
import { evaluationPrompt, exampleCalls } from '../engine';
import { lenientMathCorrect } from '../engine/math';
import type { TaskDefinition } from '../common/task';
import type { CallSaving, MeanStd, SweepCost, SweepGrid, SweepPoint, SweepSeedPoint } from '../common/contract/sweeps';
import { isCorrect, labelScores, revote } from '../jobs/metrics';
import type { JobRow, StoredRunExamples } from '../jobs/types';
import { toCsv } from '../jobs/export';
import { labelNames } from '../common/task';
import { accuracyOf } from '../common/contract/jobs';
import { pointsVersusBest, type PointScores } from './sweep-stats';
import type { LabelledRow } from '../common/stats';

/** One job of a sweep: (n, k, seed) at the largest r. */
export interface SweepCell {
  n: number;
  k: number;
  seed: number;
  /** Only done jobs enter the points (a half-done job would mix row sets across seeds). */
  done: boolean;
  rows: readonly JobRow[];
  runExamples: readonly StoredRunExamples[];
  /** The job's measured running time (with the tokens made, the sweep's throughput). */
  elapsedMs: number;
}

export interface SweepAggregateInput {
  task: TaskDefinition;
  grid: SweepGrid;
  cells: readonly SweepCell[];
  /** Calls the sweep made and their tokens, as counted at its backends. */
  made: { generatorCalls: number; evaluatorCalls: number; tokens: number };
}

export interface SweepAggregate {
  points: SweepPoint[];
  sharing: { generatorCalls: CallSaving; evaluatorCalls: CallSaving };
}

/** Mean and population standard deviation; null for no values. */
export function meanStd(values: readonly number[]): MeanStd | null {
  if (values.length === 0) return null;
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
  return { mean, std: Math.sqrt(variance) };
}

const ZERO: MeanStd = { mean: 0, std: 0 };

function tokensOf(s: { promptTokens: number; completionTokens: number } | undefined): number {
  return s ? s.promptTokens + s.completionTokens : 0;
}

/**
 * Distinct evaluation prompts of a row over its first r runs: what the engine sends (it evaluates
 * identical prompts once), so for r = all runs this equals the row's stored evaluation calls.
 */
export function evaluationCallsUpTo(task: TaskDefinition, row: JobRow, examplesOf: (run: number) => StoredRunExamples['examples'] | undefined, r: number): number {
  const seen = new Set<string>();
  for (const run of (row.runs ?? []).slice(0, r)) {
    const examples = run.examples ?? examplesOf(run.run) ?? [];
    for (const candidate of [row.input.trim(), ...run.paraphrases]) {
      const { prompt } = evaluationPrompt(task, examples, candidate);
      seen.add(`${prompt.system}\u0000${prompt.user}`);
    }
  }
  return seen.size;
}

// Prompts are rebuilt to count them; each row's counts for every r are built once.
const callCounts = new WeakMap<JobRow, number[]>();

/** `evaluationCallsUpTo` for r = 1 … the row's runs, built in one pass and remembered per row object. */
function evaluationCallCounts(task: TaskDefinition, row: JobRow, examplesOf: (run: number) => StoredRunExamples['examples'] | undefined): number[] {
  const known = callCounts.get(row);
  if (known) return known;
  const seen = new Set<string>();
  const counts: number[] = [];
  for (const run of row.runs ?? []) {
    const examples = run.examples ?? examplesOf(run.run) ?? [];
    for (const candidate of [row.input.trim(), ...run.paraphrases]) {
      const { prompt } = evaluationPrompt(task, examples, candidate);
      seen.add(`${prompt.system}\u0000${prompt.user}`);
    }
    counts.push(seen.size);
  }
  callCounts.set(row, counts);
  return counts;
}

/** Quality of the vote over a cell's first r runs. */
export function scoreUpTo(
  task: TaskDefinition,
  rows: readonly JobRow[],
  r: number,
): Pick<SweepSeedPoint, 'scored' | 'accuracy' | 'macroF1' | 'lenientAccuracy'> & { outcomes: Array<boolean | null>; labelled: Array<LabelledRow | null> } {
  const outcomes: Array<boolean | null> = [];
  /** Each scored row's gold and vote as confusion indexes (the last column: no valid vote), for the macro-F1's interval. */
  const labelled: Array<LabelledRow | null> = [];
  const names = task.kind === 'math' ? [] : labelNames(task);
  let scored = 0;
  let correct = 0;
  let lenient = 0;
  const pairs: { gold: string; prediction: string | null }[] = [];
  for (const row of rows) {
    if (row.status !== 'done' || row.gold === null) continue;
    const runs = (row.runs ?? []).slice(0, r);
    const label = revote(task, runs);
    scored++;
    outcomes[row.index] = isCorrect(task, row.gold, label);
    if (outcomes[row.index]) correct++;
    pairs.push({ gold: row.gold, prediction: label });
    const gold = names.indexOf(row.gold);
    const predicted = label === null ? -1 : names.indexOf(label);
    if (gold >= 0) labelled[row.index] = { gold, predicted: predicted >= 0 ? predicted : names.length };
    if (task.kind === 'math' && label !== null) {
      // As the job scores a row: the gold string in the raw output of a variant that voted for the winner.
      const raws = runs.flatMap((x) => x.predictions).filter((p) => p.label === label);
      if (raws.some((p) => lenientMathCorrect(row.gold!, p.raw))) lenient++;
    }
  }
  return {
    outcomes,
    labelled,
    scored,
    accuracy: accuracyOf(correct, scored),
    macroF1: task.kind === 'math' ? null : labelScores(labelNames(task), pairs).macroF1,
    lenientAccuracy: task.kind === 'math' ? accuracyOf(lenient, scored) : null,
  };
}

/**
 * Where the generator's work was measured. A job that read examples or paraphrases from the cache
 * records them as free, so each piece is looked up in the job that generated it; where no job
 * holds its whole cost (a call generated by a row that a kill or a pause then lost, and read back
 * from the cache by the retried row), the mean of the measured calls of its kind stands in.
 */
export interface CostIndex {
  /** (k, seed, run) → the stored examples with the most generated calls. */
  examples: Map<string, StoredRunExamples>;
  /** k → mean tokens of one measured example call. */
  exampleCallTokens: Map<number, number>;
  /** (n, seed, row index) → the row's paraphrase stage with the most generated calls. */
  paraphrases: Map<string, { calls: number; tokens: number }>;
  /** n → mean tokens of one measured paraphrase call. */
  paraphraseCallTokens: Map<number, number>;
}

function meanPerCall(sums: Map<number, { calls: number; tokens: number }>): Map<number, number> {
  return new Map([...sums].map(([key, s]) => [key, s.calls > 0 ? s.tokens / s.calls : 0]));
}

export function costIndex(cells: readonly SweepCell[]): CostIndex {
  const examples = new Map<string, StoredRunExamples>();
  const exampleSums = new Map<number, { calls: number; tokens: number }>();
  const paraphrases = new Map<string, { calls: number; tokens: number }>();
  const paraphraseSums = new Map<number, { calls: number; tokens: number }>();
  const add = (sums: Map<number, { calls: number; tokens: number }>, key: number, calls: number, tokens: number) => {
    const s = sums.get(key) ?? { calls: 0, tokens: 0 };
    if (calls > 0) sums.set(key, { calls: s.calls + calls, tokens: s.tokens + tokens });
  };
  for (const c of cells) {
    for (const ex of c.runExamples) {
      const key = `${c.k}:${c.seed}:${ex.run}`;
      const prev = examples.get(key);
      if (!prev || ex.stats.calls > prev.stats.calls) examples.set(key, ex);
      add(exampleSums, c.k, ex.stats.calls, tokensOf(ex.stats));
    }
    for (const row of c.rows) {
      const s = row.stages?.paraphrases;
      if (!s || s.calls === 0) continue;
      const key = `${c.n}:${c.seed}:${row.index}`;
      if (s.calls > (paraphrases.get(key)?.calls ?? 0)) paraphrases.set(key, { calls: s.calls, tokens: tokensOf(s) });
      add(paraphraseSums, c.n, s.calls, tokensOf(s));
    }
  }
  return { examples, exampleCallTokens: meanPerCall(exampleSums), paraphrases, paraphraseCallTokens: meanPerCall(paraphraseSums) };
}

/**
 * What point (cell.n, cell.k, r) costs alone for the cell's seed. Calls are exact: r example calls
 * per label with a non-zero share of k, one paraphrase call per row and run when n > 0, and one
 * evaluator call per distinct prompt of each row's first r runs. Tokens: the examples' and
 * paraphrases' measured tokens where they were generated (see CostIndex), paraphrases prorated
 * r/rmax, evaluations (whose shared answers carry their tokens) prorated by the share of prompts.
 * Seconds: those tokens at the sweep's measured throughput (`secondsPerToken`; a job's own time
 * would be lower for the work it shared with earlier jobs, so it would not compare settings fairly).
 */
export function pointCost(task: TaskDefinition, cell: SweepCell, r: number, rMax: number, costs: CostIndex, secondsPerToken: number): SweepCost {
  const done = cell.rows.filter((row) => row.status === 'done');
  const examplesOf = (run: number) => costs.examples.get(`${cell.k}:${cell.seed}:${run}`)?.examples;
  const callsPerRun = exampleCalls(task, cell.k).length;
  const generatorCalls = r * callsPerRun + (cell.n > 0 ? done.length * r : 0);
  let evaluatorCalls = 0;
  let tokens = 0;
  for (let run = 0; run < r; run++) {
    const ex = costs.examples.get(`${cell.k}:${cell.seed}:${run}`);
    tokens += ex && ex.stats.calls >= callsPerRun ? tokensOf(ex.stats) : callsPerRun * (costs.exampleCallTokens.get(cell.k) ?? 0);
  }
  for (const row of done) {
    const counts = evaluationCallCounts(task, row, examplesOf);
    const upTo = counts[Math.min(r, counts.length) - 1] ?? 0;
    const all = counts[counts.length - 1] ?? 0;
    evaluatorCalls += upTo;
    if (all > 0) tokens += (tokensOf(row.stages?.evaluation) * upTo) / all;
    if (cell.n > 0) {
      const p = costs.paraphrases.get(`${cell.n}:${cell.seed}:${row.index}`);
      tokens += p && p.calls >= rMax ? (p.tokens * r) / rMax : r * (costs.paraphraseCallTokens.get(cell.n) ?? 0);
    }
  }
  return { generatorCalls, evaluatorCalls, tokens: Math.round(tokens), seconds: tokens * secondsPerToken };
}

/** Every (n, k, r) point, n-major then k then r, with means and stds over the seeds whose job is done; and what sharing saved. */
export function aggregateSweep(input: SweepAggregateInput): SweepAggregate {
  const { task, grid } = input;
  const rMax = Math.max(...grid.r);
  const cells = new Map(input.cells.map((c) => [`${c.n}:${c.k}:${c.seed}`, c]));
  const costs = costIndex(input.cells);
  const seconds = input.cells.reduce((sum, c) => sum + c.elapsedMs, 0) / 1000;
  const secondsPerToken = input.made.tokens > 0 ? seconds / input.made.tokens : 0;
  let aloneGen = 0;
  let aloneEval = 0;
  const points: PointScores[] = [];
  /** Each point's rows right or wrong, one array per seed of perSeed (sweep-stats.ts). */
  const outcomes: Array<Array<Array<boolean | null>>> = [];
  /** And their gold and votes, for the macro-F1's interval. */
  const labelled: Array<Array<Array<LabelledRow | null>>> = [];
  for (const n of grid.n) {
    for (const k of grid.k) {
      for (const r of grid.r) {
        const perSeed: SweepSeedPoint[] = [];
        const seedOutcomes: Array<Array<boolean | null>> = [];
        const seedLabelled: Array<Array<LabelledRow | null>> = [];
        for (const seed of grid.seeds) {
          const cell = cells.get(`${n}:${k}:${seed}`);
          if (!cell?.done) continue;
          const cost = pointCost(task, cell, r, rMax, costs, secondsPerToken);
          aloneGen += cost.generatorCalls;
          aloneEval += cost.evaluatorCalls;
          const { outcomes: right, labelled: votes, ...score } = scoreUpTo(task, cell.rows, r);
          seedOutcomes.push(right);
          seedLabelled.push(votes);
          perSeed.push({ seed, ...score, cost });
        }
        outcomes.push(seedOutcomes);
        labelled.push(seedLabelled);
        const of = (pick: (p: SweepSeedPoint) => number | null) => meanStd(perSeed.map(pick).filter((v): v is number => v !== null));
        points.push({
          n,
          k,
          r,
          seeds: perSeed.map((p) => p.seed),
          accuracy: of((p) => p.accuracy),
          macroF1: of((p) => p.macroF1),
          lenientAccuracy: of((p) => p.lenientAccuracy),
          calls: of((p) => p.cost.generatorCalls + p.cost.evaluatorCalls) ?? ZERO,
          tokens: of((p) => p.cost.tokens) ?? ZERO,
          seconds: of((p) => p.cost.seconds) ?? ZERO,
          perSeed,
        });
      }
    }
  }
  const saving = (alone: number, made: number): CallSaving => ({ alone, made, saved: alone - made });
  return {
    points: pointsVersusBest(points, outcomes, task.kind === 'math' ? null : { labelled, labels: labelNames(task).length }),
    sharing: { generatorCalls: saving(aloneGen, input.made.generatorCalls), evaluatorCalls: saving(aloneEval, input.made.evaluatorCalls) },
  };
}

const CSV_COLUMNS = [
  'n',
  'k',
  'r',
  'seeds',
  'accuracy_mean',
  'accuracy_std',
  'accuracy_low',
  'accuracy_high',
  'tied_for_best',
  'macro_f1_mean',
  'macro_f1_std',
  'macro_f1_low',
  'macro_f1_high',
  'lenient_accuracy_mean',
  'lenient_accuracy_std',
  'calls_mean',
  'calls_std',
  'tokens_mean',
  'tokens_std',
  'seconds_mean',
  'seconds_std',
] as const;

/** One line per point; empty cells where a metric does not apply. */
export function sweepPointsCsv(points: readonly SweepPoint[]): string {
  const ms = (v: MeanStd | null) => (v ? [String(v.mean), String(v.std)] : ['', '']);
  // The same CSV writer as the job exports (RFC 4180, CRLF, formula escaping).
  let out = toCsv(CSV_COLUMNS);
  for (const p of points) {
    out += toCsv([String(p.n), String(p.k), String(p.r), p.seeds.join(' '), ...ms(p.accuracy), p.accuracyInterval?.low ?? '', p.accuracyInterval?.high ?? '', String(p.tiedForBest), ...ms(p.macroF1), p.macroF1Interval?.low ?? '', p.macroF1Interval?.high ?? '', ...ms(p.lenientAccuracy), ...ms(p.calls), ...ms(p.tokens), ...ms(p.seconds)]);
  }
  return out;
}
