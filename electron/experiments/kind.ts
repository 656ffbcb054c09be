// What a kind of experiment is. One definition per kind (sweep.ts, compare.ts), registered once
// (registry.ts): the runner reads its cells and their jobs (experiment.ts), the manager how it is
// created, summed up, shown and written out (manager.ts), the planner what it will cost (`plan`)
// and, for its time left, what each cell costs. The API handler, the CLI and the page reach every
// kind through these and never branch on the kind: a new kind, or a new part of a kind's result,
// is added here and in its definition.
import type { ExperimentHead, RaceDrop } from '../common/contract/experiment-progress';
import type { ExperimentKind, ExperimentResult, ExperimentSummary } from '../common/contract/experiments';
import type { CostPlan, CountRange, Price } from '../common/plan';
import type { TatraBackend } from '../engine/backend';
import type { StoredExperiment } from '../jobs/experiment-store';
import type { Planner } from '../jobs/planner';
import type { BackendProvider, DatasetFormat, JobInfo, JobSpec } from '../jobs/types';
import type { JobStatus } from '../common/contract/jobs';

/** A stored status, or `interrupted`: stored as running, but the process that ran it died (a job's words). */
export type ExperimentStatus = JobStatus;

/** A cell of the grid with the job that runs it (null before it was created). */
export interface CellState<Cell> {
  cell: Cell;
  job: JobInfo | null;
  /** Why its job could not even be created, when that happened in this process's last start of it. */
  error: string | null;
  /** Dropped from a race (race.ts): after how many rows and why; null otherwise. */
  dropped: RaceDrop | null;
}

/** A cell still to run, with what its job has done (none before it is made). */
export interface CellLeft<Cell> {
  cell: Cell;
  rowsDone: number;
  /** Runs whose examples its job has made. */
  examplesMade: readonly number[];
}

/** The planner's time for a cell's work left (seconds; null where nothing measured its models' speed) and the rows that covers. */
export interface CellPrice {
  seconds: CountRange | null;
  rows: number;
}

/** A cell whose job was never made, in a cell's words: queued, or cancelled once its experiment has stopped for good. */
export function unmadeCellStatus(status: ExperimentStatus): 'queued' | 'cancelled' {
  return status === 'cancelled' || status === 'failed' ? 'cancelled' : 'queued';
}

/** What the runner reads of a kind: its cells, the job each runs, the models it holds, what a failure means. */
export interface ExperimentCells<Spec, Cell> {
  kind: ExperimentKind;
  /** How messages name it: "sweep", "comparison". */
  noun: string;
  /** The cells in run order: the experiment's plan (what a dry run shows, what a budget weighs). */
  cells(spec: Spec): Cell[];
  /** A cell's stable key (stored beside its job). */
  key(cell: Cell): string;
  /** A cell in messages ("n=2 k=4 seed=1"). */
  describe(cell: Cell): string;
  /** The models a cell's job runs on: what its budget share is priced by. */
  models(spec: Spec, cell: Cell): { generator: string; evaluator: string };
  /** The job that runs a cell. */
  job(experiment: StoredExperiment<Spec>, cell: Cell): Promise<Omit<JobSpec, 'signal'>>;
  /** Models held while a cell runs and kept while the next cells want them, so each loads once. */
  hold(spec: Spec, cell: Cell): readonly string[];
  /** Rows in flight in each job: the held models load with this many sequences. */
  concurrency(spec: Spec): number;
  /**
   * A failed job: 'stop' ends the experiment failed (a sweep's later points would be meaningless),
   * and its first job is created with it, so what cannot serve fails at once; 'continue' records
   * it and runs the other cells (a comparison's other pairs still count).
   */
  onJobFailed: 'stop' | 'continue';
  /**
   * Progress events while rows finish come at most this often (0: with every row); a cell's start
   * and end and every change of status always publish.
   */
  publishEveryMs: number;
  /**
   * The planner's time for each cell still to run, in run order (jobs/planner.ts cellSeconds,
   * what the kind's plan prices): the experiment's time left (experiment-eta.ts).
   */
  price(experiment: StoredExperiment<Spec>, left: readonly CellLeft<Cell>[], planner: Planner): Promise<CellPrice[]>;
  /** Raced (`--race`): its cells run in rounds, and a pairing shown worse than another drops (race.ts). */
  raced(spec: Spec): boolean;
  /** What a race drops a cell with (a comparison: its pair; a sweep: its (n, k), every seed), and that in a reason's words. */
  entrant(cell: Cell): { key: string; name: string };
  /** Wraps the backends of a cell's job (a sweep shares evaluations between its jobs). */
  wrap?(role: 'generator' | 'evaluator', backend: TatraBackend): TatraBackend;
}

export type SummaryOf<K extends ExperimentKind> = Extract<ExperimentSummary, { kind: K }>;
export type ResultOf<K extends ExperimentKind> = Extract<ExperimentResult, { kind: K }>;
/** A kind's own fields of its summary: what the head, the same for every kind, does not say. */
export type SummaryFields<K extends ExperimentKind> = Omit<SummaryOf<K>, keyof ExperimentHead | 'kind'>;
/** A kind's own fields of its result: what its summary does not say (a sweep's points, a comparison's pairs). */
export type ResultFields<K extends ExperimentKind> = Omit<ResultOf<K>, keyof SummaryOf<K>>;

/** What a plan may be asked for beyond the input a start takes. */
export interface PlanOptions {
  /** Prices every model (--price-in/--price-out); default: remote entries' prices. */
  price?: Price;
  /** Measure the speed now on the pool's models (a calibration; `--calibrate`). */
  calibrate?: { pool: BackendProvider };
  /** The data file's format when its extension does not say (`--format`). */
  format?: DatasetFormat;
  /** Stops the plan (the app's plan when its settings change again: api/handlers/plans.ts). */
  signal?: AbortSignal;
}

/** A kind of experiment: its cells, and how one is created, summed up, shown, written out and planned. */
export interface ExperimentKindDefinition<K extends ExperimentKind, Spec, Cell> extends ExperimentCells<Spec, Cell> {
  kind: K;
  /**
   * Checks a start's input (the spec: task, models, data set, columns, settings) and says what is
   * stored, everything a resume needs; nothing is recorded yet. Bad input is one UserError.
   */
  create(input: unknown): Promise<{ name: string; spec: Spec }>;
  /** Its own fields of a summary (the task, the data, the models). */
  summary(experiment: StoredExperiment<Spec>): SummaryFields<K>;
  /** Its own fields of the result so far, from its cells as they stand. */
  result(experiment: StoredExperiment<Spec>, states: readonly CellState<Cell>[], status: ExperimentStatus): ResultFields<K>;
  /** The CSV export: one line per point or pair. */
  csv(result: ResultOf<K>): string;
  /** What a start with this input would cost, before anything runs (the one planner, jobs/planner.ts). */
  plan(input: unknown, planner: Planner, opts: PlanOptions): Promise<CostPlan>;
}
