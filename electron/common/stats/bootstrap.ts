// The percentile bootstrap (Efron 1979) of statistics that are not proportions: macro-F1 and each
// label's F1, the calibration figures, a sweep point's mean over seeds. Rows are resampled as the
// counts of a table (a confusion matrix's cells, the rows' distinct (confidence, correct) pairs, a
// sweep's row patterns): drawing n rows with replacement and counting them into the table is the
// same as a multinomial draw of the table, and the table is what the statistic reads, so the time
// grows with the cells, not the rows (random.ts resampleCounts).
//
// Written here because no npm package we found does a seeded percentile bootstrap of a table's
// counts with a stopping rule on its Monte Carlo error; stdlib gives the draws.
import type { Interval, IntervalMethod } from '../contract/interval';
import { exactDistribution, exactQuantiles, type CountsStatistic } from './exact';
import { seededRng, tableResampler, type Rng } from './random';
import { LEVEL } from './wilson';

export interface BootstrapOptions {
  /** The same seed gives the same interval (the caller seeds it from the job and the statistic: seedOf). */
  seed: number;
  level?: number;
  /**
   * Resampling stops once each bound's Monte Carlo standard error is at most this: 0.0002 (0.02
   * points), so two seeds' bounds differ by less than 0.1 point, the figure the app rounds to.
   */
  tolerance?: number;
  minResamples?: number;
  maxResamples?: number;
}

export const BOOTSTRAP_TOLERANCE = 0.0002;
export const BOOTSTRAP_MIN = 2000;
export const BOOTSTRAP_MAX = 128_000;

/**
 * Writes one value per statistic into `out` for a resampled table (NaN where a statistic is not
 * defined on it; such a resample is left out of that statistic's percentiles). `rng` is there for
 * statistics that resample more than rows (a sweep point's seeds).
 */
export type TableStatistic = (counts: Float64Array, rng: Rng, out: Float64Array) => void;

/**
 * The k-th smallest of a[0 … n-1] (0-based), by Hoare's selection (Floyd and Rivest's
 * partitioning, expected O(n)): it leaves a[k] in place with nothing larger before it and nothing
 * smaller after it. Where a percentile needs two order statistics, selection finds both in linear
 * time, where a sort of every group at every check cost more than the resamples themselves.
 */
function select(a: Float64Array, n: number, k: number): number {
  let left = 0;
  let right = n - 1;
  while (right > left) {
    const pivot = a[k]!;
    let i = left;
    let j = right;
    swap(a, left, k);
    if (a[right]! > pivot) swap(a, right, left);
    while (i < j) {
      swap(a, i, j);
      i++;
      j--;
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
    }
    if (a[left] === pivot) swap(a, left, j);
    else {
      j++;
      swap(a, j, right);
    }
    if (j <= k) left = j + 1;
    if (k <= j) right = j - 1;
  }
  return a[k]!;
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i]!;
  a[i] = a[j]!;
  a[j] = t;
}

/**
 * The type-7 (linear) percentile of a[0 … n-1], R's and NumPy's default, the same as on the sorted
 * values: order statistics h = ⌊(n − 1)·q⌋ and h + 1 (after selecting h, the smallest of what
 * lies after it). Reorders `a`.
 */
function percentile(a: Float64Array, n: number, q: number): number {
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const low = select(a, n, lo);
  if (lo + 1 >= n || h === lo) return low;
  let next = a[lo + 1]!;
  for (let i = lo + 2; i < n; i++) if (a[i]! < next) next = a[i]!;
  return low + (h - lo) * (next - low);
}

/** Interleaved groups of resamples whose bounds' spread estimates the Monte Carlo error (batch means). */
const GROUPS = 10;

/**
 * Each bound's Monte Carlo standard error by batch means: the bound computed on each of GROUPS
 * interleaved groups of the resamples, their standard deviation over √GROUPS. Unlike an
 * order-statistic estimate it stays honest where the statistic takes few values (small data
 * sets), where the bound sits on one value whatever the seed. `scratch` holds at least ⌈n / GROUPS⌉.
 */
function boundErrors(values: Float64Array, n: number, qs: readonly number[], scratch: Float64Array): number[] {
  const bounds: number[][] = qs.map(() => []);
  for (let g = 0; g < GROUPS; g++) {
    let m = 0;
    for (let i = g; i < n; i += GROUPS) if (!Number.isNaN(values[i]!)) scratch[m++] = values[i]!;
    if (m < 2) continue;
    qs.forEach((q, k) => bounds[k]!.push(percentile(scratch, m, q)));
  }
  return bounds.map((b) => {
    if (b.length < 2) return Infinity;
    const mean = b.reduce((x, y) => x + y, 0) / b.length;
    return Math.sqrt(b.reduce((x, y) => x + (y - mean) ** 2, 0) / (b.length - 1) / b.length);
  });
}

/** The values that are not NaN, copied into `out`; returns how many. */
function finite(values: Float64Array, n: number, out: Float64Array): number {
  let m = 0;
  for (let i = 0; i < n; i++) if (!Number.isNaN(values[i]!)) out[m++] = values[i]!;
  return m;
}

/**
 * Percentile intervals of `estimates.length` statistics of a table of counts, all from the same
 * resamples. An estimate that is null (the statistic is not defined on the data) gets null.
 */
export function bootstrapTable(
  counts: ArrayLike<number>,
  estimates: ReadonlyArray<number | null>,
  statistic: TableStatistic,
  options: BootstrapOptions,
  method: IntervalMethod = 'bootstrap',
): Array<Interval | null> {
  const level = options.level ?? LEVEL;
  const tolerance = options.tolerance ?? BOOTSTRAP_TOLERANCE;
  const most = options.maxResamples ?? BOOTSTRAP_MAX;
  let total = 0;
  for (let i = 0; i < counts.length; i++) total += counts[i]!;
  if (total === 0) return estimates.map(() => null);
  const rng = seededRng(options.seed);
  const resample = tableResampler(counts);
  const k = estimates.length;
  const values = Array.from({ length: k }, () => new Float64Array(most));
  const table = new Float64Array(counts.length);
  const out = new Float64Array(k);
  const qs = [(1 - level) / 2, 1 - (1 - level) / 2] as const;
  const scratch = new Float64Array(most);
  let drawn = 0;
  let target = Math.min(most, options.minResamples ?? BOOTSTRAP_MIN);
  for (;;) {
    for (; drawn < target; drawn++) {
      resample(rng, table);
      statistic(table, rng, out);
      for (let s = 0; s < k; s++) values[s]![drawn] = out[s]!;
    }
    // At the most resamples (a fixed count included) there is nothing left to decide.
    if (drawn >= most || values.every((v, s) => estimates[s] === null || boundErrors(v, drawn, qs, scratch).every((e) => e <= tolerance))) break;
    target = Math.min(most, drawn * 2);
  }
  return estimates.map((estimate, s) => {
    const m = finite(values[s]!, drawn, scratch);
    if (estimate === null || m === 0) return null;
    return { estimate, low: percentile(scratch, m, qs[0]), high: percentile(scratch, m, qs[1]), method, level };
  });
}

/**
 * Percentile intervals of statistics of a table's counts alone (they draw nothing more): the exact
 * bootstrap distribution where the table has at most EXACT_MAX possible resamples (exact.ts), its
 * percentiles those the sampled bootstrap converges to; else bootstrapTable.
 */
export function bootstrapCounts(
  counts: ArrayLike<number>,
  estimates: ReadonlyArray<number | null>,
  statistic: CountsStatistic,
  options: BootstrapOptions,
  method: IntervalMethod = 'bootstrap',
): Array<Interval | null> {
  const exact = exactDistribution(counts, estimates.length, statistic);
  if (!exact) return bootstrapTable(counts, estimates, (t, _rng, out) => statistic(t, out), options, method);
  const level = options.level ?? LEVEL;
  const qs = [(1 - level) / 2, 1 - (1 - level) / 2];
  return estimates.map((estimate, s) => {
    const bounds = estimate === null ? null : exactQuantiles(exact.values[s]!, exact.probability, qs);
    return estimate === null || bounds === null ? null : { estimate, low: bounds[0]!, high: bounds[1]!, method, level };
  });
}

/**
 * Per-label F1 and macro-F1 from a confusion matrix flattened row by row (gold labels as rows,
 * `columns` predicted columns, the first `labels` of them the labels in the same order): F1 =
 * 2·tp / (support + predicted), macro-F1 over the labels present in gold or predictions
 * (docs/method.md §11, as jobs/metrics.ts labelScores). Writes [macro, f1 of each label].
 */
export function confusionF1(cells: ArrayLike<number>, labels: number, columns: number, out: Float64Array): void {
  let sum = 0;
  let present = 0;
  for (let l = 0; l < labels; l++) {
    let support = 0;
    let predicted = 0;
    for (let c = 0; c < columns; c++) support += cells[l * columns + c]!;
    for (let g = 0; g < labels; g++) predicted += cells[g * columns + l]!;
    const tp = cells[l * columns + l]!;
    const f1 = support + predicted === 0 ? 0 : (2 * tp) / (support + predicted);
    out[l + 1] = f1;
    if (support + predicted > 0) {
      sum += f1;
      present++;
    }
  }
  out[0] = present === 0 ? Number.NaN : sum / present;
}

/** Intervals of macro-F1 and of each label's F1, by resampling the confusion matrix's cells (the same as resampling rows; exactly where it is small). */
export function f1Intervals(confusion: ReadonlyArray<readonly number[]>, options: BootstrapOptions): { macroF1: Interval | null; perLabel: Array<Interval | null> } {
  const labels = confusion.length;
  const columns = confusion[0]?.length ?? 0;
  const cells = confusion.flat();
  const estimate = new Float64Array(labels + 1);
  confusionF1(cells, labels, columns, estimate);
  const estimates = [...estimate].map((v) => (Number.isNaN(v) ? null : v));
  const [macroF1, ...perLabel] = bootstrapCounts(cells, estimates, (t, out) => confusionF1(t, labels, columns, out), options);
  return { macroF1: macroF1 ?? null, perLabel };
}
