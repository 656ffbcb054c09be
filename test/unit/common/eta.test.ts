// The ETA is given only once the rate of work is stable, and then at the recent rate.
import { describe, expect, it } from 'vitest';
import { EtaEstimator } from '../../../electron/common/eta';

describe('EtaEstimator', () => {
  it('says nothing while the rate still changes, then the time left at the recent rate', () => {
    const eta = new EtaEstimator({ minWindowMs: 1000, windowShare: 0.25, tolerance: 0.2, minUnits: 4 });
    // A resumed job starts at 500; the first units come ever faster (a warming cache).
    eta.observe(500, 0);
    for (const [t, done] of [
      [1000, 501],
      [3000, 503],
      [4000, 507],
      [5000, 515],
    ] as const)
      eta.observe(done, t);
    expect(eta.etaSeconds(100, 5000)).toBeNull();
    // Then a steady 2 units per second.
    let done = 515;
    const seen: (number | null)[] = [];
    for (let t = 5500; t <= 40_000; t += 500) {
      eta.observe(++done, t);
      seen.push(eta.etaSeconds(100, t));
    }
    // Not before the steady rate has lasted two windows; then 100 units at 2/s.
    expect(seen[0]).toBeNull();
    expect(seen.at(-1)).toBeCloseTo(50, 0);
    // Once given it stays given.
    const first = seen.findIndex((s) => s !== null);
    expect(first).toBeGreaterThan(0);
    expect(seen.slice(first).every((s) => s !== null)).toBe(true);
    expect(eta.etaSeconds(0, 40_000)).toBe(0);
  });

  it('a run of bursts with quiet gaps still gets an ETA at the average rate', () => {
    const eta = new EtaEstimator({ minWindowMs: 4000, tolerance: 0.25, minUnits: 8 });
    let done = 0;
    // 8 units land together every 4 s: 2 per second on average.
    for (let t = 4000; t <= 60_000; t += 4000) {
      done += 8;
      eta.observe(done, t);
    }
    const left = eta.etaSeconds(40, 60_000);
    expect(left).not.toBeNull();
    expect(left!).toBeGreaterThan(15);
    expect(left!).toBeLessThan(25);
  });

  it('gives a range, not a point, while the rate is not stable: from the fastest to the slowest rate seen; one point once stable', () => {
    const eta = new EtaEstimator({ minWindowMs: 1000, windowShare: 0.25, tolerance: 0.2, minUnits: 4 });
    eta.observe(0, 0);
    // Ever faster: 1 unit/s, then 4 units/s.
    for (let t = 1000; t <= 6000; t += 1000) eta.observe(t / 1000, t);
    for (let t = 6250, done = 7; t <= 8000; t += 250) eta.observe(done++, t);
    expect(eta.etaSeconds(100, 8000)).toBeNull();
    const range = eta.etaRange(100, 8000)!;
    expect(range).not.toBeNull();
    // Between 100 units at the fastest rate seen (the recent window's 4/s: 25 s) and at the slowest
    // (the window before it, 1/s: 100 s).
    expect(range.min).toBeCloseTo(25, 0);
    expect(range.max).toBeCloseTo(100, 0);
    // A steady 4 units per second: the range closes on the point estimate.
    let done = 14;
    let last = range;
    for (let t = 8250; t <= 60_000; t += 250) {
      eta.observe(++done, t);
      last = eta.etaRange(100, t)!;
    }
    expect(eta.etaSeconds(100, 60_000)).not.toBeNull();
    expect(last.min).toBe(last.max);
    expect(last.min).toBeCloseTo(25, 0);
    // Nothing before minUnits, and nothing left is zero.
    const fresh = new EtaEstimator({ minUnits: 4 });
    fresh.observe(0, 0);
    fresh.observe(2, 1000);
    expect(fresh.etaRange(100, 1000)).toBeNull();
    expect(fresh.etaRange(0, 1000)).toEqual({ min: 0, max: 0 });
  });
});
