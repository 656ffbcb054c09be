// Offline evaluation of a task on a CSV/TSV/JSONL file, with results that survive a crash.
// Main-process code shared by the CLI (`tatra eval`, `tatra jobs`), the API host (Evaluate view)
// and the experiments built of jobs (electron/experiments/). Nothing here imports Electron.
//
//   dataset.ts  streaming import: previewDataset, readDataset, scanDataset
//   text-source.ts  a file's bytes as strict UTF-8 text, read once, with its fingerprint
//   gold-labels.ts  what a gold value means, the suggested label map
//   store.ts    SQLite (WAL) job store: jobs, their rows (stored-row.ts) and run examples, on
//               store-file.ts (pragmas, WAL, the full-disk reserve) and generation-outputs.ts
//               (the generator-output cache, the engine's GenerationCache)
//   migrations.ts  the job database's schema, one migration per version
//   manager.ts  JobManager: create/start/pause/cancel/resume, concurrent rows, events
//   import.ts, row-progress.ts, model-identity.ts  a job's import, its progress, its models' identity
//   metrics.ts  pure metric functions over a job's metric counts (metric-counts*.ts: kept as rows finish)
//   calibration.ts  reliability bins, ECE, Brier, the accuracy–coverage curve
//   export.ts   CSV/JSON export and readers for round trips
//   experiment-store.ts  the experiments' rows in the job database (their runner: electron/experiments/)
//   owner.ts    who runs a job or an experiment, and whether that process still lives
//   claims.ts   claiming, beating, releasing and stopping a job or an experiment in the database
//   running-work.ts  the lifecycle of work this process runs (jobs, experiments, classify runs)
//   plan*.ts    what a run will cost before it starts (--dry-run, the app's plan)
//   review*.ts  a person's review of a job's rows: the queue, decisions, what review gives back,
//               the labelled data set out (final export), decisions made elsewhere in (import)
export * from './types';
export {
  previewDataset,
  openDataset,
  readDataset,
  scanDataset,
  detectFormat,
} from './dataset';
export { goldLabelResolver, suggestLabelMapping } from './gold-labels';
export { IMPORT_UNFINISHED } from './claims';
export { JobStore, SqliteGenerationCache, openJobStore, JOB_DB_FILE, SCHEMA_VERSION, type NewJobRecord, type RowResultRecord } from './store';
export { JobManager, type JobManagerOptions, type BackendWrapper, type StartOptions, type ViewOptions } from './manager';
export { plainModelRef } from './model-identity';
export { ExperimentStore, type ExperimentBudget, type StoredExperiment, type StoredExperimentStatus } from './experiment-store';
export { calibration, reliabilityBins, selectiveCurve, answeredMetrics, answeredAt, binOf, RELIABILITY_BINS, type Scored, type ReliabilityBin, type Calibration, type SelectivePoint, type AnsweredMetrics } from './calibration';
export { computeMetrics, metricsFromCounts, revote, isCorrect, labelScores, type MetricsInput } from './metrics';
export { JobReview, type ReviewSummary } from './review';
export type { ReviewOrder, QueueCursor, QueueQuery, QueueRow, QueuePage } from './review-queue';
export type { ReviewDecision, ReviewHistoryEntry, ReviewProgress, ReviewQueueName } from './review-store';
export type { AuditEstimate, TriagePlan, TriageStep } from './review-report';
export type { FinalFormat } from './review-export';
export { exportJob, readCsvExport, readJsonExport, toCsv, type JsonExport, type CsvExportRow } from './export';
export { Planner, type PlannerOptions, type PlanData, type PlanCommon } from './planner';
export { planClassify, planJob, planSweep, planCompare, presentPlan, assumedLengths, measuredLengths, jobThroughput, jobsOn, type PlanInputs, type PlanModelInfo, type Throughput, type LengthsBasis } from './plan';
export { UsageMeter, BudgetExhausted, checkJobBudget, pricedBudget, rowCalls, sumUsage, type JobBudget } from './usage';
export { jobSummary, summaryScores, type SummaryScores } from './summary';
