// Simulated data sets with known truths, for the coverage tests (test/unit/common/stats-coverage.test.ts)
// and the racing and coverage benchmark (bench/stats.ts): each draws from a stated population
// with the same seeded generator as the bootstrap, so a figure can be reproduced by its seed.
import { bootstrapTable, confusionF1, seedsMacroF1Interval, tangoInterval, resampleCounts, seededRng, wilson, type LabelledRow, type Rng } from '../../electron/common/stats';

export interface Coverage {
  /** Data sets simulated. */
  sets: number;
  /** Share of them whose interval held the truth. */
  coverage: number;
  /** Mean width of the intervals. */
  width: number;
}

function tally(hits: number, widths: number, sets: number): Coverage {
  return { sets, coverage: hits / sets, width: widths / sets };
}

/** Draws n rows from the cell probabilities (a multinomial, as the bootstrap resamples). */
function drawTable(probabilities: readonly number[], n: number, rng: Rng): Float64Array {
  const out = new Float64Array(probabilities.length);
  resampleCounts(probabilities.map((p) => p * n), n, rng, out);
  return out;
}

/** Wilson intervals of an accuracy p over n rows. */
export function accuracyCoverage(p: number, n: number, sets: number, seed: number): Coverage {
  const rng = seededRng(seed);
  let hits = 0;
  let widths = 0;
  for (let s = 0; s < sets; s++) {
    const i = wilson(rng.binomial(n, p), n)!;
    if (i.low <= p && p <= i.high) hits++;
    widths += i.high - i.low;
  }
  return tally(hits, widths, sets);
}

/** A population of (gold, predicted) cells: `labels` gold rows × `labels` + 1 predicted columns (the last: no vote). */
export interface ConfusionPopulation {
  labels: number;
  /** Cell probabilities, row by row, summing to 1. */
  cells: number[];
}

/** Three labels at shares 50/30/20 %, each right with its own probability, a little no vote. */
export function threeLabels(): ConfusionPopulation {
  const shares = [0.5, 0.3, 0.2];
  const right = [0.9, 0.8, 0.7];
  const cells: number[] = [];
  shares.forEach((share, g) => {
    const wrong = 1 - right[g]! - 0.02;
    for (let c = 0; c < 4; c++) cells.push(share * (c === g ? right[g]! : c === 3 ? 0.02 : wrong / 2));
  });
  return { labels: 3, cells };
}

export function trueMacroF1(pop: ConfusionPopulation): number {
  const out = new Float64Array(pop.labels + 1);
  confusionF1(pop.cells, pop.labels, pop.labels + 1, out);
  return out[0]!;
}

/** Percentile bootstrap intervals of macro-F1 (a fixed number of resamples: coverage is the method's, not the Monte Carlo's). */
export function macroF1Coverage(pop: ConfusionPopulation, n: number, sets: number, seed: number, resamples = 1000): Coverage {
  const rng = seededRng(seed);
  const truth = trueMacroF1(pop);
  const columns = pop.labels + 1;
  const est = new Float64Array(pop.labels + 1);
  let hits = 0;
  let widths = 0;
  for (let s = 0; s < sets; s++) {
    const table = drawTable(pop.cells, n, rng);
    confusionF1(table, pop.labels, columns, est);
    const [i] = bootstrapTable(table, [est[0]!], (t, _r, out) => confusionF1(t, pop.labels, columns, out), { seed: seed + s + 1, minResamples: resamples, maxResamples: resamples });
    if (i && i.low <= truth && truth <= i.high) hits++;
    if (i) widths += i.high - i.low;
  }
  return tally(hits, widths, sets);
}

/**
 * A simulated sweep point for the macro-F1 over rows and seeds (docs/method.md §16): three labels
 * at 50/30/20 %, rows 75 % easy (each seed right at 90 %) and 25 % hard (right at 50 %); a seed
 * that is wrong votes for one of the two other labels, or none in 2 % of rows. Each seed redraws
 * every row's vote; with `seedEffect` (a standard deviation) each seed also shifts both
 * probabilities of being right by its own normal draw.
 */
export interface SweepPopulation {
  seeds: number;
  seedEffect: number;
}

const SWEEP_SHARES = [0.5, 0.3, 0.2];
const EASY = 0.75;
const NO_VOTE = 0.02;

/** The confusion matrix's cell probabilities of one seed whose probabilities of being right are shifted by `shift`. */
function sweepCells(shift: number): number[] {
  const right = Math.min(1 - NO_VOTE, Math.max(0, EASY * (0.9 + shift) + (1 - EASY) * (0.5 + shift)));
  const cells: number[] = [];
  SWEEP_SHARES.forEach((share, g) => {
    for (let c = 0; c < 4; c++) cells.push(share * (c === g ? right : c === 3 ? NO_VOTE : (1 - right - NO_VOTE) / 2));
  });
  return cells;
}

/** Φ⁻¹ by bisection on erf's complement (a truth needs it once per point). */
function normalQuantile(p: number): number {
  let lo = -10;
  let hi = 10;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (normalCdf(mid) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Φ by Abramowitz and Stegun 7.1.26 (error below 1.5e-7). */
function normalCdf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x / Math.SQRT2));
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-(x * x) / 2);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** The truth: the expected macro-F1 of a seed over the population, averaged over the seed effect (the midpoints of 400 equal-probability bins). */
export function sweepTruth(pop: SweepPopulation): number {
  const out = new Float64Array(4);
  if (pop.seedEffect === 0) {
    confusionF1(sweepCells(0), 3, 4, out);
    return out[0]!;
  }
  const bins = 400;
  let sum = 0;
  for (let b = 0; b < bins; b++) {
    confusionF1(sweepCells(pop.seedEffect * normalQuantile((b + 0.5) / bins)), 3, 4, out);
    sum += out[0]!;
  }
  return sum / bins;
}

/** Box–Muller: a standard normal draw. */
function normalDraw(rng: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - rng.uniform())) * Math.cos(2 * Math.PI * rng.uniform());
}

/** One simulated sweep point: each seed's (gold, predicted) on each of n rows. */
export function simulateSweepPoint(pop: SweepPopulation, n: number, rng: Rng): LabelledRow[][] {
  const shifts = Array.from({ length: pop.seeds }, () => pop.seedEffect * normalDraw(rng));
  const seeds: LabelledRow[][] = shifts.map(() => []);
  for (let i = 0; i < n; i++) {
    const u = rng.uniform();
    const gold = u < SWEEP_SHARES[0]! ? 0 : u < SWEEP_SHARES[0]! + SWEEP_SHARES[1]! ? 1 : 2;
    const base = rng.uniform() < EASY ? 0.9 : 0.5;
    shifts.forEach((shift, s) => {
      const right = Math.min(1 - NO_VOTE, Math.max(0, base + shift));
      const v = rng.uniform();
      const predicted = v < right ? gold : v < right + NO_VOTE ? 3 : (gold + (v < right + NO_VOTE + (1 - right - NO_VOTE) / 2 ? 1 : 2)) % 3;
      seeds[s]!.push({ gold, predicted });
    });
  }
  return seeds;
}

/** seedsMacroF1Interval over simulated sweep points, at a sweep's own resamples (2,000: experiments/sweep-stats.ts). */
export function sweepMacroF1Coverage(pop: SweepPopulation, n: number, sets: number, seed: number, resamples = 2000): Coverage {
  const rng = seededRng(seed);
  const truth = sweepTruth(pop);
  let hits = 0;
  let widths = 0;
  for (let s = 0; s < sets; s++) {
    const i = seedsMacroF1Interval(simulateSweepPoint(pop, n, rng), 3, 4, { seed: seed + s + 1, minResamples: resamples, maxResamples: resamples });
    if (i && i.low <= truth && truth <= i.high) hits++;
    if (i) widths += i.high - i.low;
  }
  return tally(hits, widths, sets);
}

/** Two pairings' (both right, only first, only second, neither) probabilities; the truth is only first − only second. */
export function pairedCoverage(cells: readonly [number, number, number, number], n: number, sets: number, seed: number): Coverage {
  const rng = seededRng(seed);
  const truth = cells[1] - cells[2];
  let hits = 0;
  let widths = 0;
  for (let s = 0; s < sets; s++) {
    const t = drawTable(cells, n, rng);
    const i = tangoInterval({ both: t[0]!, onlyFirst: t[1]!, onlySecond: t[2]!, neither: t[3]! })!;
    if (i.low <= truth && truth <= i.high) hits++;
    widths += i.high - i.low;
  }
  return tally(hits, widths, sets);
}

/**
 * One simulated comparison for racing: each pairing's outcome on each row, with marginal accuracy
 * exactly its own. Independent: every pairing draws its own uniform per row. Correlated (rows hard
 * for all): with probability `shared` a row uses one uniform for every pairing, so a hard row is
 * wrong for all of them at once and the pairings disagree far less.
 */
export function simulateComparison(accuracies: readonly number[], rows: number, rng: Rng, shared = 0): number[][] {
  const out = accuracies.map(() => new Array<number>(rows));
  for (let t = 0; t < rows; t++) {
    const common = rng.uniform();
    const isShared = rng.uniform() < shared;
    accuracies.forEach((p, i) => {
      out[i]![t] = (isShared ? common : rng.uniform()) < p ? 1 : 0;
    });
  }
  return out;
}
