// A job session's progress as the contract's JobProgress: rows done, failed and correct, and the
// model calls behind them (common/calls.ts), with the rate and the time left measured over calls.
import { accuracyOf, type JobProgress } from '../common/contract/jobs';
import { callPlan, exampleCallsPerRun, type CallPlan } from '../common/calls';
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
 */
interface CallTally {
  plan: CallPlan;
  done: number;
  eta: EtaEstimator;
  /** Last progress event sent for a call (events for every call would flood a fast job). */
  lastEmit: number;
}

function newCallTally(job: JobInfo, storedExampleRuns: number): CallTally {
  const plan = callPlan(job.task, job.settings, { rows: job.rowsTotal, baseline: job.baseline });
  const shared = Math.min(plan.shared, storedExampleRuns * exampleCallsPerRun(job.task, job.settings.k));
  // Failed rows are tried again, so only done rows count as done.
  return { plan, done: shared + plan.perRow * job.rowsDone, eta: new EtaEstimator(), lastEmit: 0 };
}

export function countCalls(calls: CallTally, n: number): void {
  calls.done = Math.min(calls.plan.total, calls.done + n);
  calls.eta.observe(calls.done, Date.now());
}

export function rowsProgress(jobId: string, tally: RowTally, phase: JobProgress['phase'] = 'rows'): JobProgress {
  const minutes = (Date.now() - tally.sessionStart) / 60000;
  const rate = minutes > 0 && tally.session > 0 ? tally.session / minutes : 0;
  const { calls } = tally;
  return {
    jobId,
    phase,
    done: tally.done,
    total: tally.total,
    failed: tally.failed,
    rowsPerMinute: rate,
    etaSeconds: calls.eta.etaSeconds(calls.plan.total - calls.done, Date.now()),
    etaRange: calls.eta.etaRange(calls.plan.total - calls.done, Date.now()),
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
    done: job.rowsDone,
    total: job.rowsTotal,
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
