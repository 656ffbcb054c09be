// Simulated data sets with known truths, for the coverage tests (test/unit/common/stats-coverage.test.ts)
// and the racing and coverage benchmark (bench/stats.ts): each draws from a stated population
// with the same seeded generator as the bootstrap, so a figure can be reproduced by its seed.
import { bootstrapTable, confusionF1, tangoInterval, resampleCounts, seededRng, wilson, type Rng } from '../../electron/common/stats';

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
