// Seeded randomness for the bootstrap and the simulations: stdlib's 32-bit Mersenne Twister, so the
// same seed gives the same draws on every machine and in every process, and binomial draws on it.
import mt19937 from '@stdlib/random-base-mt19937';

export interface Rng {
  /** Uniform on [0, 1). */
  uniform(): number;
  /** Uniform integer on 0 … n-1. */
  int(n: number): number;
  /** Binomial(n, p). */
  binomial(n: number, p: number): number;
  /** The generator's next 32-bit word, as an unsigned integer. */
  word(): number;
}

const TWO_32 = 4294967296;

/** A generator for a seed (any 32-bit integer; 0 is taken as 1, which stdlib's twister needs at least). */
export function seededRng(seed: number): Rng {
  const next = mt19937.factory({ seed: seed >>> 0 || 1 });
  const uniform = () => next() / TWO_32;
  return {
    uniform,
    int: (n) => Math.floor(uniform() * n),
    binomial: (n, p) => binomialDraw(uniform, n, p),
    word: next,
  };
}

// Binomial draws, written here because the npm sampler we tried (stdlib's random-base-binomial
// 0.2.2) is biased: at n = 30, p = 0.4 its draws averaged 12.52 for 12 and varied 6.3 for 7.2, which
// took a bootstrap's macro-F1 intervals down to 92 % coverage. Inversion where n·p is small, else
// Hörmann's BTRS (1993, "The generation of binomial random variates"), as TensorFlow draws them;
// test/unit/common/stats.test.ts checks both against the exact distribution.

function binomialDraw(uniform: () => number, n: number, p: number): number {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomialDraw(uniform, n, 1 - p);
  return n * p < 10 ? binomialInversion(uniform, n, p) : binomialBtrs(uniform, n, p);
}

/** Walks the distribution from 0 (expected steps n·p + 1). */
function binomialInversion(uniform: () => number, n: number, p: number): number {
  const q = 1 - p;
  const s = p / q;
  const a = (n + 1) * s;
  for (;;) {
    let r = q ** n;
    let u = uniform();
    let x = 0;
    while (u > r) {
      u -= r;
      x++;
      if (x > n) break;
      r *= a / x - s;
    }
    if (x <= n) return x;
  }
}

/** Transformed rejection with squeeze, for n·p ≥ 10 and p ≤ ½. */
function binomialBtrs(uniform: () => number, n: number, p: number): number {
  const q = 1 - p;
  const spq = Math.sqrt(n * p * q);
  const b = 1.15 + 2.53 * spq;
  const a = -0.0873 + 0.0248 * b + 0.01 * p;
  const c = n * p + 0.5;
  const vr = 0.92 - 4.2 / b;
  const alpha = (2.83 + 5.1 / b) * spq;
  const lpq = Math.log(p / q);
  const m = Math.floor((n + 1) * p);
  const h = logFactorial(m) + logFactorial(n - m);
  for (;;) {
    const u = uniform() - 0.5;
    let v = uniform();
    const us = 0.5 - Math.abs(u);
    const k = Math.floor((2 * a / us + b) * u + c);
    if (k < 0 || k > n) continue;
    if (us >= 0.07 && v <= vr) return k;
    v = Math.log((v * alpha) / (a / (us * us) + b));
    if (v <= h - logFactorial(k) - logFactorial(n - k) + (k - m) * lpq) return k;
  }
}

const LOG_FACTORIALS: number[] = [0];
for (let k = 1; k < 256; k++) LOG_FACTORIALS.push(LOG_FACTORIALS[k - 1]! + Math.log(k));

/** ln k!: a table below 256, Stirling's series above (error far below 1e-12 there). */
export function logFactorial(k: number): number {
  if (k < 256) return LOG_FACTORIALS[k]!;
  const x = k + 1;
  return (x - 0.5) * Math.log(x) - x + 0.5 * Math.log(2 * Math.PI) + 1 / (12 * x) - 1 / (360 * x ** 3) + 1 / (1260 * x ** 5);
}

/**
 * A 32-bit seed from strings and numbers (FNV-1a), so an interval is seeded from what it belongs
 * to (a job's id and the statistic's name) and the same job always shows the same interval.
 */
export function seedOf(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const s = `${String(part)}\u0000`;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
  }
  return h >>> 0 || 1;
}

/**
 * Resamples a table of counts as a multinomial with the table's own proportions, the same as
 * drawing its total of rows with replacement, one cell after another by conditional binomials: the
 * time grows with the cells, not the rows. Writes into `out` (as long as `counts`).
 */
export function resampleCounts(counts: ArrayLike<number>, total: number, rng: Rng, out: Float64Array): void {
  let left = total;
  let mass = total;
  for (let i = 0; i < counts.length; i++) {
    const c = counts[i]!;
    if (left === 0 || c === 0) {
      out[i] = 0;
    } else if (c >= mass) {
      out[i] = left;
      left = 0;
    } else {
      const x = rng.binomial(left, c / mass);
      out[i] = x;
      left -= x;
    }
    mass -= c;
  }
}

/** Rows at or below this many per non-empty cell are resampled one by one: cheaper than a binomial per cell there (measured: even at about 17 a cell). */
const ROWS_PER_CELL_DRAWN_ONE_BY_ONE = 16;

/**
 * A resampler for a table of whole counts: as resampleCounts, but a small table (a few rows per
 * cell) is resampled by drawing its rows one by one, which is cheaper there than a binomial per
 * cell. Both draw the same distribution.
 */
export function tableResampler(counts: ArrayLike<number>): (rng: Rng, out: Float64Array) => void {
  let total = 0;
  let cells = 0;
  for (let i = 0; i < counts.length; i++) {
    total += counts[i]!;
    if (counts[i]! > 0) cells++;
  }
  if (total > ROWS_PER_CELL_DRAWN_ONE_BY_ONE * cells || !Number.isInteger(total)) return (rng, out) => resampleCounts(counts, total, rng, out);
  const cellOfRow = new Int32Array(total);
  for (let i = 0, r = 0; i < counts.length; i++) for (let c = 0; c < counts[i]!; c++) cellOfRow[r++] = i;
  return rowDrawer(total, cellOfRow);
}

/**
 * Draws `total` rows with replacement, uniform on 0 … total − 1, and counts each into its cell
 * (`cellOfRow`) of `out`. Several draws come
 * from each 32-bit word of the generator (b bits apiece, 3 more than the rows need, so at most one
 * draw in 8 is rejected), each made exactly uniform by Lemire's rejection (2019, "Fast random
 * integer generation in an interval"): x of b bits, m = x·total, rejected where m mod 2^b < 2^b mod
 * total, else the row is ⌊m / 2^b⌋ (m < 2^29 where two or more draws fit in a word). The twister, not the counting, was most of a small table's
 * bootstrap: this draws a row at a third of the words at 120 rows.
 */
function rowDrawer(total: number, cellOfRow: Int32Array): (rng: Rng, out: Float64Array) => void {
  const b = 32 - Math.clz32(Math.max(1, total - 1)) + 3;
  const perWord = Math.floor(32 / b);
  if (perWord < 2) {
    return (rng, out) => {
      out.fill(0);
      for (let r = 0; r < total; r++) out[cellOfRow[rng.int(total)]!]!++;
    };
  }
  const mask = 2 ** b - 1;
  const reject = (mask + 1) % total;
  return (rng, out) => {
    out.fill(0);
    let r = 0;
    while (r < total) {
      let w = rng.word();
      for (let k = 0; k < perWord && r < total; k++, w >>>= b) {
        const m = (w & mask) * total;
        if ((m & mask) < reject) continue;
        out[cellOfRow[m >>> b]!]!++;
        r++;
      }
    }
  };
}
