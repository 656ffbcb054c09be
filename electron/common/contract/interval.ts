// One interval type for every score the app shows (docs/method.md §16): the estimate, its bounds,
// how they were computed and at what level. Every face (CLI text and --json, the app, exports, the
// API) carries the same object, so each shows the same interval with the same name.
import { z } from 'zod';

/**
 * - `wilson`: Wilson score interval of a proportion (accuracy, precision, recall).
 * - `bootstrap`: percentile bootstrap over rows, seeded from the job (macro-F1, F1, ECE, Brier).
 * - `bootstrap-rows-seeds`: percentile bootstrap over rows and seeds (a sweep point's mean over seeds).
 * - `tango`: a paired difference of two accuracies, Tango's score interval.
 * - `bootstrap-paired`: a paired difference over rows and seeds (two sweep points).
 */
export const IntervalMethod = z.enum(['wilson', 'bootstrap', 'bootstrap-rows-seeds', 'tango', 'bootstrap-paired']);
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
  tango: "paired score interval (Tango)",
  'bootstrap-paired': 'paired percentile bootstrap over rows and seeds',
};

/** "95 % Wilson score interval": what a tooltip or a footnote says beside an interval. */
export function intervalName(i: Pick<Interval, 'method' | 'level'>): string {
  return `${Math.round(i.level * 100)} % ${METHOD_WORDS[i.method]}`;
}

const MaybeInterval = Interval.nullable();

/**
 * A job's scores' intervals, beside the scores of JobMetrics under the same names (null where the
 * score is null). `tatra eval --json` prints them, the app shows them, the JSON export carries them.
 */
export const JobIntervals = z.object({
  /** Strict accuracy for math. */
  accuracy: MaybeInterval,
  macroF1: MaybeInterval,
  perRunAccuracy: z.array(MaybeInterval),
  accuracyAfterRuns: z.array(MaybeInterval),
  perLabel: z.array(z.object({ label: z.string(), precision: MaybeInterval, recall: MaybeInterval, f1: MaybeInterval })),
  lenientAccuracy: MaybeInterval,
  /** At the minimum confidence asked for: accuracy on the rows answered. */
  answeredAccuracy: MaybeInterval,
  calibration: z.object({
    ece: MaybeInterval,
    brier: MaybeInterval,
    /** Each reliability bin's accuracy, in the order of calibration.bins. */
    bins: z.array(MaybeInterval),
    /** The accuracy at each point of the accuracy–coverage curve, in the order of selective. */
    selective: z.array(MaybeInterval),
  }),
  baseline: z
    .object({
      accuracy: MaybeInterval,
      macroF1: MaybeInterval,
      /** TATRA (first) against the zero-shot baseline (second) on the rows both scored. */
      versus: PairedComparison.nullable(),
    })
    .nullable(),
});
export type JobIntervals = z.infer<typeof JobIntervals>;

/** Bounds as text in the score's own units: `[81.2, 88.1]` for a share shown in percent, `[0.781, 0.894]` otherwise. */
export function boundsText(i: Pick<Interval, 'low' | 'high'> | null, unit: 'percent' | 'number' = 'percent', digits = unit === 'percent' ? 1 : 3): string {
  if (!i) return '';
  const f = (v: number) => (unit === 'percent' ? (v * 100).toFixed(digits) : v.toFixed(digits));
  return `[${f(i.low)}, ${f(i.high)}]`;
}

/** A difference of accuracies in points, signed: `+5.0`. */
export function pointsText(v: number, digits = 1): string {
  const s = (v * 100).toFixed(digits);
  return v > 0 && Number(s) !== 0 ? `+${s}` : Number(s) === 0 ? (0).toFixed(digits) : s;
}

/** An exact p-value as people read it: `p = 0.012`, `p < 0.001`. */
export function pValueText(p: number): string {
  return p < 0.001 ? 'p < 0.001' : `p = ${p < 0.01 ? p.toFixed(3) : p.toFixed(2)}`;
}

/**
 * One line for a paired comparison: "+5.0 points [+1.2, +8.9] on 200 rows both scored (exact
 * McNemar p = 0.012)", `first` and `second` naming the two sides.
 */
export function pairedText(c: PairedComparison): string {
  const d = c.difference;
  const test = c.test === 'mcnemar-exact' ? 'exact McNemar' : 'exact sign test over seeds';
  return `${pointsText(d.estimate)} points [${pointsText(d.low)}, ${pointsText(d.high)}] on ${c.rows} rows both scored (${test} ${pValueText(c.pValue)})`;
}

/** The footnote beside a report of intervals: which method gave which, at what level. */
export const INTERVALS_FOOTNOTE =
  '[low, high]: 95 % intervals: Wilson score for accuracies, precision and recall; percentile bootstrap over rows (seeded from the job) for F1, macro-F1, ECE and Brier; paired differences on the rows both scored (docs/method.md §16)';
