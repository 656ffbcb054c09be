// A person's review of an evaluation job (docs/method.md §17): the queue of rows worth a look,
// each decision written when it is made (and undone, and listed in a row's history), where review
// stands, what it gives back (the audit estimate, the triage plan, the metrics after gold
// corrections), the labelled data set out and decisions made elsewhere in. The desktop app and
// browser mode call these; `tatra jobs review` and `tatra jobs export --final` do the same on the
// same job database.
import { z } from 'zod';
import { safeRecord } from '../records';
import { method } from './define';
import { Interval } from './interval';
import { JobMetrics } from './jobs';

const JobId = z.string().min(1);
const RowIndex = z.number().int().min(0);
/** A label the person chose; null: skipped (TATRA's answer stands). */
const Label = z.string().min(1).max(1000).nullable();

/** The orders to review in: lowest confidence first, disagreement with gold, stopped early, a random audit sample. */
export const ReviewOrder = z.enum(['uncertain', 'disagree', 'early', 'audit']);
export type ReviewOrder = z.infer<typeof ReviewOrder>;

/** Where a decision was made: one of the orders, a row picked directly, or an import. */
export const ReviewQueueName = z.enum(['uncertain', 'disagree', 'early', 'audit', 'row', 'import']);
export type ReviewQueueName = z.infer<typeof ReviewQueueName>;

export const ReviewDecision = z.object({
  index: RowIndex,
  label: z.string().nullable(),
  /** The decision's entry in the row's history: what an undo names. */
  logId: z.number().int(),
  queue: ReviewQueueName,
  at: z.string(),
});
export type ReviewDecision = z.infer<typeof ReviewDecision>;

export const ReviewProgress = z.object({
  rowsDone: z.number().int(),
  reviewed: z.number().int(),
  agreed: z.number().int(),
  changed: z.number().int(),
  skipped: z.number().int(),
});
export type ReviewProgress = z.infer<typeof ReviewProgress>;

export const QueueCursor = z.object({ key: z.number(), index: RowIndex });
export type QueueCursor = z.infer<typeof QueueCursor>;

export const ReviewRow = z.object({
  index: RowIndex,
  line: z.number().int(),
  input: z.string(),
  status: z.enum(['pending', 'done', 'failed']),
  gold: z.string().nullable(),
  prediction: z.string().nullable(),
  correct: z.boolean().nullable(),
  confidence: z.number(),
  votes: safeRecord(z.number()),
  /** What each run voted on its own. */
  runVotes: z.array(z.object({ run: z.number().int(), votes: safeRecord(z.number()) })),
  decision: ReviewDecision.nullable(),
  key: z.number(),
});
export type ReviewRow = z.infer<typeof ReviewRow>;

export const QueueInput = z.object({
  jobId: JobId,
  order: ReviewOrder.default('uncertain'),
  /** Only rows TATRA gave this label (not with the audit order: it is a random sample of every row). */
  label: z.string().optional(),
  minConfidence: z.number().min(0).max(1).optional(),
  maxConfidence: z.number().min(0).max(1).optional(),
  show: z.enum(['open', 'decided', 'all']).default('open'),
  /** Where the page starts: the `next` of the page before. */
  after: QueueCursor.nullable().default(null),
  limit: z.number().int().min(1).max(500).default(50),
  withTotal: z.boolean().default(false),
});
export type QueueInput = z.infer<typeof QueueInput>;


export const ReviewSummary = z.object({
  progress: ReviewProgress,
  /** TATRA's accuracy estimated from the rows reviewed in the audit order, overall and per label it gave. */
  audit: z.object({
    reviewed: z.number().int(),
    agreed: z.number().int(),
    accuracy: Interval.nullable(),
    perLabel: z.array(z.object({ label: z.string(), reviewed: z.number().int(), agreed: z.number().int(), accuracy: Interval.nullable() })),
  }),
  /** Accept TATRA at confidence ≥ threshold, review the rest: rows left and the accepted rows' expected accuracy. */
  triage: z.object({
    basis: z.enum(['gold', 'audit', 'none']),
    steps: z.array(z.object({ threshold: z.number(), accepted: z.number().int(), toReview: z.number().int(), accuracy: Interval.nullable() })),
  }),
  /** Rows whose label the person gave differs from the file's gold. */
  corrections: z.number().int(),
});
export type ReviewSummary = z.infer<typeof ReviewSummary>;

export const ReviewHistoryEntry = z.object({
  id: z.number().int(),
  action: z.enum(['label', 'skip', 'undo']),
  label: z.string().nullable(),
  replaced: z.string().nullable(),
  queue: ReviewQueueName,
  at: z.string(),
  undone: z.boolean(),
});
export type ReviewHistoryEntry = z.infer<typeof ReviewHistoryEntry>;

export const FinalFormat = z.enum(['csv', 'jsonl']);
export type FinalFormat = z.infer<typeof FinalFormat>;

export const reviewMethods = {
  /** A page of the review queue, with where review stands. */
  'review.queue': method(QueueInput, z.object({ rows: z.array(ReviewRow), next: QueueCursor.nullable(), total: z.number().int().nullable(), progress: ReviewProgress })),
  /** Records a decision at once (its own transaction); `clientId` makes a retry the same decision. */
  'review.decide': method(
    z.object({ jobId: JobId, index: RowIndex, label: Label, queue: ReviewQueueName.default('row'), clientId: z.string().min(1).max(100).optional() }),
    z.object({ decision: ReviewDecision, progress: ReviewProgress }),
  ),
  /** Takes a row's latest decision back. */
  'review.undo': method(z.object({ jobId: JobId, logId: z.number().int() }), z.object({ index: RowIndex, decision: ReviewDecision.nullable(), progress: ReviewProgress })),
  'review.history': method(z.object({ jobId: JobId, index: RowIndex }), z.array(ReviewHistoryEntry)),
  'review.summary': method(z.object({ jobId: JobId }), ReviewSummary),
  /** The metrics with the file's gold and with the person's corrections of it. */
  'review.metrics': method(z.object({ jobId: JobId }), z.object({ before: JobMetrics, after: JobMetrics, corrections: z.number().int() })),
  /** Imports a file of (index, label) decisions: all, or for a bad file none (one line says why). */
  'review.import': method(z.object({ jobId: JobId, path: z.string().trim().min(1) }), z.object({ recorded: z.number().int(), unchanged: z.number().int(), progress: ReviewProgress })),
  /** Writes the labelled data set into the data folder's exports and returns where (browser mode serves it). */
  'review.export': method(z.object({ jobId: JobId, format: FinalFormat }), z.object({ path: z.string(), filename: z.string(), bytes: z.number().int() })),
};

export const reviewEvents = {
  /** A decision was recorded or undone (in any window): other windows drop the row from their queue or show it again. */
  'review.decided': z.object({ jobId: JobId, index: RowIndex, decision: ReviewDecision.nullable(), progress: ReviewProgress }),
};
