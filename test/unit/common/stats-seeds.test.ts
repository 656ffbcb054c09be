// A sweep point's accuracy and macro-F1 over its seeds (docs/method.md §16): the mean over seeds on
// the rows every seed scored, with the percentile bootstrap over rows and seeds; one seed is Wilson's
// interval for accuracy and the bootstrap over rows of its confusion matrix for macro-F1.
import { describe, expect, it } from 'vitest';
import { confusionF1, f1Intervals, seedsInterval, seedsMacroF1Interval, wilson, type LabelledRow } from '../../../electron/common/stats';

const rows = (right: number, n: number) => Array.from({ length: n }, (_, i) => i < right);

describe('seedsInterval', () => {
  it('is Wilson with one seed', () => {
    expect(seedsInterval([rows(160, 200)], { seed: 1 })).toEqual(wilson(160, 200));
  });

  it('reads only the rows every seed scored, and has none without them', () => {
    const a = [true, true, null, false];
    const b = [true, false, true, undefined];
    // Rows 0 and 1: 3 of 4 right over the two seeds.
    expect(seedsInterval([a, b], { seed: 1 })!.estimate).toBe(0.75);
    expect(seedsInterval([[null], [true]], { seed: 1 })).toBeNull();
    expect(seedsInterval([], { seed: 1 })).toBeNull();
  });

  it('is the same for the same seed, widens with the spread between seeds, and stays in [0, 1]', () => {
    const same = [rows(160, 200), rows(160, 200), rows(160, 200)];
    const i1 = seedsInterval(same, { seed: 7 })!;
    expect(seedsInterval(same, { seed: 7 })).toEqual(i1);
    expect(i1).toMatchObject({ estimate: 0.8, method: 'bootstrap-rows-seeds', level: 0.95 });
    // Seeds that agree row by row: only the rows vary, so about Wilson's width (±5.5 points at 80 % of 200).
    expect(i1.high - i1.low).toBeGreaterThan(0.09);
    expect(i1.high - i1.low).toBeLessThan(0.13);
    // The same mean from seeds at 70 %, 80 % and 90 %: wider, since the seeds now differ.
    const apart = seedsInterval([rows(140, 200), rows(160, 200), rows(180, 200)], { seed: 7 })!;
    expect(apart.estimate).toBeCloseTo(0.8, 12);
    expect(apart.high - apart.low).toBeGreaterThan(i1.high - i1.low);
    const all = seedsInterval([rows(50, 50), rows(50, 50)], { seed: 7 })!;
    expect([all.low, all.high]).toEqual([1, 1]);
  });
});

/** Two labels: `n` rows, half of each gold label, each seed predicting row i wrong where `wrong(i)` (the last column: no vote where `none(i)`). */
function votes(n: number, wrong: (i: number) => boolean, none: (i: number) => boolean = () => false): LabelledRow[] {
  return Array.from({ length: n }, (_, i) => {
    const gold = i % 2;
    return { gold, predicted: none(i) ? 2 : wrong(i) ? 1 - gold : gold };
  });
}

/** Macro-F1 of rows, as confusionF1 reads a 2-label, 3-column matrix. */
function macroOf(rows: readonly LabelledRow[]): number {
  const cells = new Float64Array(6);
  for (const r of rows) cells[r.gold * 3 + r.predicted]! += 1;
  const out = new Float64Array(3);
  confusionF1(cells, 2, 3, out);
  return out[0]!;
}

describe('seedsMacroF1Interval', () => {
  it('is the bootstrap over rows of the confusion matrix with one seed', () => {
    const one = votes(200, (i) => i % 5 === 0, (i) => i % 37 === 0);
    const confusion = [0, 1].map((g) => [0, 1, 2].map((p) => one.filter((r) => r.gold === g && r.predicted === p).length));
    expect(seedsMacroF1Interval([one], 2, 3, { seed: 3 })).toEqual(f1Intervals(confusion, { seed: 3 }).macroF1);
  });

  it('estimates the mean over seeds of each seed\'s macro-F1 on the rows every seed scored', () => {
    const a = votes(100, (i) => i % 4 === 0);
    const b = votes(100, (i) => i % 10 === 0);
    const i = seedsMacroF1Interval([a, b], 2, 3, { seed: 1 })!;
    expect(i.estimate).toBeCloseTo((macroOf(a) + macroOf(b)) / 2, 12);
    expect(i).toMatchObject({ method: 'bootstrap-rows-seeds', level: 0.95 });
    expect(i.low).toBeLessThan(i.estimate);
    expect(i.high).toBeGreaterThan(i.estimate);
    // A row one seed did not score is left out for every seed.
    const gap: Array<LabelledRow | null> = [...a];
    gap[0] = null;
    expect(seedsMacroF1Interval([gap, b], 2, 3, { seed: 1 })!.estimate).toBeCloseTo((macroOf(a.slice(1)) + macroOf(b.slice(1))) / 2, 12);
    expect(seedsMacroF1Interval([[null], [a[0]!]], 2, 3, { seed: 1 })).toBeNull();
  });

  it('is the same for the same seed and widens with the spread between seeds', () => {
    const agree = [votes(200, (i) => i % 5 === 0), votes(200, (i) => i % 5 === 0)];
    const i1 = seedsMacroF1Interval(agree, 2, 3, { seed: 7 })!;
    expect(seedsMacroF1Interval(agree, 2, 3, { seed: 7 })).toEqual(i1);
    // Seeds that agree row by row: only the rows vary, about as wide as one seed's interval.
    const alone = seedsMacroF1Interval([agree[0]!], 2, 3, { seed: 7 })!;
    expect(Math.abs(i1.high - i1.low - (alone.high - alone.low))).toBeLessThan(0.02);
    const apart = seedsMacroF1Interval([votes(200, (i) => i % 3 === 0), votes(200, (i) => i % 5 === 0), votes(200, (i) => i % 20 === 0)], 2, 3, { seed: 7 })!;
    expect(apart.high - apart.low).toBeGreaterThan(i1.high - i1.low);
    const all = seedsMacroF1Interval([votes(50, () => false), votes(50, () => false)], 2, 3, { seed: 7 })!;
    expect([all.low, all.estimate, all.high]).toEqual([1, 1, 1]);
  });
});
