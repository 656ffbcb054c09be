// The one API of long experiments, sweeps and comparisons alike (electron/experiments/): one id
// (a sweep's starts with "s", a comparison's with "c"), one status vocabulary (a job's), one
// progress event, one start, pause, resume, cancel and export. The kind is a field; what differs
// (the spec, the summary, the result) is a union on it, each kind's shape in sweeps.ts and
// comparisons.ts.
import { z } from 'zod';
import { Budget } from '../plan';
import { method } from './define';
import { ExperimentProgress } from './experiment-progress';
import { JobStatus } from './jobs';
import { ComparisonResult, ComparisonStartInput, ComparisonSummary } from './comparisons';
import { SweepResult, SweepStartInput, SweepSummary } from './sweeps';

/** The kind as the job database stores it (and as every face names it). */
export const ExperimentKind = z.enum(['sweep', 'compare']);
export type ExperimentKind = z.infer<typeof ExperimentKind>;

/** Every experiment is named by its id alone (or, in the CLI, a unique prefix of it). */
const ById = z.object({ id: z.string().min(1) });

export const ExperimentStartInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sweep'), spec: SweepStartInput }),
  z.object({ kind: z.literal('compare'), spec: ComparisonStartInput }),
]);
export type ExperimentStartInput = z.input<typeof ExperimentStartInput>;

/** One line of the history. */
export const ExperimentSummary = z.discriminatedUnion('kind', [SweepSummary.extend({ kind: z.literal('sweep') }), ComparisonSummary.extend({ kind: z.literal('compare') })]);
export type ExperimentSummary = z.infer<typeof ExperimentSummary>;

/** Everything so far: a sweep's points over the seeds done, a comparison's pairs. */
export const ExperimentResult = z.discriminatedUnion('kind', [SweepResult.extend({ kind: z.literal('sweep') }), ComparisonResult.extend({ kind: z.literal('compare') })]);
export type ExperimentResult = z.infer<typeof ExperimentResult>;

/** Streamed while an experiment of this process runs: at each cell's start and end, each status change and as rows finish. */
export const ExperimentProgressEvent = z.object({
  kind: ExperimentKind,
  id: z.string(),
  status: JobStatus,
  progress: ExperimentProgress,
});
export type ExperimentProgressEvent = z.infer<typeof ExperimentProgressEvent>;

export const experimentsMethods = {
  /** Creates an experiment and starts it in the background; answers at once. Bad models, data sets and columns answer this call. */
  'experiments.start': method(ExperimentStartInput, ExperimentSummary),
  /** Stops after pausing the running cell's job (its finished rows stay); resumable. */
  'experiments.pause': method(ById, ExperimentSummary),
  /**
   * Continues a paused, interrupted, cancelled or failed experiment: finished cells stay, the rest
   * run. budget: a new budget for all its jobs together (a resume may raise it).
   */
  'experiments.resume': method(ById.extend({ budget: Budget.optional() }), ExperimentSummary),
  /** Stops after cancelling the running cell's job; still resumable explicitly. */
  'experiments.cancel': method(ById, ExperimentSummary),
  /** Newest first; `kind` lists one kind only. */
  'experiments.list': method(z.object({ kind: ExperimentKind.optional() }).default({}), z.array(ExperimentSummary)),
  'experiments.get': method(ById, ExperimentResult),
  /** Writes the CSV (a sweep's points, a comparison's pairs, one a line) or JSON (the result) into the data folder's exports. */
  'experiments.export': method(ById.extend({ format: z.enum(['csv', 'json']) }), z.object({ path: z.string(), filename: z.string(), bytes: z.number().int() })),
};

export const experimentsEvents = {
  'experiment.progress': ExperimentProgressEvent,
};
