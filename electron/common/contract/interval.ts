// One interval type for every score the app shows (docs/method.md §16): the estimate, its bounds,
// how they were computed and at what level. Every face (CLI text and --json, the app, exports, the
// API) carries the same object, so each shows the same interval with the same name.
import { z } from 'zod';

/**
 * - `wilson`: Wilson score interval of a proportion (accuracy, precision, recall).
 * - `bootstrap`: percentile bootstrap over rows, seeded from the job (macro-F1, F1, ECE, Brier).
 * - `bootstrap-rows-seeds`: percentile bootstrap over rows and seeds (a sweep point's mean over seeds).
 * - `newcombe`: a paired difference of two accuracies, Newcombe's hybrid score interval.
 * - `bootstrap-paired`: a paired difference over rows and seeds (two sweep points).
 */
export const IntervalMethod = z.enum(['wilson', 'bootstrap', 'bootstrap-rows-seeds', 'newcombe', 'bootstrap-paired']);
export type IntervalMethod = z.infer<typeof IntervalMethod>;

export const Interval = z.object({
  estimate: z.number(),
  low: z.number(),
  high: z.number(),
  method: IntervalMethod,
  /** Coverage the method aims at: 0.95 everywhere the app shows one. */
  level: z.number(),
});
export type Interval = z.infer<typeof Interval>;

/** A paired comparison of two results on the rows both scored (docs/method.md §16). */
export const PairedComparison = z.object({
  /** Rows both results scored: every figure below is over these. */
  rows: z.number().int(),
  /** Rows where only the first, or only the second, was right (a sweep point's: rows whose mean over seeds is higher). */
  firstBetter: z.number().int(),
  secondBetter: z.number().int(),
  /** First minus second, accuracy on the shared rows, with its paired interval. */
  difference: Interval,
  /** Two-sided exact p-value: McNemar's (a sign test on the rows' means over seeds where there are several). */
  pValue: z.number(),
  test: z.enum(['mcnemar-exact', 'sign-exact']),
});
export type PairedComparison = z.infer<typeof PairedComparison>;

const METHOD_WORDS: Record<IntervalMethod, string> = {
  wilson: 'Wilson score interval',
  bootstrap: 'percentile bootstrap over rows',
  'bootstrap-rows-seeds': 'percentile bootstrap over rows and seeds',
  newcombe: "paired interval (Newcombe's hybrid score)",
  'bootstrap-paired': 'paired percentile bootstrap over rows and seeds',
};

/** "95 % Wilson score interval": what a tooltip or a footnote says beside an interval. */
export function intervalName(i: Pick<Interval, 'method' | 'level'>): string {
  return `${Math.round(i.level * 100)} % ${METHOD_WORDS[i.method]}`;
}
