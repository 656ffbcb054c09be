// The Sweep view's chart data: accuracy against one axis, one line per value of another, the
// third held (at the grid's largest value unless given), with each point's 95 % interval as an
// error bar (docs/method.md §16).
import { describe, expect, it } from 'vitest';
import type { SweepPoint } from '../../../electron/common/contract/sweeps';
import { sweepSeries } from '../../../renderer/src/components/SweepCharts';
import { parseList } from '../../../renderer/src/views/experiment/sweep';
import { compactCount } from '../../../renderer/src/components/labels';

/** A point whose interval reaches `half` either side of its mean, held to [0, 1]. */
function point(n: number, k: number, r: number, mean: number | null, half = 0): SweepPoint {
  const zero = { mean: 0, std: 0 };
  const accuracyInterval = mean === null ? null : { estimate: mean, low: Math.max(0, mean - half), high: Math.min(1, mean + half), method: 'bootstrap-rows-seeds' as const, level: 0.95 };
  return { n, k, r, seeds: [1, 2], accuracy: mean === null ? null : { mean, std: 0 }, macroF1: null, lenientAccuracy: null, calls: zero, tokens: zero, seconds: zero, perSeed: [], accuracyInterval, macroF1Interval: null, best: false, versusBest: null, adjustedP: null, tiedForBest: false };
}

const points: SweepPoint[] = [];
for (const n of [0, 2]) for (const k of [4, 8]) for (const r of [1, 3]) points.push(point(n, k, r, (n + k + r) / 20, 0.05));

describe('sweepSeries', () => {
  it('accuracy against n, one line per k, at the largest r by default', () => {
    const s = sweepSeries(points, 'n', 'k', {});
    expect(s.lines).toEqual([4, 8]);
    expect(s.rows.map((r) => r.x)).toEqual([0, 2]);
    // n=2, k=8, r=3: 13/20.
    expect(s.rows[1]!.m8).toBeCloseTo(0.65, 12);
    expect(s.rows[1]!.b8).toEqual([expect.closeTo(0.6, 12), expect.closeTo(0.7, 12)]);
    expect(s.rows[1]!.e8).toEqual([expect.closeTo(0.05, 12), expect.closeTo(0.05, 12)]);
  });

  it('by default holds the third axis at its largest value with results yet', () => {
    const partial = points.map((p) => (p.k === 8 ? { ...p, accuracy: null } : p));
    expect(sweepSeries(partial, 'r', 'n', {})).toMatchObject({ held: 'k', heldValue: 4 });
    expect(sweepSeries(points, 'r', 'n', {})).toMatchObject({ held: 'k', heldValue: 8 });
  });

  it('holds the third axis where told', () => {
    const s = sweepSeries(points, 'r', 'n', { k: 4 });
    expect(s.rows.map((r) => r.x)).toEqual([1, 3]);
    expect(s.rows[0]!.m0).toBeCloseTo(5 / 20, 12);
  });

  it('draws the interval as it is, lopsided at the ends, and leaves gaps where a point has no accuracy yet', () => {
    const s = sweepSeries([point(0, 4, 1, 0.98, 0.1), point(1, 4, 1, null), point(0, 8, 1, 0.02, 0.1)], 'n', 'k', {});
    expect(s.rows).toHaveLength(1);
    expect(s.rows[0]!.b4).toEqual([expect.closeTo(0.88, 12), 1]);
    expect(s.rows[0]!.b8).toEqual([0, expect.closeTo(0.12, 12)]);
    expect(s.rows[0]!.e4).toEqual([expect.closeTo(0.1, 12), expect.closeTo(0.02, 12)]);
    expect(s.rows[0]!.e8).toEqual([expect.closeTo(0.02, 12), expect.closeTo(0.1, 12)]);
  });
});

describe('parseList', () => {
  it('reads comma-separated whole numbers and refuses anything else', () => {
    expect(parseList('0, 2,5')).toEqual([0, 2, 5]);
    expect(parseList('1,,3')).toBeNull();
    expect(parseList('1.5')).toBeNull();
    expect(parseList('-1')).toBeNull();
  });
});

describe('compactCount (the cost chart\'s token ticks)', () => {
  it('tells ticks between whole thousands apart', () => {
    expect([0, 700, 1000, 1050, 1400, 9960, 12_345].map(compactCount)).toEqual(['0', '700', '1k', '1.1k', '1.4k', '10k', '12k']);
  });
});
