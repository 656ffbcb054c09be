// Public shapes of the evaluation-jobs module: what the API handlers, the CLI (and its --json
// output) and the experiments see. Where a concept crosses the wire it has one definition, the
// contract's (common/contract/jobs.ts: statuses, progress, the derived status and accuracy); the
// shapes here are the main-process records the contract's summaries are read from.
import type { DataFormat, ExportFormat, JobProgress as ContractJobProgress, JobStatus, StoredJobStatus } from '../common/contract/jobs';
import type { RemoteModelRef } from '../common/remote';
import type { TaskDefinition } from '../common/task';
import type {
  Example,
  ExampleFilterCounts,
  ParaphraseFallback,
  Prediction,
  StageName,
  StageStats,
  TatraSettings,
} from '../common/tatra';
import type { Usage } from '../common/plan';
import type { JobBudget } from './usage';
import type { AnsweredMetrics, Calibration, SelectivePoint } from './calibration';
import type { JobIntervals } from '../common/contract/interval';
import type { PairedTable } from '../common/stats';

// ---------------------------------------------------------------- import

export type DatasetFormat = DataFormat;

export interface DatasetOptions {
  /** Forced format; by default decided from the extension, then from the content. */
  format?: DatasetFormat;
  /** Forced CSV delimiter; by default detected from the header line (`,` `;` `\t` `|`). */
  delimiter?: string;
  /**
   * Ragged rows (a row whose field count differs from the header's). Default `false`: the first
   * one is a UserError naming its line, because an unquoted delimiter inside the text would
   * otherwise silently shift the gold column. `true`: short rows are padded with empty fields,
   * long rows lose their extra fields, and both are counted in `stats.ragged`.
   */
  allowRagged?: boolean;
  /**
   * The task's labels (and abstain label): a gold value the label map does not list, or every
   * value when there is no map, counts as the label it names in any case (goldLabel).
   */
  labels?: readonly string[];
  signal?: AbortSignal;
}

export interface DatasetPreview {
  path: string;
  format: DatasetFormat;
  /** CSV/TSV only. */
  delimiter?: string;
  /** Column names; duplicate header names are disambiguated as `name`, `name_2`, `name_3`. */
  columns: string[];
  /** The first rows (about 20), every value a string (JSON values are stringified). */
  rows: Record<string, string>[];
  /** Extrapolated from the bytes the preview read; exact when the whole file was read. */
  totalRowsEstimate?: number;
  sizeBytes: number;
  /** Best guesses for the mapping UI: paper JSONL gives `input`/`solution`. */
  suggestedTextColumn?: string;
  suggestedLabelColumn?: string;
}

export interface ColumnMapping {
  /** Column holding the input text (`input` for the paper's messages/solution JSONL). */
  textColumn: string;
  /** Column holding the gold answer; omitted or null: no gold (no accuracy). */
  labelColumn?: string | null;
  /**
   * Gold value (trimmed, exact) → task label; values it does not list match a label's name in
   * any case (goldLabel). Omitted: gold values are used as they are (math tasks), or matched to
   * the labels when the reader is given them.
   */
  labelMap?: Record<string, string>;
}

export interface DatasetRow {
  /** 0-based index among the rows that are kept (empty inputs are skipped and not indexed). */
  index: number;
  /** 1-based line in the file where the row starts (header is line 1 for CSV/TSV). */
  line: number;
  input: string;
  /** Mapped gold label (or answer), null when there is no gold column or the value is unmapped. */
  gold: string | null;
  /** The gold value as it was in the file (trimmed), null when there is no gold column. */
  goldRaw: string | null;
  /** Every column of the row as the file had it, JSON, the input column's value null (job_rows.record_json). */
  record?: string | null;
}

export interface DatasetStats {
  /** Rows yielded. */
  rows: number;
  /** Rows skipped because their input was empty or only whitespace. */
  skippedEmpty: number;
  /** Gold values the label map does not cover, with their counts (those rows have gold null). */
  unmappedGold: Record<string, number>;
  /** Rows with no gold value at all, when a label column is mapped. */
  missingGold: number;
  /** Ragged rows tolerated (only with `allowRagged`). */
  ragged: number;
}

/** A streaming reader: iterate it once; `stats` is complete when the iteration ends. */
export interface DatasetReader extends AsyncIterable<DatasetRow> {
  readonly format: DatasetFormat;
  readonly stats: DatasetStats;
  /**
   * sha256 of the file, identifying the data a job was created from: hashed from the bytes the
   * rows were read from (after a row limit, the rest of the file is hashed without parsing).
   */
  fingerprint(): Promise<string>;
}

/**
 * A data file opened for a job: its format, delimiter, columns and suggested columns read from
 * its first bytes, once. Pass it along (JobSpec.dataset.opened) so the job reads the file in one
 * more pass, the rows and the fingerprint together, and never reads the head again.
 */
export interface OpenedDataset {
  readonly path: string;
  readonly format: DatasetFormat;
  readonly delimiter?: string;
  readonly sizeBytes: number;
  /** The header's columns (CSV/TSV), or the first object's keys (JSONL). */
  readonly columns: readonly string[];
  readonly suggestedTextColumn?: string;
  readonly suggestedLabelColumn?: string;
  /** Streams the rows through a mapping: one pass over the file, hashed as it is read. */
  read(mapping: ColumnMapping, opts?: Pick<DatasetOptions, 'allowRagged' | 'signal'>): DatasetReader;
}

export interface DatasetScan {
  format: DatasetFormat;
  delimiter?: string;
  columns: string[];
  rows: number;
  skippedEmpty: number;
  /** Raw gold values (trimmed) → count; empty when no label column was given. */
  goldValueCounts: Record<string, number>;
  fingerprint: string;
}

export interface LabelMappingSuggestion {
  /** Gold value → task label. */
  map: Record<string, string>;
  /** Values no rule could map, most frequent first. */
  unmapped: Array<{ value: string; count: number }>;
  /** How each mapped value was matched. */
  how: Record<string, 'exact' | 'case-insensitive' | 'index' | 'prefix'>;
}

// ---------------------------------------------------------------- jobs

export interface ModelRef {
  /** A GGUF path, or a remote model as given (`remote:NAME`, `openai+http://…#MODEL`). */
  path: string;
  /** 0 for a remote model. */
  sizeBytes: number;
  /** From the llama layer's GGUF inspection (llama/inspection.ts); '' when unknown (e.g. a scripted backend, a remote model). */
  headerHash: string;
  /** sha256 of all the file's bytes (llama/content-hash.ts); absent for remote models and jobs recorded before it was kept. */
  contentHash?: string;
  /** A remote model: its endpoints, model id, server kind and version (resume reconnects to these; no key). */
  remote?: RemoteModelRef;
  /**
   * Models this one replaced at the same path, accepted on resume (`--accept-model-change`): the
   * job's earlier rows came from them.
   */
  replaced?: ReplacedModel[];
}

export interface ReplacedModel {
  sizeBytes: number;
  headerHash: string;
  contentHash?: string;
  /** The replaced remote model (its id and server), for a remote reference. */
  remote?: RemoteModelRef;
  /** When the change was accepted (ISO time). */
  acceptedAt: string;
}

export interface JobSpec {
  /** Task id or task file path (resolved through `resolveTask`), or the task itself. */
  task: string | TaskDefinition;
  settings: TatraSettings;
  generatorPath: string;
  evaluatorPath: string;
  dataset: {
    path: string;
    mapping: ColumnMapping;
    /** The file as the caller already opened it (openDataset): its head is not read again. */
    opened?: OpenedDataset;
  } & Pick<DatasetOptions, 'format' | 'delimiter' | 'allowRagged'>;
  /** Evaluate only the first `limit` rows (after skipping empty inputs). */
  limit?: number;
  /** Also run the zero-shot baseline (one greedy evaluator call per row). */
  baseline?: boolean;
  /** Rows classified at once; default 4 (the llama backend's default sequence count). */
  concurrency?: number;
  /** A free-text name for the history list. */
  name?: string;
  /** Stop before exceeding this (calls, tokens or money); a resume may raise it. */
  budget?: JobBudget;
  signal?: AbortSignal;
}

export interface JobInfo {
  id: string;
  name: string;
  /** ISO timestamps. */
  created: string;
  updated: string;
  /** What the store records (common/contract/jobs.ts); with `interrupted`, jobStatus() says the displayed one. */
  status: StoredJobStatus;
  /** Stored as running but no runner in this process holds it: its process died. Resume it. */
  interrupted: boolean;
  task: TaskDefinition;
  settings: TatraSettings;
  generator: ModelRef;
  evaluator: ModelRef;
  dataset: {
    path: string;
    fingerprint: string;
    format: DatasetFormat;
    mapping: ColumnMapping;
    stats: DatasetStats;
  };
  limit: number | null;
  baseline: boolean;
  concurrency: number;
  error: string | null;
  rowsTotal: number;
  rowsDone: number;
  rowsFailed: number;
  /** Rows done whose prediction equals gold (gold present). */
  rowsCorrect: number;
  /** Rows done that have a gold value. */
  rowsWithGold: number;
  /** Time spent running, summed over sessions (pauses and downtime excluded). */
  elapsedMs: number;
  /**
   * True when every session ran on backends that give the same output for the same request (so
   * the same job again gives the same rows); false when one did not (a remote server, a GPU
   * build); null before the first session.
   */
  deterministic: boolean | null;
  /** Calls and tokens really sent to the models, all sessions (jobs/usage.ts). */
  usage: Usage;
  /** The limit the job stops before exceeding; null: none. */
  budget: JobBudget | null;
  /** Why the job last stopped short of its end: `budget` when its budget ran out (paused, resumable). */
  stoppedBy: 'budget' | 'race' | null;
}

export type RowStatus = 'pending' | 'done' | 'failed';

export interface RowRun {
  run: number;
  seed: number;
  paraphrases: string[];
  predictions: Prediction[];
  fallback: ParaphraseFallback | null;
  /** Scope `input` only: this row's own examples for the run (scope `run`: see StoredRunExamples). */
  examples?: Example[];
}

export interface BaselineResult {
  label: string | null;
  raw: string;
  correct: boolean | null;
}

export interface JobRow {
  index: number;
  line: number;
  input: string;
  gold: string | null;
  goldRaw: string | null;
  status: RowStatus;
  prediction: string | null;
  /** null when there is no gold. */
  correct: boolean | null;
  /** Math only: the reference code's "gold string appears in an output" score. */
  lenientCorrect: boolean | null;
  confidence: number | null;
  votes: Record<string, number> | null;
  tieBreak: string | null;
  runs: RowRun[] | null;
  baseline: BaselineResult | null;
  stages: Record<StageName, StageStats> | null;
  ms: number | null;
  error: string | null;
}

export interface RowQuery {
  offset?: number;
  limit?: number;
  /** Only done rows whose prediction differs from gold. */
  onlyWrong?: boolean;
  /** Default `index`. */
  sort?: 'index' | 'confidence-asc' | 'confidence-desc';
  /**
   * false: each row without its runs and stage counts (runs and stages null), for a table that
   * shows the votes alone: decompressing and expanding a page's runs was most of its read.
   */
  runs?: boolean;
}

export interface RowPage {
  total: number;
  rows: JobRow[];
}

/** Examples stored for one run of a job (scope `run`): shared by every row of that run. */
export interface StoredRunExamples {
  run: number;
  seed: number;
  examples: Example[];
  filtered: ExampleFilterCounts;
  stats: StageStats;
}

/** Progress of a job as every face sees it: the contract's (common/contract/jobs.ts). */
export type JobProgress = ContractJobProgress;

export type JobEvent =
  | { type: 'progress'; progress: JobProgress }
  | { type: 'row'; jobId: string; row: JobRow }
  /** `status` as every face shows it (`interrupted` for a job whose process died: jobStatus). */
  | { type: 'status'; jobId: string; status: JobStatus; error: string | null };

export type JobEventType = JobEvent['type'];
export type JobEventOf<T extends JobEventType> = Extract<JobEvent, { type: T }>;

// ---------------------------------------------------------------- metrics

export interface LabelMetrics {
  label: string;
  /** Rows whose gold is this label. */
  support: number;
  /** Rows predicted as this label. */
  predicted: number;
  truePositives: number;
  /** 0 when nothing was predicted as this label (sklearn's zero_division=0). */
  precision: number;
  /** 0 when the label never occurs in gold. */
  recall: number;
  f1: number;
}

export interface JobMetrics {
  kind: TaskDefinition['kind'];
  /** Rows done that have gold (the denominator of every accuracy). */
  evaluated: number;
  rowsDone: number;
  rowsTotal: number;
  correct: number;
  /** null when no row with gold is done. */
  accuracy: number | null;
  /** Accuracy of run j's votes alone (original + paraphrases of run j), j = 0..r-1. */
  perRunAccuracy: Array<number | null>;
  /** Accuracy after re-voting with the first j+1 runs, j = 0..r-1 (the last equals `accuracy`). */
  accuracyAfterRuns: Array<number | null>;
  /** Classification and multiple choice only (empty for math). */
  labels: string[];
  perLabel: LabelMetrics[];
  /** Mean F1 over the task's labels (labels that never occur count with F1 0). */
  macroF1: number | null;
  /** confusion[i][j]: rows with gold labels[i] predicted `predicted[j]`. */
  confusion: number[][];
  /** The confusion matrix's columns: the labels, then NO_VOTE_COLUMN for rows with no valid vote. */
  predicted: string[];
  /** Histogram of the winner's vote share over done rows: 10 bins [0,0.1), …, [0.9,1.0]. */
  confidenceHistogram: Array<{ from: number; to: number; count: number }>;
  /** How well the confidence predicts correctness over the scored rows (jobs/calibration.ts). */
  calibration: Calibration;
  /** The accuracy–coverage curve: answering only rows with confidence ≥ threshold. */
  selective: SelectivePoint[];
  /** Coverage and accuracy on the answered rows at the minimum confidence asked for; null when none was. */
  answered: AnsweredMetrics | null;
  math: null | {
    /** Extracted, normalised final answer equals the normalised gold. */
    strictAccuracy: number | null;
    /** The reference code's score: the gold string appears somewhere in an evaluator output. */
    lenientGoldInOutputAccuracy: number | null;
  };
  baseline: null | {
    evaluated: number;
    correct: number;
    accuracy: number | null;
    macroF1: number | null;
    /** The baseline's confusion matrix, as `confusion` (empty for math). */
    confusion: number[][];
    /** TATRA (first) against the baseline (second) on the rows both scored. */
    versus: PairedTable;
  };
  /** Each score's 95 % interval (jobs/metric-intervals.ts); absent where metrics were computed without them. */
  intervals?: JobIntervals;
}

// ---------------------------------------------------------------- runner seams

// Leases and the provider that hands them out are the hold room's (hold/lease.ts).
export type { BackendLease, BackendProvider } from '../hold/lease';

export type { ExportFormat };

/**
 * The input lengths (characters: code points, as SQLite's length() counts text) of a job's rows,
 * all of them and those done before a session; the ETA weighs rows by them (row-progress.ts).
 * Unknown (a job without its rows at hand), every row weighs alike.
 */
export interface RowSizes {
  all: number;
  done: number;
}
