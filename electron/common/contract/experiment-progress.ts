// What sweeps and comparisons share: both are long experiments made of evaluation jobs, one per
// cell of a grid, run one after another and resumed after a stop or a kill
// (electron/experiments/experiment.ts). One head, one progress model and one cell status for both;
// their own shapes (sweeps.ts, comparisons.ts) extend them, and experiments.ts is their one API.
import { z } from 'zod';
import { Budget, Usage } from '../plan';
import { JobStatus } from './jobs';

export const ExperimentProgress = z.object({
  /** Cells (jobs) finished. */
  jobsDone: z.number().int(),
  jobsTotal: z.number().int(),
  /** Rows classified over every job (each job classifies every row). */
  rowsDone: z.number().int(),
  rowsTotal: z.number().int(),
  /** Time the jobs spent running, summed. */
  elapsedSeconds: z.number(),
  /** null until a rate is known. */
  etaSeconds: z.number().nullable(),
  /** While the running job's rate is not stable yet: the time left from the fastest to the slowest rate seen (a job's etaRange). */
  etaRange: z.object({ min: z.number(), max: z.number() }).nullable().default(null),
});
export type ExperimentProgress = z.infer<typeof ExperimentProgress>;

/**
 * A cell (a sweep's job, a comparison's pair) in the words every kind of work uses (JobStatus):
 * `queued` before its job runs; `paused` when its job stopped part-way (the experiment was paused
 * or its process died), so never `interrupted`.
 */
export const CellStatus = z.enum([...JobStatus.exclude(['interrupted']).options, 'dropped']);
export type CellStatus = z.infer<typeof CellStatus>;

/**
 * A raced cell's drop (docs/method.md §16, racing): after how many rows of the race order, shown
 * worse than which pairing (a sweep: which setting), by how much on the rows both scored, in words.
 */
export const RaceDrop = z.object({
  afterRows: z.number().int(),
  /** The pairing or setting it was shown worse than, as the experiment names its cells. */
  by: z.string(),
  /** Its accuracy minus that one's on the rows both scored by then (a fraction). */
  difference: z.number(),
  /** "worse than <by> at 95 % after N rows". */
  reason: z.string(),
});
export type RaceDrop = z.infer<typeof RaceDrop>;

/** Where a raced experiment stands: rounds of the same rows, decided after each. */
export const RaceSummary = z.object({
  /** Rows per round. */
  roundRows: z.number().int(),
  /** Rounds decided (every pairing still in had run them). */
  rounds: z.number().int(),
  /** Rows of the race order those rounds cover. */
  rowsDecided: z.number().int(),
  /** Pairings (settings) still in, and dropped. */
  alive: z.number().int(),
  dropped: z.number().int(),
});
export type RaceSummary = z.infer<typeof RaceSummary>;

/** What every experiment's summary says, whatever its kind: its kind adds its own fields (the task, the data, the models). */
export const ExperimentHead = z.object({
  id: z.string(),
  name: z.string(),
  /** A job's words (one vocabulary for every kind of work). */
  status: JobStatus,
  /** Raced (`--race`): where the race stands; null when it runs every cell on every row. */
  race: RaceSummary.nullable().default(null),
  createdAt: z.number(),
  /** When it last changed (its runner's heartbeat while it runs). */
  updatedAt: z.number(),
  error: z.string().nullable(),
  /** The experiments' one progress model: cells (jobs) and rows done, time, time left. */
  progress: ExperimentProgress,
  /** What its jobs really sent to the models, together (a shared answer counts once). */
  usage: Usage.nullable().default(null),
  /** The limit its jobs together stop before exceeding; null: none. */
  budget: Budget.nullable().default(null),
  /** `budget`: paused because its budget would have been exceeded (resume with a larger one). */
  stoppedBy: z.enum(['budget']).nullable().default(null),
});
export type ExperimentHead = z.infer<typeof ExperimentHead>;
