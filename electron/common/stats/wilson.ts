// The Wilson score interval of a proportion (Wilson 1927): the accuracy, precision and recall the
// app shows. Unlike the normal approximation it stays inside [0, 1] and keeps its coverage near 0 % and 100 %.
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import type { Interval } from '../contract/interval';

export const LEVEL = 0.95;

/** The two-sided normal quantile for a level: 1.96 at 95 %. */
export function zFor(level: number): number {
  return normalQuantile(1 - (1 - level) / 2, 0, 1);
}

/** `successes` of `n`; null for no trials. */
export function wilson(successes: number, n: number, level = LEVEL): Interval | null {
  if (n <= 0) return null;
  const z = zFor(level);
  const p = successes / n;
  const z2n = (z * z) / n;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n));
  // At 0 or n successes the bound on that side is the estimate itself; rounding must not cross it.
  return { estimate: p, low: successes === 0 ? 0 : Math.max(0, centre - half), high: successes === n ? 1 : Math.min(1, centre + half), method: 'wilson', level };
}
