// The bootstrap's draws and its exact form on small tables (docs/method.md §16): a small table's
// rows drawn several to a generator word follow the multinomial, the enumerated bootstrap
// distribution is the multinomial's, and its percentiles are what many sampled resamples give.
import { describe, expect, it } from 'vitest';
import { bootstrapCounts, bootstrapTable, confusionF1, f1Intervals, seededRng } from '../../../electron/common/stats';
import { exactDistribution, possibleTables } from '../../../electron/common/stats/exact';
import { tableResampler } from '../../../electron/common/stats/random';

/** Total variation distance between the draws of cell `cell` and Bin(total, share). */
function distanceFromBinomial(counts: number[], cell: number, draws: number, seed: number): number {
  const total = counts.reduce((a, b) => a + b, 0);
  const share = counts[cell]! / total;
  const resample = tableResampler(counts);
  const rng = seededRng(seed);
  const out = new Float64Array(counts.length);
  const seen = new Float64Array(total + 1);
  for (let i = 0; i < draws; i++) {
    resample(rng, out);
    expect(out.reduce((a, b) => a + b, 0)).toBe(total);
    seen[out[cell]!]!++;
  }
  let pmf = (1 - share) ** total;
  let distance = 0;
  for (let k = 0; k <= total; k++) {
    distance += Math.abs(seen[k]! / draws - pmf) / 2;
    pmf *= ((total - k) / (k + 1)) * (share / (1 - share));
  }
  return distance;
}

describe('rows drawn one by one, several to a word', () => {
  it('give each cell its binomial count (4 rows a word at 10 rows, 3 at 120, 2 at 1,000)', () => {
    // Sampling alone leaves about 0.005 of total variation at 100,000 draws, 0.01 at 20,000.
    expect(distanceFromBinomial([5, 3, 2], 2, 100_000, 1)).toBeLessThan(0.01);
    expect(distanceFromBinomial([40, 30, 20, 17, 13], 4, 50_000, 2)).toBeLessThan(0.012);
    expect(distanceFromBinomial(Array.from({ length: 100 }, (_, i) => (i === 0 ? 10 : i % 10) + 1), 0, 50_000, 3)).toBeLessThan(0.015);
  });
});

describe('the exact bootstrap of a small table', () => {
  it('counts the possible tables and gives each its multinomial probability', () => {
    expect(possibleTables(8, 4)).toBe(165);
    expect(possibleTables(200, 12)).toBe(Infinity);
    const counts = [3, 1, 0, 4];
    const exact = exactDistribution(counts, 3, (t, out) => {
      out[0] = t[0]!;
      out[1] = t[2]!;
      out[2] = t[3]!;
    })!;
    expect(exact.probability.length).toBe(possibleTables(8, 3));
    const sum = (f: (i: number) => number) => exact.probability.reduce((a, p, i) => a + p * f(i), 0);
    expect(sum(() => 1)).toBeCloseTo(1, 12);
    // Cell means n·p, an empty cell stays empty, and a cell's variance n·p·(1 − p).
    expect(sum((i) => exact.values[0]![i]!)).toBeCloseTo(3, 12);
    expect(sum((i) => exact.values[1]![i]!)).toBe(0);
    expect(sum((i) => (exact.values[2]![i]! - 4) ** 2)).toBeCloseTo(8 * 0.5 * 0.5, 12);
  });

  it('has the percentiles that many sampled resamples converge to, the same for every seed', () => {
    const confusion = [
      [10, 2, 0],
      [3, 12, 3],
    ];
    const cells = confusion.flat();
    const estimate = new Float64Array(3);
    confusionF1(cells, 2, 3, estimate);
    const exact = f1Intervals(confusion, { seed: 1 });
    expect(f1Intervals(confusion, { seed: 2 })).toEqual(exact);
    const [sampled] = bootstrapTable(cells, [estimate[0]!], (t, _rng, out) => confusionF1(t, 2, 3, out), { seed: 1, minResamples: 400_000, maxResamples: 400_000 });
    // Macro-F1 on 30 rows takes values a few tenths of a point apart: 400,000 resamples put each
    // bound on the value the exact distribution gives, or between it and its neighbour.
    expect(Math.abs(sampled!.low - exact.macroF1!.low)).toBeLessThan(0.004);
    expect(Math.abs(sampled!.high - exact.macroF1!.high)).toBeLessThan(0.004);
    expect(exact.macroF1!.low).toBeLessThan(exact.macroF1!.estimate);
    expect(exact.macroF1!.high).toBeGreaterThan(exact.macroF1!.estimate);
  });

  it('gives a small job bounds that do not move with the seed (128,000 sampled resamples moved the high one 0.27 point between seeds 1 and 2)', () => {
    const confusion = [
      [10, 2, 0],
      [3, 12, 3],
    ];
    for (const seed of [2, 3, 4]) {
      const a = f1Intervals(confusion, { seed: 1 }).macroF1!;
      const b = f1Intervals(confusion, { seed }).macroF1!;
      expect(Math.abs(a.low - b.low)).toBeLessThan(0.001);
      expect(Math.abs(a.high - b.high)).toBeLessThan(0.001);
    }
  });

  it('leaves out tables where a statistic is undefined, as the sampled bootstrap leaves out resamples', () => {
    // A statistic defined only where the first cell is drawn: its distribution given that.
    const [i] = bootstrapCounts([1, 1], [1], (t, out) => (out[0] = t[0]! === 0 ? Number.NaN : t[0]!), { seed: 1 });
    // Given cell 0 is drawn from 2 rows at ½: 1 with probability 2/3, 2 with 1/3.
    expect(i).toMatchObject({ low: 1, high: 2 });
    expect(bootstrapCounts([0, 0], [null], () => undefined, { seed: 1 })).toEqual([null]);
  });
});
