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
});
