// Metrics against values computed by hand (the comments show the arithmetic).
import { describe, expect, it } from 'vitest';
import { TaskDefinition } from '../../../electron/common/task';
import type { Prediction } from '../../../electron/common/tatra';
import { computeMetrics, revote } from '../../../electron/jobs';
import type { JobRow } from '../../../electron/jobs';
import { binaryTask as binary } from '../../helpers/tasks';

const three = TaskDefinition.parse({ ...binary, id: 'three', labels: [{ name: 'a' }, { name: 'b' }, { name: 'c' }], defaultLabel: 'a' });
const math = TaskDefinition.parse({ id: 'm', name: 'Math', kind: 'math', instruction: 'Solve.', inputName: 'Problem', topics: ['algebra'], preserve: 'numbers', evaluatorMaxTokens: 64 });

const P = 'positive';
const N = 'negative';

function row(index: number, gold: string | null, runs: Array<Array<string | null>>, extra: Partial<JobRow> = {}): JobRow {
  const runObjs = runs.map((labels, run) => ({
    run,
    seed: 1 + 10000 * run,
    paraphrases: labels.slice(1).map((_, i) => `p${i}`),
    predictions: labels.map((label, variant): Prediction => ({ variant, label, raw: label ?? '???' })),
    fallback: null,
  }));
  const all = runs.flat().filter((l): l is string => l !== null);
  const prediction = extra.prediction !== undefined ? extra.prediction : revote(binary, runObjs);
  const votes: Record<string, number> = {};
  for (const l of all) votes[l] = (votes[l] ?? 0) + 1;
  return {
    index,
    line: index + 2,
    input: `input ${index}`,
    gold,
    goldRaw: gold,
    status: 'done',
    prediction,
    correct: gold === null ? null : prediction === gold,
    lenientCorrect: null,
    confidence: prediction === null ? 0 : (votes[prediction] ?? 0) / all.length,
    votes,
    tieBreak: 'none',
    runs: runObjs,
    baseline: null,
    stages: null,
    ms: 1,
    error: null,
    ...extra,
  };
}

describe('revote (docs/method.md §9, through the engine tally)', () => {
  it('breaks a tie by the first included run original', () => {
    const runs = [
      { predictions: [{ variant: 0, label: P, raw: '' }, { variant: 1, label: P, raw: '' }] },
      { predictions: [{ variant: 0, label: N, raw: '' }, { variant: 1, label: N, raw: '' }] },
    ];
    expect(revote(binary, runs)).toBe(P);
    expect(revote(binary, [runs[1]!])).toBe(N);
    expect(revote(binary, [])).toBeNull();
  });
});

describe('computeMetrics', () => {
  // r = 2, n = 1 (two predictions per run).
  //   A gold P: run0 [P,P] run1 [N,P] -> P 3:1, P (right); run0 alone P (right); run1 alone tie -> its original N (wrong)
  //   B gold N: run0 [P,P] run1 [N,N] -> tie -> first original P (wrong); run0 P (wrong); run1 N (right)
  //   C gold N: run0 [N,N] run1 [N,P] -> N 3:1 (right); run0 N (right); run1 tie -> N (right)
  //   D gold P: run0 [N,N] run1 [P,P] -> tie -> first original N (wrong); run0 N (wrong); run1 P (right)
  //   E pending: ignored.
  const rows = [
    row(0, P, [[P, P], [N, P]]),
    row(1, N, [[P, P], [N, N]]),
    row(2, N, [[N, N], [N, P]]),
    row(3, P, [[N, N], [P, P]]),
    { ...row(4, P, [[P, P], [P, P]]), status: 'pending' as const, prediction: null, confidence: null, runs: null },
  ];
  const m = computeMetrics({ task: binary, r: 2, rowsTotal: 5, rows });

  it('accuracy, per-run accuracy and accuracy after the first j runs', () => {
    expect(m.rowsDone).toBe(4);
    expect(m.evaluated).toBe(4);
    expect(m.correct).toBe(2);
    expect(m.accuracy).toBe(0.5); // A, C
    expect(m.perRunAccuracy).toEqual([0.5, 0.75]); // run0: A, C; run1: B, C, D
    expect(m.accuracyAfterRuns).toEqual([0.5, 0.5]); // first run = run0 alone; both runs = final
  });

  it('per-label precision, recall, F1, macro-F1 and the confusion matrix', () => {
    // negative: gold B,C; predicted C,D; TP C -> P 1/2, R 1/2, F1 1/2. positive: gold A,D; predicted A,B; TP A -> 1/2 each.
    expect(m.labels).toEqual([N, P]);
    expect(m.perLabel).toEqual([
      { label: N, support: 2, predicted: 2, truePositives: 1, precision: 0.5, recall: 0.5, f1: 0.5 },
      { label: P, support: 2, predicted: 2, truePositives: 1, precision: 0.5, recall: 0.5, f1: 0.5 },
    ]);
    expect(m.macroF1).toBe(0.5);
    // rows gold N: [pred N, pred P, none] = [1 (C), 1 (B), 0]; gold P: [1 (D), 1 (A), 0]
    expect(m.confusion).toEqual([
      [1, 1, 0],
      [1, 1, 0],
    ]);
  });

  it('histogram of winning vote shares', () => {
    // A 3/4, B 2/4, C 3/4, D 2/4
    const counts = m.confidenceHistogram.map((b) => b.count);
    expect(counts).toEqual([0, 0, 0, 0, 0, 2, 0, 2, 0, 0]);
    expect(m.confidenceHistogram[9]).toEqual({ from: 0.9, to: 1, count: 0 });
    expect(m.math).toBeNull();
    expect(m.baseline).toBeNull();
  });

  it('all gold one label, a label that never occurs, and a row with no vote', () => {
    // gold all "a"; predictions a, a, b, none.
    const rows3 = [
      row(0, 'a', [], { prediction: 'a', confidence: 1 }),
      row(1, 'a', [], { prediction: 'a', confidence: 1 }),
      row(2, 'a', [], { prediction: 'b', confidence: 0.6 }),
      row(3, 'a', [], { prediction: null, confidence: 0 }),
    ];
    const m3 = computeMetrics({ task: three, r: 1, rowsTotal: 4, rows: rows3 });
    expect(m3.accuracy).toBe(0.5);
    // a: support 4, predicted 2, TP 2 -> P 1, R 1/2, F1 2/3. b: support 0, predicted 1 -> 0, 0, 0. c: never occurs -> 0s.
    expect(m3.perLabel[0]).toMatchObject({ label: 'a', support: 4, predicted: 2, truePositives: 2, precision: 1, recall: 0.5 });
    expect(m3.perLabel[0]!.f1).toBeCloseTo(2 / 3, 12);
    expect(m3.perLabel[1]).toMatchObject({ label: 'b', support: 0, predicted: 1, precision: 0, recall: 0, f1: 0 });
    expect(m3.perLabel[2]).toMatchObject({ label: 'c', support: 0, predicted: 0, precision: 0, recall: 0, f1: 0 });
    // macro over labels present in gold or predictions (a, b): (2/3 + 0) / 2; c is left out.
    expect(m3.macroF1).toBeCloseTo(1 / 3, 12);
    expect(m3.confusion).toEqual([
      [2, 1, 0, 1],
      [0, 0, 0, 0],
      [0, 0, 0, 0],
    ]);
    expect(m3.confidenceHistogram.map((b) => b.count)).toEqual([1, 0, 0, 0, 0, 0, 1, 0, 0, 2]);
  });

  it('rows without gold count as done but not evaluated; nothing evaluated gives null accuracy', () => {
    const m0 = computeMetrics({ task: binary, r: 1, rowsTotal: 2, rows: [row(0, null, [[P]]), row(1, null, [[N]])] });
    expect(m0.rowsDone).toBe(2);
    expect(m0.evaluated).toBe(0);
    expect(m0.accuracy).toBeNull();
    expect(m0.macroF1).toBeNull();
    expect(m0.perRunAccuracy).toEqual([null]);
  });

  it('baseline accuracy and macro-F1 beside TATRA', () => {
    const base = (label: string | null, gold: string) => ({ label, raw: label ?? '', correct: label === gold });
    const rowsB = [
      row(0, P, [[P]], { baseline: base(N, P) }),
      row(1, N, [[N]], { baseline: base(N, N) }),
      row(2, P, [[P]], { baseline: base(N, P) }),
    ];
    const mb = computeMetrics({ task: binary, r: 1, rowsTotal: 3, rows: rowsB });
    expect(mb.accuracy).toBe(1);
    // baseline: always negative -> 1/3 right; negative P 1/3 R 1 F1 1/2; positive P 0 R 0 F1 0 -> macro 1/4
    expect(mb.baseline).toMatchObject({ evaluated: 3, correct: 1, accuracy: 1 / 3, macroF1: 0.25 });
    // TATRA right on all three, the baseline on row 1 only: the paired table on the rows both scored.
    expect(mb.baseline!.versus).toEqual({ both: 1, onlyFirst: 2, onlySecond: 0, neither: 0 });
  });

  it('math: strict accuracy on normalised answers and the lenient gold-in-output score, named apart', () => {
    const rowsM = [
      row(0, '1234', [['1234']], { prediction: '1234', lenientCorrect: true }),
      row(1, '$\\frac{1}{2}$', [['0.5']], { prediction: '0.5', lenientCorrect: false }),
      row(2, '7', [['8']], { prediction: '8', lenientCorrect: true }),
    ];
    const mm = computeMetrics({ task: math, r: 1, rowsTotal: 3, rows: rowsM });
    expect(mm.labels).toEqual([]);
    expect(mm.macroF1).toBeNull();
    expect(mm.correct).toBe(2);
    expect(mm.math).toEqual({ strictAccuracy: 2 / 3, lenientGoldInOutputAccuracy: 2 / 3 });
    expect(mm.perRunAccuracy).toEqual([2 / 3]);
  });
});
