// Two results scored on the same rows, compared on the rows both scored (docs/method.md §16): the
// difference in accuracy with a paired interval and an exact two-sided p-value; Holm's correction
// over several comparisons; the pairings not distinguishable from the best ("tied for best").
import binomialCdf from '@stdlib/stats-base-dists-binomial-cdf';
import type { Interval, PairedComparison } from '../contract/interval';
import { bootstrapTable, type BootstrapOptions } from './bootstrap';
import { seedOf } from './random';
import { LEVEL, zFor } from './wilson';

/** Each row's outcome by row index: true right, false wrong, null or absent not scored. */
export type Outcomes = ReadonlyArray<boolean | null | undefined>;

/** The 2×2 table of two results on the rows both scored. */
export interface PairedTable {
  both: number;
  onlyFirst: number;
  onlySecond: number;
  neither: number;
}

export function pairedTable(first: Outcomes, second: Outcomes): PairedTable {
  const t: PairedTable = { both: 0, onlyFirst: 0, onlySecond: 0, neither: 0 };
  const n = Math.min(first.length, second.length);
  for (let i = 0; i < n; i++) {
    const a = first[i];
    const b = second[i];
    if (a === null || a === undefined || b === null || b === undefined) continue;
    if (a && b) t.both++;
    else if (a) t.onlyFirst++;
    else if (b) t.onlySecond++;
    else t.neither++;
  }
  return t;
}

/**
 * Exact two-sided sign test: under no difference each of the `x + y` discordant rows goes either
 * way with probability ½, so p = 2·P(Bin(x + y, ½) ≤ min(x, y)), at most 1. On a 2×2 table's
 * discordant cells this is McNemar's exact test.
 */
export function signTestExact(x: number, y: number): number {
  const m = x + y;
  if (m === 0) return 1;
  return Math.min(1, 2 * binomialCdf(Math.min(x, y), m, 0.5));
}

/**
 * Tango's score interval for a difference of paired proportions (Tango 1998; recommended by
 * Fagerland, Lydersen & Laake 2014): every difference δ whose score statistic
 * Z(δ) = (b − c − nδ) / √(n·(2·p̃ + δ(1 − δ))) stays within ±z, p̃ the maximum-likelihood share of
 * rows where only the second is right given δ, b and c the rows where only the first, only the
 * second is right. It is the paired analogue of Wilson's interval, stays inside [-1, 1], keeps a
 * real width when the two never disagree (where Newcombe's hybrid interval shrinks to a point), and
 * excludes 0 exactly when McNemar's asymptotic test rejects.
 */
export function tangoInterval(t: PairedTable, level = LEVEL): Interval | null {
  const n = t.both + t.onlyFirst + t.onlySecond + t.neither;
  if (n === 0) return null;
  const b = t.onlyFirst;
  const c = t.onlySecond;
  const z = zFor(level);
  const score = (d: number): number => {
    const A = 2 * n;
    const B = -b - c + (2 * n - b + c) * d;
    const C = -c * d * (1 - d);
    const p = (Math.sqrt(Math.max(0, B * B - 4 * A * C)) - B) / (2 * A);
    const variance = n * (2 * p + d * (1 - d));
    const diff = b - c - n * d;
    return variance <= 0 ? (diff === 0 ? 0 : Math.sign(diff) * Infinity) : diff / Math.sqrt(variance);
  };
  // Z falls as δ grows: each bound is where it crosses ±z, found by bisection.
  const cross = (target: number, lo: number, hi: number): number => {
    for (let i = 0; i < 80; i++) {
      const mid = (lo + hi) / 2;
      if (score(mid) > target) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  const estimate = (b - c) / n;
  const low = score(-1) <= z ? -1 : cross(z, -1, estimate);
  const high = score(1) >= -z ? 1 : cross(-z, estimate, 1);
  return { estimate, low, high, method: 'tango', level };
}

/** The paired comparison of a 2×2 table: Tango's interval and McNemar's exact p-value. */
export function compareTable(t: PairedTable, level = LEVEL): PairedComparison | null {
  const difference = tangoInterval(t, level);
  if (!difference) return null;
  return {
    rows: t.both + t.onlyFirst + t.onlySecond + t.neither,
    firstBetter: t.onlyFirst,
    secondBetter: t.onlySecond,
    difference,
    pValue: signTestExact(t.onlyFirst, t.onlySecond),
    test: 'mcnemar-exact',
  };
}

/**
 * Two results given as one or more seeds each (a sweep point's jobs; one seed for a job or a
 * comparison's pair), the same seeds in the same order on both sides, compared on the rows every
 * one of them scored. One seed: McNemar's exact test and Tango's interval. Several: an exact
 * sign test on the rows' means over the seeds (rows are independent; the seeds of one row are
 * not) and a percentile bootstrap of the mean difference over rows and seeds (a row resampled
 * with all its seeds, then the seeds resampled), seeded by `bootstrap.seed`.
 */
export function comparePaired(first: readonly Outcomes[], second: readonly Outcomes[], bootstrap: BootstrapOptions): PairedComparison | null {
  if (first.length !== second.length || first.length === 0) throw new Error('comparePaired: both sides need the same seeds');
  if (first.length === 1) return compareTable(pairedTable(first[0]!, second[0]!), bootstrap.level);
  const seeds = first.length;
  const rows = Math.min(...first.map((o) => o.length), ...second.map((o) => o.length));
  // Each row as a pattern: for every seed, whether each side was right (2 bits a seed).
  const patterns = new Map<number, number>();
  let firstBetter = 0;
  let secondBetter = 0;
  let shared = 0;
  let sum = 0;
  for (let i = 0; i < rows; i++) {
    let code = 0;
    let diff = 0;
    let scored = true;
    for (let s = 0; s < seeds && scored; s++) {
      const a = first[s]![i];
      const b = second[s]![i];
      if (a === null || a === undefined || b === null || b === undefined) scored = false;
      else {
        code = code * 4 + (a ? 2 : 0) + (b ? 1 : 0);
        diff += Number(a) - Number(b);
      }
    }
    if (!scored) continue;
    shared++;
    sum += diff / seeds;
    if (diff > 0) firstBetter++;
    else if (diff < 0) secondBetter++;
    patterns.set(code, (patterns.get(code) ?? 0) + 1);
  }
  if (shared === 0) return null;
  const codes = [...patterns.keys()];
  const counts = codes.map((c) => patterns.get(c)!);
  // Per pattern and seed: +1, 0 or -1 (first right and second wrong, …).
  const delta = codes.map((code) => Array.from({ length: seeds }, (_, s) => {
    const bits = Math.floor(code / 4 ** (seeds - 1 - s)) % 4;
    return (bits >> 1) - (bits & 1);
  }));
  const drawn = new Int32Array(seeds);
  const [difference] = bootstrapTable(
    counts,
    [sum / shared],
    (table, rng, out) => {
      let n = 0;
      for (let p = 0; p < table.length; p++) n += table[p]!;
      for (let s = 0; s < seeds; s++) drawn[s] = rng.int(seeds);
      let total = 0;
      for (let p = 0; p < table.length; p++) {
        if (table[p] === 0) continue;
        let d = 0;
        for (let s = 0; s < seeds; s++) d += delta[p]![drawn[s]!]!;
        total += table[p]! * d;
      }
      out[0] = total / seeds / n;
    },
    bootstrap,
    'bootstrap-paired',
  );
  return { rows: shared, firstBetter, secondBetter, difference: difference!, pValue: signTestExact(firstBetter, secondBetter), test: 'sign-exact' };
}

/** Holm's step-down adjusted p-values (Holm 1979), in the order given. */
export function holm(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0]);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach(([p, i], rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}

export interface Contender {
  key: string;
  /** One entry per seed (one for a job or a pair). */
  outcomes: readonly Outcomes[];
  /** Its accuracy (the mean over seeds for a sweep point); null when nothing is scored. */
  accuracy: number | null;
}

export interface VersusBest {
  key: string;
  /** This contender against the best, first minus best, on the rows both scored; null for the best itself or no shared rows. */
  comparison: PairedComparison | null;
  /** Holm-adjusted over the contenders compared with the best. */
  adjustedP: number | null;
  /** Not distinguishable from the best at the level, after Holm's correction (the best is). */
  tied: boolean;
}

/**
 * The best contender (highest accuracy, the first on a tie) and, for each other, its paired
 * comparison with the best and whether it is distinguishable from it at the level after Holm's
 * correction over the comparisons made: the set not distinguishable is "tied for best", never one
 * winner by a hair. A contender with no rows shared with the best is not tied (nothing says it is).
 */
export function tiedForBest(contenders: readonly Contender[], bootstrap: BootstrapOptions): { best: string | null; versus: VersusBest[] } {
  const level = bootstrap.level ?? LEVEL;
  const scored = contenders.filter((c) => c.accuracy !== null);
  if (scored.length === 0) return { best: null, versus: contenders.map((c) => ({ key: c.key, comparison: null, adjustedP: null, tied: false })) };
  const best = scored.reduce((b, c) => (c.accuracy! > b.accuracy! ? c : b));
  const comparisons = contenders.map((c) => (c === best || c.accuracy === null ? null : comparePaired(c.outcomes, best.outcomes, { ...bootstrap, seed: seedOf(bootstrap.seed, c.key) })));
  const tested = comparisons.flatMap((c, i) => (c ? [i] : []));
  const adjusted = holm(tested.map((i) => comparisons[i]!.pValue));
  const adjustedOf = new Map(tested.map((i, j) => [i, adjusted[j]!]));
  return {
    best: best.key,
    versus: contenders.map((c, i) => {
      const p = adjustedOf.get(i) ?? null;
      return { key: c.key, comparison: comparisons[i] ?? null, adjustedP: p, tied: c === best || (p !== null && p >= 1 - level) };
    }),
  };
}
