// Comparisons of models: one experiment over a generator × evaluator grid on one
// data set, one evaluation job per pair, run generator-major so each generator's work is done once.
// The same shapes are `tatra compare --json`'s output and, under experiments.*, the API's answers.
import { z } from 'zod';
import { Budget, Price } from '../plan';
import { CONCURRENCY, CONTEXT_SIZE, ROW_LIMIT } from '../settings';
import { TatraSettings } from '../tatra';
import { safeRecord } from '../records';
import { CellStatus, ExperimentHead, RaceDrop } from './experiment-progress';
import { Interval, PairedComparison, pValueText, pointsText } from './interval';

export const ComparisonSpec = z.object({
  /** Task id or path of a task file. */
  taskId: z.string().min(1),
  /** Path of the CSV/TSV/JSONL data set. */
  dataPath: z.string().min(1),
  generators: z.array(z.string().min(1)).min(1).max(8),
  evaluators: z.array(z.string().min(1)).min(1).max(8),
  settings: TatraSettings,
  limit: z.number().int().min(ROW_LIMIT.min).max(ROW_LIMIT.max).optional(),
  /** The column holding the input; default: guessed from the data set. */
  inputColumn: z.string().optional(),
  /** The column holding the gold label; default: guessed. */
  goldColumn: z.string().optional(),
  /** gold value → task label. */
  labelMap: safeRecord(z.string()).optional(),
  /** Tokens per sequence the fit estimate assumes (the CLI's --context-size, which its loads use too). */
  contextSize: z.number().int().min(CONTEXT_SIZE.min).max(CONTEXT_SIZE.max).optional(),
  /** Rows classified at once within each pair's job (default 4). */
  concurrency: z.number().int().min(CONCURRENCY.min).max(CONCURRENCY.maxRemote).optional(),
  /** Run the rows in rounds and drop a pair once it is worse than another at 95 % (docs/method.md §16, racing). */
  race: z.boolean().optional(),
});
export type ComparisonSpec = z.infer<typeof ComparisonSpec>;
export type ComparisonSpecInput = z.input<typeof ComparisonSpec>;

/** What starting a comparison takes: its spec and, for all its jobs together, a budget. */
export const ComparisonStartInput = ComparisonSpec.extend({
  budget: Budget.optional(),
  /** Prices every model (a usd budget); default: remote entries' prices. */
  price: Price.optional(),
});

export const ComparisonPair = z.object({
  generator: z.string(),
  evaluator: z.string(),
  jobId: z.string().nullable(),
  status: CellStatus,
  rowsDone: z.number().int(),
  rowsTotal: z.number().int(),
  accuracy: z.number().nullable(),
  macroF1: z.number().nullable(),
  /** The macro-F1's 95 % percentile bootstrap interval over rows, seeded from the pair's job (docs/method.md §16); null while it runs. */
  macroF1Interval: Interval.nullable().default(null),
  /** The pair's job's running time, all sessions (a job's word). */
  elapsedMs: z.number(),
  /** Prompt + completion tokens the pair's job used (cached generator work counts 0). */
  tokens: z.number(),
  error: z.string().nullable(),
  /** Dropped from the race (status `dropped`): after how many rows, and why. */
  dropped: RaceDrop.nullable().default(null),
  /** The accuracy's 95 % Wilson interval (docs/method.md §16); null until a row with gold is scored. */
  accuracyInterval: Interval.nullable().default(null),
  /** The pair with the highest accuracy: the one every other is compared with. */
  best: z.boolean().default(false),
  /** This pair minus the best, on the rows both scored (Tango's interval, exact McNemar p); null for the best itself. */
  versusBest: PairedComparison.nullable().default(null),
  /** McNemar's p against the best after Holm's correction over the pairs compared with it. */
  adjustedP: z.number().nullable().default(null),
  /** Not told apart from the best at 95 % after Holm's correction ("tied for best"; the best is). */
  tiedForBest: z.boolean().default(false),
});
export type ComparisonPair = z.infer<typeof ComparisonPair>;

export const ComparisonSummary = ExperimentHead.extend({
  taskId: z.string(),
  dataPath: z.string(),
  generators: z.array(z.string()),
  evaluators: z.array(z.string()),
});
export type ComparisonSummary = z.infer<typeof ComparisonSummary>;

export const ComparisonResult = ComparisonSummary.extend({
  spec: ComparisonSpec,
  /** In run order: generator-major, so each generator's work is done once and then reused. */
  pairs: z.array(ComparisonPair),
  /** Said before anything loads: models whose estimated memory does not fit this machine. */
  warnings: z.array(z.string()).default([]),
});
export type ComparisonResult = z.infer<typeof ComparisonResult>;

/** Accuracy matrix, generators as rows and evaluators as columns (null: not finished). */
export function comparisonMatrix(record: Pick<ComparisonResult, 'spec' | 'pairs'>, metric: 'accuracy' | 'macroF1' = 'accuracy'): (number | null)[][] {
  return record.spec.generators.map((g) =>
    record.spec.evaluators.map((e) => record.pairs.find((p) => p.generator === g && p.evaluator === e)?.[metric] ?? null),
  );
}

/** "best", or this pair against it: "−3.2 [−7.1, +0.6] on 200 rows, Holm p = 0.21"; '' before anything is scored. */
export function versusBestText(p: Pick<ComparisonPair, 'best' | 'versusBest' | 'adjustedP'>): string {
  if (p.best) return 'best';
  const c = p.versusBest;
  if (!c) return '';
  const d = c.difference;
  return `${pointsText(d.estimate)} [${pointsText(d.low)}, ${pointsText(d.high)}] on ${c.rows} rows, Holm ${pValueText(p.adjustedP ?? c.pValue)}`;
}

/** The pairs tied for best, in run order. */
export function tiedPairs(pairs: readonly ComparisonPair[]): ComparisonPair[] {
  return pairs.filter((p) => p.tiedForBest);
}

/** What "tied for best" means, said once beside the pairs it names (docs/method.md §16). */
export const TIED_FOR_BEST_MEANS = "not told apart from the best pair at 95 % (exact McNemar on the rows both scored, Holm's correction over the pairs compared)";

/** How a comparison's numbers are worked out, beside every table or heat map that shows them (docs/method.md §16). */
export const COMPARISON_INTERVALS_NOTE = "accuracy intervals: 95 % Wilson; macro-F1: 95 % percentile bootstrap over rows; differences: points against the best, Tango's paired 95 % interval";
