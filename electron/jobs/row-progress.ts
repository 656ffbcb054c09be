// A job session's progress as the contract's JobProgress: rows done, failed and correct, and the
// model calls behind them (common/calls.ts), with the rate and the time left measured over calls
// weighted by what they cost (below).
import { accuracyOf, type JobProgress } from '../common/contract/jobs';
import { callPlan, exampleCallsPerRun, type CallPlan } from '../common/calls';
import type { StageName, StageStats, TatraSettings } from '../common/tatra';
import { EtaEstimator } from '../common/eta';
import type { JobInfo } from './types';

/** Progress events for calls inside a row come at most this often (each finished row sends one too). */
export const PROGRESS_EVERY_MS = 250;

/** A session's running counts (done and correct include rows finished before it). */
export interface RowTally {
  done: number;
  failed: number;
  correct: number;
  withGold: number;
  /** Rows finished in this session: the rate's numerator. */
  session: number;
  total: number;
  sessionStart: number;
  /** The job's deterministic flag with this session counted. */
  deterministic: boolean | null;
  calls: CallTally;
}

/**
 * A session's progress in model calls (common/calls.ts): the job's plan, and the calls accounted
 * for so far. A call counts when its event arrives (an example set, a run's paraphrases, a
 * prediction); a row that ends is credited its whole plan (an early decision or a cache hit made
 * fewer calls), so the count reaches the plan exactly when the job ends. The ETA is over calls,
 * which move from the first second where rows finish in bursts.
 *
 * Calls are not alike: a paraphrase call writes n lines where an evaluation writes a label over
 * a prefix the backend already holds, so a row's few generator calls can take most of its time.
 * Counted one each, the rate swung with where the rows in flight were (generator calls, few and
 * slow, then a burst of evaluations) and the calls left were mostly cheap evaluations of rows
 * already paraphrased near the end: the ETA missed by up to 90 % in process. So the ETA is over
 * `work`: each call weighted by the share of a row's time its side takes (generator stages against
 * the evaluation stage, measured over the rows finished so far), scaled so a row's calls still
 * weigh its plan (the totals, and so the time left, are in calls).
 */
interface CallTally {
  plan: CallPlan;
  done: number;
  /** Calls done, weighted (see above): the ETA's measure. */
  work: number;
  /** Generator calls in a row's plan (paraphrase calls, examples with scope `input`); the rest are the evaluator's. */
  generatorPerRow: number;
  /** Time the finished rows spent in generator stages and in evaluation, ms. */
  stageMs: { generator: number; evaluator: number };
  eta: EtaEstimator;
  /** Last progress event sent for a call (events for every call would flood a fast job). */
  lastEmit: number;
}

/** Which model a call goes to. */
export type CallSide = 'generator' | 'evaluator';

/** Generator calls in one row: a paraphrase call per run (n > 0), and the run's example calls with scope `input`. */
export function generatorCallsPerRow(task: JobInfo['task'], settings: Pick<TatraSettings, 'n' | 'k' | 'r' | 'scope'>): number {
  return settings.r * ((settings.n > 0 ? 1 : 0) + (settings.scope === 'input' ? exampleCallsPerRun(task, settings.k) : 0));
}

function newCallTally(job: JobInfo, storedExampleRuns: number): CallTally {
  const plan = callPlan(job.task, job.settings, { rows: job.rowsTotal, baseline: job.baseline });
  const shared = Math.min(plan.shared, storedExampleRuns * exampleCallsPerRun(job.task, job.settings.k));
  // Failed rows are tried again, so only done rows count as done.
  const done = shared + plan.perRow * job.rowsDone;
  return {
    plan,
    done,
    work: done,
    generatorPerRow: generatorCallsPerRow(job.task, job.settings),
    stageMs: { generator: 0, evaluator: 0 },
    eta: new EtaEstimator(),
    lastEmit: 0,
  };
}

/** What one call of a side weighs in `work`: 1 until a row has finished with both sides timed. */
export function callWeight(calls: Pick<CallTally, 'plan' | 'generatorPerRow' | 'stageMs'>, side: CallSide): number {
  const g = calls.generatorPerRow;
  const e = calls.plan.perRow - g;
  const { generator, evaluator } = calls.stageMs;
  if (g === 0 || e === 0 || !(generator > 0) || !(evaluator > 0)) return 1;
  const share = generator / (generator + evaluator);
  return side === 'generator' ? (share * calls.plan.perRow) / g : ((1 - share) * calls.plan.perRow) / e;
}

/** Calls made once for the job (run examples): one work unit each. */
export function countCalls(calls: CallTally, n: number): void {
  calls.done = Math.min(calls.plan.total, calls.done + n);
  calls.work = Math.min(calls.plan.total, calls.work + n);
  calls.eta.observe(calls.work, Date.now());
}

/** A row's calls credited so far: counted, and weighted. */
export interface RowCredit {
  calls: number;
  work: number;
}

/** A row starts: nothing credited yet. */
export function startRow(): RowCredit {
  return { calls: 0, work: 0 };
}

/** One call of a row, from its event; false (nothing counted) once the row has been credited its plan. */
export function countRowCall(calls: CallTally, row: RowCredit, side: CallSide): boolean {
  if (row.calls >= calls.plan.perRow) return false;
  row.calls++;
  calls.done = Math.min(calls.plan.total, calls.done + 1);
  const w = Math.min(callWeight(calls, side), calls.plan.perRow - row.work);
  if (w > 0) {
    row.work += w;
    calls.work = Math.min(calls.plan.total, calls.work + w);
  }
  calls.eta.observe(calls.work, Date.now());
  return true;
}

/** A row that ended: credited the rest of its plan; a finished row's stage times weigh the calls of the rows after it. */
export function settleRow(calls: CallTally, row: RowCredit, stages?: Record<StageName, StageStats>): void {
  calls.done = Math.min(calls.plan.total, calls.done + Math.max(0, calls.plan.perRow - row.calls));
  calls.work = Math.min(calls.plan.total, calls.work + Math.max(0, calls.plan.perRow - row.work));
  row.calls = row.work = calls.plan.perRow;
  if (stages) {
    // A row's examples take time only with scope `input` (otherwise the job's, handed in).
    calls.stageMs.generator += stages.examples.ms + stages.paraphrases.ms;
    calls.stageMs.evaluator += stages.evaluation.ms;
  }
  calls.eta.observe(calls.work, Date.now());
}

export function rowsProgress(jobId: string, tally: RowTally, phase: JobProgress['phase'] = 'rows'): JobProgress {
  const minutes = (Date.now() - tally.sessionStart) / 60000;
  const rate = minutes > 0 && tally.session > 0 ? tally.session / minutes : 0;
  const { calls } = tally;
  const now = Date.now();
  // Every call done is nothing left, whatever the weights' rounding left in `work`.
  const left = calls.done >= calls.plan.total ? 0 : Math.max(0, calls.plan.total - calls.work);
  return {
    jobId,
    phase,
    rowsDone: tally.done,
    rowsTotal: tally.total,
    failed: tally.failed,
    rowsPerMinute: rate,
    etaSeconds: calls.eta.etaSeconds(left, now),
    etaRange: calls.eta.etaRange(left, now),
    callsDone: calls.done,
    callsTotal: calls.plan.total,
    runningAccuracy: accuracyOf(tally.correct, tally.withGold),
    deterministic: tally.deterministic,
  };
}

/** A session's tally at its start: the job's counts as stored, its calls as planned. */
export function sessionTally(job: JobInfo, storedExampleRuns: number): RowTally {
  return {
    done: job.rowsDone,
    failed: 0,
    correct: job.rowsCorrect,
    withGold: job.rowsWithGold,
    session: 0,
    total: job.rowsTotal,
    sessionStart: Date.now(),
    deterministic: job.deterministic,
    calls: newCallTally(job, storedExampleRuns),
  };
}

/** Progress before any row of a session is done (loading models, making examples): the counts as stored. */
export function startProgress(job: JobInfo, phase: JobProgress['phase'], storedExampleRuns: number): JobProgress {
  const calls = newCallTally(job, storedExampleRuns);
  return {
    jobId: job.id,
    phase,
    rowsDone: job.rowsDone,
    rowsTotal: job.rowsTotal,
    failed: job.rowsFailed,
    rowsPerMinute: 0,
    etaSeconds: null,
    etaRange: null,
    callsDone: calls.done,
    callsTotal: calls.plan.total,
    runningAccuracy: accuracyOf(job.rowsCorrect, job.rowsWithGold),
    deterministic: job.deterministic,
  };
}
