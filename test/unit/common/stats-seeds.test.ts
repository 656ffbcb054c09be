// A sweep point's accuracy over its seeds (docs/method.md §16): the mean over seeds on the rows every
// seed scored, with the percentile bootstrap over rows and seeds; one seed is Wilson's interval.
import { describe, expect, it } from 'vitest';
import { seedsInterval, wilson } from '../../../electron/common/stats';

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
