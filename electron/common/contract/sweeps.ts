// Sensitivity sweeps (docs/method.md §12): one experiment over a grid of n, k and r values and several
// seeds, stored in SQLite as one evaluation job per (n, k, seed) at the largest r. The same shapes
// are the CLI's `tatra sweep --json` output and, under experiments.*, the API's answers.
import { z } from 'zod';
import { CONCURRENCY, INT_SETTINGS, ROW_LIMIT } from '../settings';
import { Budget, Price } from '../plan';
import { CellStatus, ExperimentHead, RaceDrop } from './experiment-progress';
import { Interval, PairedComparison } from './interval';
import { safeRecord } from '../records';

/** A sorted list of distinct whole numbers (the order and repeats on a command line do not matter). */
function valueList(name: string, min: number, max: number, most: number) {
  return z
    .array(z.number().int().min(min, `${name} values must be at least ${min}`).max(max, `${name} values must be at most ${max}`))
    .min(1, `give at least one ${name} value`)
    .transform((xs) => [...new Set(xs)].sort((a, b) => a - b))
    .refine((xs) => xs.length <= most, `at most ${most} ${name} values`);
}

export const SweepGrid = z.object({
  /** Paraphrases per run. */
  n: valueList('n', INT_SETTINGS.n.min, INT_SETTINGS.n.max, 16),
  /** Examples per run. */
  k: valueList('k', INT_SETTINGS.k.min, INT_SETTINGS.k.max, 16),
  /** Runs; the sweep runs the largest once and reads the smaller ones off its first runs. */
  r: valueList('r', INT_SETTINGS.r.min, INT_SETTINGS.r.max, 16),
  seeds: valueList('seed', INT_SETTINGS.seed.min, INT_SETTINGS.seed.max, 16),
});
export type SweepGrid = z.infer<typeof SweepGrid>;

export const SweepStartInput = z.object({
  taskId: z.string().trim().min(1),
  dataPath: z.string().trim().min(1, 'give a file path'),
  inputColumn: z.string().min(1, 'choose the input column'),
  goldColumn: z.string().nullable().default(null),
  labelMap: safeRecord(z.string()).default({}),
  generator: z.string().trim().min(1, 'choose a generator model'),
  evaluator: z.string().trim().min(1, 'choose an evaluator model'),
  grid: SweepGrid,
  /** Only the first N rows of the data set. */
  limit: z.number().int().min(ROW_LIMIT.min).max(ROW_LIMIT.max).optional(),
  /** Rows classified at once within each job. */
  concurrency: z.number().int().min(CONCURRENCY.min).max(CONCURRENCY.maxRemote).optional(),
  name: z.string().max(200).optional(),
  /** Run the rows in rounds and drop an (n, k) setting once it is worse than another at 95 % (docs/method.md §16, racing). */
  race: z.boolean().optional(),
  /** Its jobs together stop before exceeding this (paused, resumable with a larger one). */
  budget: Budget.optional(),
  /** Prices every model (a usd budget); default: remote entries' prices. */
  price: Price.optional(),
});
export type SweepStartInput = z.input<typeof SweepStartInput>;
export type SweepStartSpec = z.output<typeof SweepStartInput>;

export const MeanStd = z.object({
  mean: z.number(),
  /** Population standard deviation over seeds (0 for one seed). */
  std: z.number(),
});
export type MeanStd = z.infer<typeof MeanStd>;

/** What one setting costs when run alone on the sweep's rows. */
export const SweepCost = z.object({
  generatorCalls: z.number().int(),
  evaluatorCalls: z.number().int(),
  /** Prompt + completion tokens. */
  tokens: z.number(),
  seconds: z.number(),
});
export type SweepCost = z.infer<typeof SweepCost>;

/** One (n, k, r) point for one seed. */
export const SweepSeedPoint = z.object({
  seed: z.number().int(),
  /** Rows scored (done, with gold). */
  scored: z.number().int(),
  /** Strict accuracy for math tasks; null when no row has gold. */
  accuracy: z.number().nullable(),
  /** Classification and multiple choice; null for math. */
  macroF1: z.number().nullable(),
  /** Math only: the reference code's "gold string appears in an output" score. */
  lenientAccuracy: z.number().nullable(),
  cost: SweepCost,
});
export type SweepSeedPoint = z.infer<typeof SweepSeedPoint>;

export const SweepPoint = z.object({
  n: z.number().int(),
  k: z.number().int(),
  r: z.number().int(),
  /** Seeds whose job is done (the mean and std are over these). */
  seeds: z.array(z.number().int()),
  accuracy: MeanStd.nullable(),
  macroF1: MeanStd.nullable(),
  lenientAccuracy: MeanStd.nullable(),
  /** Generator + evaluator calls this setting makes alone. */
  calls: MeanStd,
  tokens: MeanStd,
  seconds: MeanStd,
  perSeed: z.array(SweepSeedPoint),
  /**
   * The accuracy's 95 % interval (docs/method.md §16): the mean over seeds on the rows every seed
   * scored, by the percentile bootstrap over rows and seeds (Wilson with one seed).
   */
  accuracyInterval: Interval.nullable().default(null),
  /** The macro-F1's 95 % interval, as the accuracy's (bootstrap over rows and seeds; one seed: over rows); null for math. */
  macroF1Interval: Interval.nullable().default(null),
  /** The point with the highest accuracy: the one every other is compared with. */
  best: z.boolean().default(false),
  /** This point minus the best on the rows both scored (paired bootstrap over rows and seeds, exact sign test); null for the best. */
  versusBest: PairedComparison.nullable().default(null),
  adjustedP: z.number().nullable().default(null),
  /** Not told apart from the best at 95 % after Holm's correction over the points compared ("tied for best"). */
  tiedForBest: z.boolean().default(false),
});
export type SweepPoint = z.infer<typeof SweepPoint>;

export const CallSaving = z.object({
  /** Calls needed to run every (n, k, r, seed) point alone, each with nothing shared. */
  alone: z.number().int(),
  /** Calls the sweep made. */
  made: z.number().int(),
  saved: z.number().int(),
});
export type CallSaving = z.infer<typeof CallSaving>;

export const SweepJob = z.object({
  n: z.number().int(),
  k: z.number().int(),
  seed: z.number().int(),
  jobId: z.string().nullable(),
  status: CellStatus,
  rowsDone: z.number().int(),
  rowsTotal: z.number().int(),
  /** Its (n, k) setting dropped from the race (status `dropped`): after how many rows, and why. */
  dropped: RaceDrop.nullable().default(null),
});
export type SweepJob = z.infer<typeof SweepJob>;

export const SweepSummary = ExperimentHead.extend({
  taskId: z.string(),
  dataPath: z.string(),
  generator: z.string(),
  evaluator: z.string(),
  grid: SweepGrid,
});
export type SweepSummary = z.infer<typeof SweepSummary>;

export const SweepResult = SweepSummary.extend({
  taskKind: z.enum(['classification', 'multiple_choice', 'math']),
  limit: z.number().int().nullable(),
  /** Rows in each job (the data set's rows, up to the limit). */
  rows: z.number().int(),
  jobs: z.array(SweepJob),
  /** One entry per (n, k, r), n-major then k then r. */
  points: z.array(SweepPoint),
  /** How many calls sharing saved against running each (n, k, r, seed) point alone. */
  sharing: z.object({ generatorCalls: CallSaving, evaluatorCalls: CallSaving }),
  /** Every job ran on backends that give the same output for the same request (null before any ran). */
  deterministic: z.boolean().nullable().default(null),
});
export type SweepResult = z.infer<typeof SweepResult>;

/** How a sweep point's intervals are worked out, beside every table that shows them (docs/method.md §16). */
export const SWEEP_INTERVALS_NOTE = '95 % intervals by the percentile bootstrap over rows and seeds (one seed: Wilson for accuracy, over rows for macro-F1)';

/** What "tied for best" means for a sweep's points (docs/method.md §16). */
export const TIED_FOR_BEST_POINT_MEANS = "not told apart from the best point at 95 % (on the rows every seed scored, Holm's correction over the points compared)";
