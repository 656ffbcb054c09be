// How many model calls TATRA makes (docs/method.md): per run, per input and for a data set. One
// count for the engine (calls an early decision saved), a job's progress (measured in calls, which
// exist from the first second, where rows finish in bursts) and the plan the page shows before
// Start. Without caches: a cache hit is a planned call that cost nothing.
// common/: no Node, no DOM.
import type { TaskDefinition } from './task';
import type { TatraSettings } from './tatra';

type Shape = Pick<TatraSettings, 'n' | 'k' | 'r' | 'scope'>;

/** Generator calls that write one run's examples: one per label given at least one of the k (one for a math task). */
export function exampleCallsPerRun(task: Pick<TaskDefinition, 'kind' | 'labels'>, k: number): number {
  if (k <= 0) return 0;
  return task.kind === 'math' ? 1 : Math.min(k, task.labels.length);
}

/** Calls one run of one input makes: its examples (unless a job made them once), one paraphrase call, n+1 evaluations. */
export function callsPerRun(task: Pick<TaskDefinition, 'kind' | 'labels'>, settings: Pick<TatraSettings, 'n' | 'k'>, examplesFromJob: boolean): number {
  return (examplesFromJob ? 0 : exampleCallsPerRun(task, settings.k)) + (settings.n > 0 ? 1 : 0) + settings.n + 1;
}

export interface CallPlan {
  /** Calls each row makes (its r runs, its own examples with scope `input`, the baseline call). */
  perRow: number;
  /** Calls made once for the whole data set: every run's examples with scope `run`. */
  shared: number;
  rows: number;
  /** shared + perRow × rows: the most a job makes (an early decision makes fewer). */
  total: number;
}

/** The calls a job over `rows` rows plans to make. */
export function callPlan(task: Pick<TaskDefinition, 'kind' | 'labels'>, settings: Shape, opts: { rows: number; baseline?: boolean }): CallPlan {
  const sharedExamples = settings.scope === 'run';
  const perRow = settings.r * callsPerRun(task, settings, sharedExamples) + (opts.baseline ? 1 : 0);
  const shared = sharedExamples ? settings.r * exampleCallsPerRun(task, settings.k) : 0;
  return { perRow, shared, rows: opts.rows, total: shared + perRow * opts.rows };
}
