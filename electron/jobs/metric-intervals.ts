// Each score of a job with its 95 % interval (docs/method.md §16), from the counts the metrics
// already hold: Wilson for every accuracy, precision and recall; the percentile bootstrap for F1,
// macro-F1, ECE and Brier, resampling the confusion matrix's cells or the rows' distinct
// (confidence, correct) pairs (the same as resampling rows for those statistics); TATRA against its
// zero-shot baseline on the rows both scored. Seeded from the job's id, so a job always shows the
// same interval: the bootstrap's part (seconds at the default tolerance, whatever the rows) is
// kept in the job's database under a digest of the counts it read (metric-counts-store.ts), so a
// read in any process, the first one after the job ended included, costs a lookup; counts that
// change (a resume, a row run again, a recount) have another digest, so a kept interval is never
// stale. Wilson's intervals cost nothing and are computed on every read.
import { createHash } from 'node:crypto';
import type { Interval, JobIntervals } from '../common/contract/interval';
import { bootstrapCounts, compareTable, f1Intervals, seedOf, wilson, type BootstrapOptions, type CountsStatistic } from '../common/stats';
import { binOf, RELIABILITY_BINS } from './calibration';
import type { JobMetrics } from './types';

export interface IntervalOptions {
  /**
   * While a job runs its intervals change with every row: 2,000 resamples (bounds within about
   * half a point between seeds) instead of resampling until they settle to 0.02 points.
   */
  provisional?: boolean;
}

const PROVISIONAL: Partial<BootstrapOptions> = { minResamples: 2000, maxResamples: 2000 };

/** The correct count behind an accuracy over `of` rows. */
const countOf = (accuracy: number | null, of: number): number | null => (accuracy === null ? null : Math.round(accuracy * of));
const wilsonOf = (accuracy: number | null, of: number): Interval | null => (accuracy === null ? null : wilson(countOf(accuracy, of)!, of));

/**
 * The scored rows as (confidence, right) cells, read off the accuracy–coverage curve (each point
 * answers the rows at or above its confidence, so two neighbours differ by the rows at one
 * confidence): `confidence[i]` with `counts[2i]` rows right and `counts[2i + 1]` wrong.
 */
export function confidenceCells(m: Pick<JobMetrics, 'selective' | 'evaluated'>): { confidence: number[]; counts: number[] } {
  const confidence: number[] = [];
  const counts: number[] = [];
  const points = m.selective;
  points.forEach((p, i) => {
    const answered = Math.round(p.coverage * m.evaluated);
    const right = Math.round(p.accuracy * answered);
    const next = points[i + 1];
    const nextAnswered = next ? Math.round(next.coverage * m.evaluated) : 0;
    const nextRight = next ? Math.round(next.accuracy * nextAnswered) : 0;
    confidence.push(p.threshold);
    counts.push(right - nextRight, answered - nextAnswered - (right - nextRight));
  });
  return { confidence, counts };
}

/** ECE over the reliability bins and the top-label Brier score of resampled (confidence, right) cells (jobs/calibration.ts). */
export function calibrationStatistic(confidence: readonly number[]): CountsStatistic {
  const bin = confidence.map((c) => binOf(c));
  const count = new Float64Array(RELIABILITY_BINS);
  const sumConfidence = new Float64Array(RELIABILITY_BINS);
  const right = new Float64Array(RELIABILITY_BINS);
  return (t, out) => {
    count.fill(0);
    sumConfidence.fill(0);
    right.fill(0);
    let n = 0;
    let brier = 0;
    confidence.forEach((c, i) => {
      const yes = t[2 * i]!;
      const no = t[2 * i + 1]!;
      const b = bin[i]!;
      count[b]! += yes + no;
      sumConfidence[b]! += c * (yes + no);
      right[b]! += yes;
      n += yes + no;
      brier += yes * (c - 1) ** 2 + no * c * c;
    });
    let ece = 0;
    for (let b = 0; b < RELIABILITY_BINS; b++) if (count[b]! > 0) ece += Math.abs(right[b]! - sumConfidence[b]!) / n;
    out[0] = ece;
    out[1] = brier / n;
  };
}

/** The intervals only the bootstrap gives: what is kept. */
export interface BootstrapIntervals {
  f1: { macroF1: Interval | null; perLabel: Array<Interval | null> } | null;
  ece: Interval | null;
  brier: Interval | null;
  baselineMacroF1: Interval | null;
}

/** Where a job's bootstrap intervals are kept, by the digest of what they were computed from (metric-counts-store.ts). */
export interface KeptIntervals {
  read(jobId: string, digest: string): BootstrapIntervals | null;
  keep(jobId: string, digest: string, value: BootstrapIntervals): void;
}

const remembered = new Map<string, JobIntervals>();
const REMEMBERED = 64;

/** The intervals of a job's metrics; `jobId` seeds the bootstrap; `kept`, where given, holds its part across processes. */
export function metricIntervals(m: JobMetrics, jobId: string, options: IntervalOptions = {}, kept?: KeptIntervals): JobIntervals {
  const key = JSON.stringify([jobId, options.provisional === true, m.evaluated, m.correct, m.confusion, m.perRunAccuracy, m.accuracyAfterRuns, m.selective, m.answered, m.math, m.baseline, m.calibration.bins]);
  const known = remembered.get(key);
  if (known) return known;
  const value = compute(m, bootstrapped(m, jobId, options, kept));
  if (remembered.size >= REMEMBERED) remembered.delete(remembered.keys().next().value!);
  remembered.set(key, value);
  return value;
}

/**
 * The digest of everything the bootstrap reads: the seed's job, the resamples asked for, the
 * confusion matrices and the (confidence, right) cells. Equal digests give equal intervals.
 */
export function bootstrapDigest(m: JobMetrics, jobId: string, options: IntervalOptions): string {
  const cells = confidenceCells(m);
  const what = [jobId, options.provisional === true, m.labels, m.evaluated, m.confusion, m.calibration.ece, m.calibration.brier, cells, m.baseline?.evaluated ?? null, m.baseline?.confusion ?? null];
  return createHash('sha256').update(JSON.stringify(what)).digest('base64url');
}

function bootstrapped(m: JobMetrics, jobId: string, options: IntervalOptions, kept: KeptIntervals | undefined): BootstrapIntervals {
  const digest = kept ? bootstrapDigest(m, jobId, options) : '';
  const stored = kept?.read(jobId, digest);
  if (stored) return stored;
  const value = bootstrap(m, jobId, options);
  kept?.keep(jobId, digest, value);
  return value;
}

function bootstrap(m: JobMetrics, jobId: string, options: IntervalOptions): BootstrapIntervals {
  const boot = (statistic: string): BootstrapOptions => ({ seed: seedOf(jobId, statistic), ...(options.provisional ? PROVISIONAL : {}) });
  const f1 = m.labels.length > 0 && m.evaluated > 0 ? f1Intervals(m.confusion, boot('f1')) : null;
  const cells = confidenceCells(m);
  const [ece, brier] =
    m.calibration.ece === null ? [null, null] : bootstrapCounts(cells.counts, [m.calibration.ece, m.calibration.brier], calibrationStatistic(cells.confidence), boot('calibration'));
  const base = m.baseline;
  const baselineMacroF1 = base && m.labels.length > 0 && base.evaluated > 0 ? f1Intervals(base.confusion, boot('baseline f1')).macroF1 : null;
  return { f1, ece: ece ?? null, brier: brier ?? null, baselineMacroF1 };
}

function compute(m: JobMetrics, { f1, ece, brier, baselineMacroF1 }: BootstrapIntervals): JobIntervals {
  const n = m.evaluated;
  const base = m.baseline;
  return {
    accuracy: wilsonOf(m.accuracy, n),
    macroF1: f1?.macroF1 ?? null,
    perRunAccuracy: m.perRunAccuracy.map((a) => wilsonOf(a, n)),
    accuracyAfterRuns: m.accuracyAfterRuns.map((a) => wilsonOf(a, n)),
    perLabel: m.perLabel.map((l, i) => ({
      label: l.label,
      precision: wilson(l.truePositives, l.predicted),
      recall: wilson(l.truePositives, l.support),
      f1: f1?.perLabel[i] ?? null,
    })),
    lenientAccuracy: m.math ? wilsonOf(m.math.lenientGoldInOutputAccuracy, n) : null,
    answeredAccuracy: m.answered ? wilson(m.answered.correct, m.answered.answered) : null,
    calibration: {
      ece,
      brier,
      bins: m.calibration.bins.map((b) => wilsonOf(b.accuracy, b.count)),
      selective: m.selective.map((p) => wilsonOf(p.accuracy, Math.round(p.coverage * n))),
    },
    baseline: base ? { accuracy: wilson(base.correct, base.evaluated), macroF1: baselineMacroF1, versus: compareTable(base.versus) } : null,
  };
}
