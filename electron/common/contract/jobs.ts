// Offline evaluation jobs: preview a data file, start a job, watch it, pause/resume/cancel it,
// browse its rows and metrics, export it. Jobs live in the SQLite store in the data folder, so the
// history survives restarts and an interrupted job can be resumed.
import { z } from 'zod';
import { Example, Prediction, TatraSettings } from '../tatra';
import { ROW_LIMIT } from '../settings';
import { method } from './define';
import { safeRecord } from '../records';
import { Budget, Price, Usage } from '../plan';
import { Interval, JobIntervals } from './interval';

export const DataFormat = z.enum(['csv', 'tsv', 'jsonl']);
export type DataFormat = z.infer<typeof DataFormat>;

/** `interrupted`: stored as running, but the process that ran it died; resume it. */
export const JobStatus = z.enum(['queued', 'running', 'paused', 'cancelled', 'done', 'failed', 'interrupted']);
export type JobStatus = z.infer<typeof JobStatus>;

/** What the job store records; `interrupted` is worked out from the owner's liveness (`jobStatus`). */
export const StoredJobStatus = JobStatus.exclude(['interrupted']);
export type StoredJobStatus = z.infer<typeof StoredJobStatus>;

/** A job's status as every face shows it: `interrupted` for one stored as running whose process died. */
export function jobStatus(job: { status: StoredJobStatus; interrupted: boolean }): JobStatus {
  return job.interrupted ? 'interrupted' : job.status;
}

/**
 * A job's status as a list shows it: `dropped` for a job a raced experiment dropped (stored
 * paused with the rows it ran, `stoppedBy` race: its experiment says after how many rows and why),
 * which a user should not take for one waiting to be resumed.
 */
export function listedStatus(job: { status: JobStatus; stoppedBy: 'budget' | 'race' | null }): JobStatus | 'dropped' {
  return job.status === 'paused' && job.stoppedBy === 'race' ? 'dropped' : job.status;
}

/** The confusion matrix's last column: rows whose prediction is none of the task's labels (no valid vote). */
export const NO_VOTE_COLUMN = '(none)';

/** Accuracy over the rows scored (done, with gold); null before the first. Every accuracy is this ratio. */
export function accuracyOf(correct: number, scored: number): number | null {
  return scored === 0 ? null : correct / scored;
}

const JobId = z.string().min(1);
const Path = z.string().trim().min(1, 'give a file path');

export const GoldValue = z.object({
  value: z.string(),
  count: z.number().int(),
  /** Suggested task label (case-insensitive name match or numeric index), null when none. */
  suggested: z.string().nullable(),
});
export type GoldValue = z.infer<typeof GoldValue>;

export const PreviewInput = z.object({
  path: Path,
  /** With a task, gold values get suggested labels. */
  taskId: z.string().optional(),
  inputColumn: z.string().optional(),
  goldColumn: z.string().nullable().optional(),
  /** Sample rows to return (default 20). */
  sampleRows: z.number().int().min(1).max(200).optional(),
});
export type PreviewInput = z.infer<typeof PreviewInput>;

export const DataPreview = z.object({
  path: z.string(),
  format: DataFormat,
  columns: z.array(z.string()),
  sample: z.array(safeRecord(z.string())),
  /** Rows in the file (null when the preview stopped early on a huge file). */
  rowCount: z.number().int().nullable(),
  /** Rows whose input is empty (skipped by a job). */
  emptyInputs: z.number().int(),
  /** The columns used (given or guessed). */
  inputColumn: z.string().nullable(),
  goldColumn: z.string().nullable(),
  goldValues: z.array(GoldValue),
});
export type DataPreview = z.infer<typeof DataPreview>;

export const JobStartInput = z.object({
  taskId: z.string().trim().min(1),
  dataPath: Path,
  inputColumn: z.string().min(1, 'choose the input column'),
  goldColumn: z.string().nullable().default(null),
  /** Gold value → task label; values not listed are matched case-insensitively, else unmapped. */
  labelMap: safeRecord(z.string()).default({}),
  generator: z.string().trim().min(1, 'choose a generator model'),
  evaluator: z.string().trim().min(1, 'choose an evaluator model'),
  settings: TatraSettings,
  /** Only the first N rows. */
  limit: z.number().int().min(ROW_LIMIT.min).max(ROW_LIMIT.max).optional(),
  /** Also run the zero-shot baseline (one greedy evaluator call per row). */
  baseline: z.boolean().default(false),
  name: z.string().max(200).optional(),
  /** Stop before exceeding this many calls, tokens or US dollars (paused, resumable with a larger one). */
  budget: Budget.optional(),
  /** Prices every model of the job (a usd budget, the plan's cost); default: remote entries' prices. */
  price: Price.optional(),
});
export type JobStartInput = z.infer<typeof JobStartInput>;

export const JobProgress = z.object({
  jobId: JobId,
  /**
   * `loading`: acquiring the models; `examples`: generating the shared examples of every run
   * (scope run; long on a slow machine); `rows`: classifying rows.
   */
  phase: z.enum(['loading', 'examples', 'rows']).default('rows'),
  /** Rows finished (done or failed) and in the job: the one name for row counts (ExperimentProgress, a cell's). */
  rowsDone: z.number().int(),
  rowsTotal: z.number().int(),
  failed: z.number().int().default(0),
  /** Over this session's rows (not counting rows done before a resume); 0 before the first. */
  rowsPerMinute: z.number().nullable(),
  /** Seconds left, given only once the rate of calls is stable; null before. */
  etaSeconds: z.number().nullable(),
  /** Seconds left as a range while the rate is not stable yet (both ends equal once it is); null before any rate. */
  etaRange: z.object({ min: z.number(), max: z.number() }).nullable().default(null),
  /** Model calls accounted for and planned: progress that moves from the first call, before any row ends. */
  callsDone: z.number().int().default(0),
  callsTotal: z.number().int().default(0),
  /** Accuracy over the finished rows that have a gold label; null before the first. */
  runningAccuracy: z.number().nullable(),
  /** JobSummary.deterministic as it stands (known once the session's models are loaded). */
  deterministic: z.boolean().nullable().default(null),
});
export type JobProgress = z.infer<typeof JobProgress>;

export const JobSummary = z.object({
  id: JobId,
  name: z.string(),
  taskId: z.string(),
  status: JobStatus,
  dataPath: z.string(),
  generator: z.string(),
  evaluator: z.string(),
  settings: TatraSettings,
  createdAt: z.number(),
  updatedAt: z.number(),
  rowsDone: z.number().int(),
  rowsTotal: z.number().int(),
  accuracy: z.number().nullable(),
  /** The accuracy's 95 % Wilson interval over the rows scored so far (docs/method.md §16). */
  accuracyInterval: Interval.nullable().default(null),
  /** Macro-F1 over the rows scored so far (classification and multiple choice; null for math or before any). */
  macroF1: z.number().nullable().default(null),
  /** Its 95 % percentile bootstrap interval over rows, seeded from the job (docs/method.md §16). */
  macroF1Interval: Interval.nullable().default(null),
  error: z.string().nullable().default(null),
  /**
   * Every session ran on backends that give the same output for the same request, so the same
   * job again gives the same rows; false after a session on a remote server or a GPU build; null
   * before the first session.
   */
  deterministic: z.boolean().nullable().default(null),
  /** Calls and tokens the job's models answered, all sessions. */
  usage: Usage.nullable().default(null),
  /** The limit the job stops before exceeding; null: none. */
  budget: Budget.nullable().default(null),
  /**
   * `budget`: it paused because its budget would have been exceeded (resume with a larger one);
   * `race`: a raced comparison or sweep dropped it (docs/method.md §16), paused with the rows it ran.
   */
  stoppedBy: z.enum(['budget', 'race']).nullable().default(null),
});
export type JobSummary = z.infer<typeof JobSummary>;

export const RowStatus = z.enum(['pending', 'done', 'failed']);
export type RowStatus = z.infer<typeof RowStatus>;

export const JobRow = z.object({
  index: z.number().int(),
  input: z.string(),
  /** pending: not classified yet (no prediction is no vote); failed: this row's own error, retried on resume. */
  status: RowStatus.default('done'),
  error: z.string().nullable().default(null),
  gold: z.string().nullable(),
  prediction: z.string().nullable(),
  correct: z.boolean().nullable(),
  confidence: z.number(),
  votes: safeRecord(z.number()),
  ms: z.number().default(0),
});
export type JobRow = z.infer<typeof JobRow>;

export const JobRowRun = z.object({
  run: z.number().int(),
  seed: z.number().int(),
  examples: z.array(Example),
  paraphrases: z.array(z.string()),
  predictions: z.array(Prediction),
});
export type JobRowRun = z.infer<typeof JobRowRun>;

export const JobRowDetail = JobRow.extend({
  runs: z.array(JobRowRun),
  baseline: z.string().nullable().default(null),
});
export type JobRowDetail = z.infer<typeof JobRowDetail>;

export const RowsInput = z.object({
  jobId: JobId,
  offset: z.number().int().min(0).default(0),
  limit: z.number().int().min(1).max(5000).default(200),
  /** `wrong`: finished rows whose prediction differs from gold. */
  filter: z.enum(['all', 'wrong']).default('all'),
  sort: z.enum(['index', 'confidence-asc', 'confidence-desc']).default('index'),
});
export type RowsInput = z.infer<typeof RowsInput>;

export const LabelMetrics = z.object({
  label: z.string(),
  precision: z.number(),
  recall: z.number(),
  f1: z.number(),
  support: z.number().int(),
});
export type LabelMetrics = z.infer<typeof LabelMetrics>;

export const ReliabilityBin = z.object({
  from: z.number(),
  to: z.number(),
  count: z.number().int(),
  /** Mean vote share of the bin's rows (null when empty). */
  confidence: z.number().nullable(),
  /** Accuracy of the bin's rows (null when empty). */
  accuracy: z.number().nullable(),
});
export type ReliabilityBin = z.infer<typeof ReliabilityBin>;

export const Calibration = z.object({
  /** Expected calibration error over the bins; null before any scored row. */
  ece: z.number().nullable(),
  /** Mean (vote share − 1[correct])²; null before any scored row. */
  brier: z.number().nullable(),
  bins: z.array(ReliabilityBin),
});
export type Calibration = z.infer<typeof Calibration>;

export const SelectivePoint = z.object({ threshold: z.number(), coverage: z.number(), accuracy: z.number() });
export type SelectivePoint = z.infer<typeof SelectivePoint>;

export const AnsweredMetrics = z.object({
  minConfidence: z.number(),
  answered: z.number().int(),
  correct: z.number().int(),
  abstained: z.number().int(),
  coverage: z.number(),
  accuracy: z.number().nullable(),
});
export type AnsweredMetrics = z.infer<typeof AnsweredMetrics>;

/** Rows whose vote share is below this are abstained (selective prediction); absent: every row answered. */
const MinConfidence = z.number().min(0).max(1).optional();

export const JobMetrics = z.object({
  jobId: JobId,
  /** Rows scored (finished, with a gold label). */
  scored: z.number().int(),
  accuracy: z.number().nullable(),
  macroF1: z.number().nullable(),
  /** Accuracy of each run's own vote (null before any scored row). */
  perRunAccuracy: z.array(z.number().nullable()),
  /** Accuracy of the vote over runs 1..j, j = 1..r. */
  accuracyAfterRuns: z.array(z.number().nullable()),
  perLabel: z.array(LabelMetrics),
  confusion: z.object({
    /** Gold labels on rows, predicted labels on columns; the last column may be "(none)". */
    labels: z.array(z.string()),
    predicted: z.array(z.string()),
    matrix: z.array(z.array(z.number().int())),
  }),
  /** Distribution of the winner's vote share: bucket lower bounds (0, 0.1, …) and counts. */
  confidenceHistogram: z.array(z.object({ from: z.number(), to: z.number(), count: z.number().int() })),
  /** How well the winner's vote share predicts correctness (reliability diagram, ECE, top-label Brier). */
  calibration: Calibration.default({ ece: null, brier: null, bins: [] }),
  /** Accuracy–coverage curve: answering only rows whose vote share is at least `threshold`. */
  selective: z.array(SelectivePoint).default([]),
  /** At the minimum confidence asked for: coverage and accuracy on the answered rows; null when none was asked. */
  answered: AnsweredMetrics.nullable().default(null),
  /** Math tasks: the paper's "gold string appears in the output" score, beside the strict one. */
  lenientAccuracy: z.number().nullable().default(null),
  baselineAccuracy: z.number().nullable().default(null),
  baselineMacroF1: z.number().nullable().default(null),
  /** Each score above with its 95 % interval, under the same names (docs/method.md §16). */
  intervals: JobIntervals.nullable().default(null),
});
export type JobMetrics = z.infer<typeof JobMetrics>;

export const ExportFormat = z.enum(['csv', 'json']);
export type ExportFormat = z.infer<typeof ExportFormat>;

export const jobsMethods = {
  /** Reads the head of a data file: format, columns, sample rows, gold values with suggested labels. */
  'jobs.preview': method(PreviewInput, DataPreview),
  /** Stores a small data file sent by the UI in the data folder's uploads and returns its path. */
  'jobs.upload': method(
    z.object({ name: z.string().trim().min(1).max(200), content: z.string().max(32 * 1024 * 1024) }),
    z.object({ path: z.string(), bytes: z.number().int() }),
  ),
  'jobs.start': method(JobStartInput, JobSummary),
  'jobs.pause': method(z.object({ jobId: JobId }), JobSummary),
  /** Continues a paused or interrupted job from its first unfinished row. */
  /** acceptModelChange: continue although a model file changed since the job started (recorded in the job). */
  'jobs.resume': method(z.object({ jobId: JobId, acceptModelChange: z.boolean().optional(), budget: Budget.optional() }), JobSummary),
  'jobs.cancel': method(z.object({ jobId: JobId }), JobSummary),
  /** History, newest first. */
  'jobs.list': method(z.object({}).default({}), z.array(JobSummary)),
  'jobs.get': method(z.object({ jobId: JobId }), JobSummary.extend({ progress: JobProgress.nullable() })),
  'jobs.rows': method(RowsInput, z.object({ total: z.number().int(), rows: z.array(JobRow) })),
  'jobs.row': method(z.object({ jobId: JobId, index: z.number().int().min(0) }), JobRowDetail),
  'jobs.metrics': method(z.object({ jobId: JobId, minConfidence: MinConfidence }), JobMetrics),
  /** Writes the export into the data folder's exports and returns where (browser mode serves it). */
  'jobs.export': method(
    z.object({ jobId: JobId, format: ExportFormat, minConfidence: MinConfidence }),
    z.object({ path: z.string(), filename: z.string(), bytes: z.number().int() }),
  ),
  'jobs.delete': method(z.object({ jobId: JobId }), z.object({ deleted: z.boolean() })),
};

export const jobsEvents = {
  'job.progress': JobProgress,
  'job.status': z.object({ jobId: JobId, status: JobStatus, error: z.string().nullable().default(null) }),
};
