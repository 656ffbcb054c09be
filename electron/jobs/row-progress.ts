// A job session's progress as the contract's JobProgress: rows done, failed and correct, and the
// model calls behind them (common/calls.ts), with the rate and the time left measured over calls
// weighted by what they cost (below).
import { channel } from 'node:diagnostics_channel';
import { accuracyOf, type JobProgress } from '../common/contract/jobs';
import { callPlan, exampleCallsPerRun, type CallPlan } from '../common/calls';
import type { StageName, StageStats, TatraSettings } from '../common/tatra';
import { EtaEstimator } from '../common/eta';
import type { JobInfo, RowSizes } from './types';

/** Progress events for calls inside a row come at most this often (each finished row sends one too). */
export const PROGRESS_EVERY_MS = 250;
/** While rows are in flight and nothing else sent one, a progress event this often: the time left moves on between calls (workInFlight). */
export const PROGRESS_TICK_MS = 1000;

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
 * work: each call weighted by the share of a row's time its side takes (generator stages against
 * the evaluation stage, measured over the rows finished so far), scaled so a row's calls still
 * weigh its plan (the totals, and so the time left, are in calls). Each side's calls are counted
 * apart and weighed when the rate is read, with the latest weights: weighted as they came, the
 * calls before the first row ended (weight 1 each, no row timed yet) and those after it were in
 * different units, the rate jumped when the weights came, and the ETA stayed a wide range for the
 * first quarter of an in-process job.
 */
interface CallTally {
  plan: CallPlan;
  done: number;
  /**
   * Calls done by kind: the job's own (run examples, weight 1), the generator's, the generator's
   * again each counted as its row's input length (sizeWeights), the evaluator's (rows' calls).
   */
  sides: [once: number, generator: number, generatorSize: number, evaluator: number];
  /** Generator calls in a row's plan (paraphrase calls, examples with scope `input`); the rest are the evaluator's. */
  generatorPerRow: number;
  /** Time the finished rows spent in generator stages and in evaluation, ms. */
  stageMs: { generator: number; evaluator: number };
  /** Each side's cost of a call as the calls' ends over time tell it (callCosts). */
  costs: CostFit;
  /** The mean input length of the job's rows, and how a row's generator time goes with its input's (sizeWeights). */
  size: { mean: number; fit: SizeFit };
  eta: EtaEstimator;
  /** Rows in flight. */
  inFlight: Set<RowCredit>;
  /** When the rows started and the calls done then, by kind. */
  rowsFrom: { t: number; sides: readonly number[] };
  /** How far the credit trails the work (workInFlight), once measured, and the rows in flight then. */
  lag: { ms: number; rows: number } | null;
  /** Last progress event sent for a call (events for every call would flood a fast job). */
  lastEmit: number;
}

/**
 * What the ETA was fed, for bench/eta.ts --trace to record and --replay to feed an estimator again
 * offline (the same events, the same clock): published only while someone subscribes.
 */
export const etaTrace = channel('tatra.eta');
export type EtaTraceEvent =
  | { type: 'rows'; t: number }
  | { type: 'calls'; t: number; n: number }
  | { type: 'start'; t: number; row: number; size?: number }
  | { type: 'call'; t: number; row: number; side: CallSide }
  | { type: 'settle'; t: number; row: number; stages: { generator: number; evaluator: number } | null };
let traceRows = 0;
const traceIds = new WeakMap<RowCredit, number>();
function trace(e: EtaTraceEvent): void {
  if (etaTrace.hasSubscribers) etaTrace.publish(e);
}

/** Which model a call goes to. */
export type CallSide = 'generator' | 'evaluator';

/** Generator calls in one row: a paraphrase call per run (n > 0), and the run's example calls with scope `input`. */
export function generatorCallsPerRow(task: JobInfo['task'], settings: Pick<TatraSettings, 'n' | 'k' | 'r' | 'scope'>): number {
  return settings.r * ((settings.n > 0 ? 1 : 0) + (settings.scope === 'input' ? exampleCallsPerRun(task, settings.k) : 0));
}

/** A row's input length as RowSizes counts it: characters (code points, as SQLite's length() counts text). */
export function inputSize(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function newCallTally(job: JobInfo, storedExampleRuns: number, sizes?: RowSizes): CallTally {
  const plan = callPlan(job.task, job.settings, { rows: job.rowsTotal, baseline: job.baseline });
  const shared = Math.min(plan.shared, storedExampleRuns * exampleCallsPerRun(job.task, job.settings.k));
  const generatorPerRow = generatorCallsPerRow(job.task, job.settings);
  const mean = sizes && job.rowsTotal > 0 ? sizes.all / job.rowsTotal : 0;
  // Failed rows are tried again, so only done rows count as done.
  const sides: CallTally['sides'] = [shared, generatorPerRow * job.rowsDone, generatorPerRow * (sizes?.done ?? 0), (plan.perRow - generatorPerRow) * job.rowsDone];
  return {
    plan,
    done: shared + plan.perRow * job.rowsDone,
    sides,
    generatorPerRow,
    stageMs: { generator: 0, evaluator: 0 },
    costs: newCostFit(Date.now()),
    size: { mean, fit: newSizeFit() },
    eta: new EtaEstimator(),
    inFlight: new Set(),
    rowsFrom: { t: Date.now(), sides: [...sides] },
    lag: null,
    lastEmit: 0,
  };
}

/**
 * Each side's cost of a call in the job's time: the time between the calls' ends, in spans of at
 * least COST_SPAN_MS, fitted by least squares as generator calls × their cost + evaluations ×
 * theirs. A stage's own time says how long a row waited for its calls, not what they cost the
 * backend: on a server with every row's calls queued, a row's evaluations waited seconds behind
 * the other rows' and its paraphrase calls seemed a twentieth of the row, where every call cost
 * the same slot time (the ETA ran 78 % high). The fit needs spans whose mix of calls differs
 * (the start, where only paraphrase calls end, gives them); until then the stages' times weigh.
 */
interface CostFit {
  /** The span being counted: since when, and the calls of each side that ended in it. */
  from: number;
  generator: number;
  evaluator: number;
  /** Sums over the closed spans (g, e: calls; t: ms). */
  gg: number;
  ee: number;
  ge: number;
  tg: number;
  te: number;
}

const COST_SPAN_MS = 1000;

function newCostFit(now: number): CostFit {
  return { from: now, generator: 0, evaluator: 0, gg: 0, ee: 0, ge: 0, tg: 0, te: 0 };
}

/** One call that ended, counted in the span; a span a second old or more is closed into the sums. */
function costCall(fit: CostFit, side: CallSide, now: number): void {
  fit[side]++;
  const t = now - fit.from;
  if (t < COST_SPAN_MS) return;
  const { generator: g, evaluator: e } = fit;
  fit.gg += g * g;
  fit.ee += e * e;
  fit.ge += g * e;
  fit.tg += t * g;
  fit.te += t * e;
  fit.from = now;
  fit.generator = fit.evaluator = 0;
}

/** Each side's cost of a call (ms), or null while the spans cannot tell them apart. */
export function callCosts(fit: CostFit): { generator: number; evaluator: number } | null {
  const det = fit.gg * fit.ee - fit.ge * fit.ge;
  // Spans whose mix hardly varies cannot split the time between the sides.
  if (!(fit.gg > 0 && fit.ee > 0) || det < 0.1 * fit.gg * fit.ee) return null;
  const generator = (fit.tg * fit.ee - fit.te * fit.ge) / det;
  const evaluator = (fit.te * fit.gg - fit.tg * fit.ge) / det;
  // A side fitted at no cost or less: the fit is noise, not a measure.
  if (!(generator > 0 && evaluator > 0)) return null;
  return { generator, evaluator };
}

/** What one call of a side weighs: its share of a row's cost (callCosts, else the stages' times), 1 until known. */
export function callWeight(calls: Pick<CallTally, 'plan' | 'generatorPerRow' | 'stageMs' | 'costs'>, side: CallSide): number {
  const g = calls.generatorPerRow;
  const e = calls.plan.perRow - g;
  if (g === 0 || e === 0) return 1;
  const fitted = callCosts(calls.costs);
  let share: number;
  if (fitted) share = (g * fitted.generator) / (g * fitted.generator + e * fitted.evaluator);
  else {
    const { generator, evaluator } = calls.stageMs;
    if (!(generator > 0) || !(evaluator > 0)) return 1;
    share = generator / (generator + evaluator);
  }
  return side === 'generator' ? (share * calls.plan.perRow) / g : ((1 - share) * calls.plan.perRow) / e;
}

/**
 * How a row's generator time goes with its input's length, fitted over the rows finished: a
 * paraphrase is about as long as its input (and the grammar bounds its lines by it), so a long
 * input's paraphrase call decodes for longer. Rows come in the data's order, not shuffled, and a
 * quarter of a job's rows can be shorter on average than the rest: weighed alike, the ETA took
 * the slow stretch of long inputs for the job's pace (+30 % half-way through an in-process job
 * whose last quarter was a tenth shorter). The lengths of the rows still to come are known, so
 * the time left is their calls at what their lengths cost. Fitted as time = a + b × length by
 * least squares; used once it says something (8 rows, b above twice its standard error), three
 * quarters of the cost taken to grow with the length until then; a server that queues the rows'
 * calls, or answers in the same time whatever the length, shows no slope over 32 rows and every
 * row weighs alike, as before. The fixed part is never taken above a quarter (FIXED_SHARE_MAX).
 */
interface SizeFit {
  n: number;
  s: number;
  ss: number;
  y: number;
  sy: number;
  yy: number;
}

function newSizeFit(): SizeFit {
  return { n: 0, s: 0, ss: 0, y: 0, sy: 0, yy: 0 };
}

function fitSize(fit: SizeFit, size: number, ms: number): void {
  fit.n++;
  fit.s += size;
  fit.ss += size * size;
  fit.y += ms;
  fit.sy += size * ms;
  fit.yy += ms * ms;
}

/**
 * What a generator call weighs per call and per character of its row's input, as shares of a
 * call of a row of the job's mean length (a + b × mean): {1, 0} while the lengths tell nothing.
 * Over the job's rows a generator call then weighs 1 on average, as the plan counts it.
 */
export function sizeWeights(calls: Pick<CallTally, 'size'>): { perCall: number; perChar: number } {
  const { mean, fit } = calls.size;
  const none = { perCall: 1, perChar: 0 };
  if (!(mean > 0)) return none;
  // Before 8 rows have told: three quarters of a call's cost taken to grow with the length; the
  // first rows finished are the shortest of those started, and weighed alike they made the pace
  // look fast (−26 % at a tenth of the calls).
  const prior = { perCall: FIXED_SHARE_MAX, perChar: (1 - FIXED_SHARE_MAX) / mean };
  if (fit.n < 8) return prior;
  // Too few rows to tell a slope from noise yet: the prior; past that, no slope is none.
  const unclear = fit.n < 32 ? prior : none;
  const sxx = fit.ss - (fit.s * fit.s) / fit.n;
  const sxy = fit.sy - (fit.s * fit.y) / fit.n;
  const syy = fit.yy - (fit.y * fit.y) / fit.n;
  if (!(sxx > 0 && syy > 0)) return unclear;
  if (!(sxy > 0)) return none;
  const r2 = (sxy * sxy) / (sxx * syy);
  // The slope's t statistic, r √(n − 2) / √(1 − r²), above 2.
  if (r2 < 1 && (r2 * (fit.n - 2)) / (1 - r2) < 4) return unclear;
  const b = sxy / sxx;
  // A fitted intercept below zero (time growing faster than the length): proportional.
  const a = Math.max(0, (fit.y - b * fit.s) / fit.n);
  const fixed = Math.min(FIXED_SHARE_MAX, a / (a + b * mean));
  return { perCall: fixed, perChar: (1 - fixed) / mean };
}

/**
 * The most of a generator call's cost taken not to grow with its row's length. A row's generator
 * time counts the time its calls waited for the other rows' calls, which the fit takes for a
 * fixed cost (about half, on in-process jobs), where the jobs' wall time went with their inputs'
 * characters (the share of characters done tracked the share of the time within 3 points from a
 * third of the job on). Replayed on 29 recorded in-process jobs (bench/eta.ts --replay), the
 * ETA's worst point between 10 and 80 % of the calls was 25 % with the fitted share and a half
 * before the fit, 19 % with a quarter at most; a share held at 15 % or 35 % whatever the fit gave
 * 19 % and 21 %. Chosen on those recordings, on the tiny model only.
 */
const FIXED_SHARE_MAX = 0.25;

/** The weights of the tally's sides (once, generator, generator by length, evaluator). */
function sideWeights(calls: CallTally): number[] {
  const g = callWeight(calls, 'generator');
  const { perCall, perChar } = sizeWeights(calls);
  return [1, g * perCall, g * perChar, callWeight(calls, 'evaluator')];
}

/** The calls done, weighted by their sides' latest weights: the ETA's measure of work done. */
export function workDone(calls: CallTally): number {
  return workOf(calls, calls.sides);
}

function workOf(calls: CallTally, sides: readonly number[]): number {
  const w = sideWeights(calls);
  return sides.reduce((sum, c, i) => sum + c * (w[i] ?? 0), 0);
}

function observe(calls: CallTally): void {
  calls.eta.weigh(sideWeights(calls));
  calls.eta.observe(calls.sides, Date.now());
}

/** Calls made once for the job (run examples): one work unit each. */
export function countCalls(calls: CallTally, n: number): void {
  trace({ type: 'calls', t: Date.now(), n });
  const add = Math.max(0, Math.min(n, calls.plan.total - calls.done));
  calls.done += add;
  calls.sides[0] += add;
  observe(calls);
}

/** A row's calls credited so far, by side; when it started (ms); its input's length (characters). */
export interface RowCredit {
  calls: number;
  generator: number;
  evaluator: number;
  start: number;
  size: number;
}

/** A row starts: nothing credited yet; in flight until settleRow. `size`: its input's length (RowSizes; the job's mean when not given). */
export function startRow(calls: CallTally, size?: number): RowCredit {
  const row = { calls: 0, generator: 0, evaluator: 0, start: Date.now(), size: size ?? calls.size.mean };
  calls.inFlight.add(row);
  if (etaTrace.hasSubscribers) {
    traceIds.set(row, ++traceRows);
    trace({ type: 'start', t: Date.now(), row: traceRows, ...(size !== undefined ? { size } : {}) });
  }
  return row;
}

/**
 * The rows start: the rate is measured from here (loading the models and the job's shared
 * examples are another kind of work, done by now).
 */
export function startRows(tally: RowTally): void {
  tally.sessionStart = Date.now();
  trace({ type: 'rows', t: tally.sessionStart });
  tally.calls.eta = new EtaEstimator();
  tally.calls.rowsFrom = { t: tally.sessionStart, sides: [...tally.calls.sides] };
  tally.calls.costs = newCostFit(tally.sessionStart);
  tally.calls.lag = null;
  observe(tally.calls);
}

/** A row's plan for one side. */
function sidePerRow(calls: CallTally, side: CallSide): number {
  return side === 'generator' ? calls.generatorPerRow : calls.plan.perRow - calls.generatorPerRow;
}

/** One call of a row, from its event; false (nothing counted) once the row has been credited its plan for that side. */
export function countRowCall(calls: CallTally, row: RowCredit, side: CallSide): boolean {
  trace({ type: 'call', t: Date.now(), row: traceIds.get(row) ?? 0, side });
  if (row[side] >= sidePerRow(calls, side) || calls.done >= calls.plan.total) return false;
  row[side]++;
  row.calls++;
  calls.done++;
  if (side === 'generator') {
    calls.sides[1]++;
    calls.sides[2] += row.size;
  } else calls.sides[3]++;
  costCall(calls.costs, side, Date.now());
  observe(calls);
  return true;
}

/** A row that ended: credited the rest of its plan; a finished row's stage times weigh the calls of every row. */
export function settleRow(calls: CallTally, row: RowCredit, stages?: Record<StageName, StageStats>): void {
  trace({ type: 'settle', t: Date.now(), row: traceIds.get(row) ?? 0, stages: stages ? { generator: stages.examples.ms + stages.paraphrases.ms, evaluator: stages.evaluation.ms } : null });
  const g = Math.max(0, calls.generatorPerRow - row.generator);
  const e = Math.max(0, sidePerRow(calls, 'evaluator') - row.evaluator);
  calls.done = Math.min(calls.plan.total, calls.done + g + e);
  calls.sides[1] += g;
  calls.sides[2] += g * row.size;
  calls.sides[3] += e;
  row.generator += g;
  row.evaluator += e;
  row.calls = calls.plan.perRow;
  calls.inFlight.delete(row);
  if (stages) {
    // A row's examples take time only with scope `input` (otherwise the job's, handed in).
    calls.stageMs.generator += stages.examples.ms + stages.paraphrases.ms;
    calls.stageMs.evaluator += stages.evaluation.ms;
    if (calls.generatorPerRow > 0) fitSize(calls.size.fit, row.size, stages.examples.ms + stages.paraphrases.ms);
  }
  observe(calls);
}

/**
 * Work the rows in flight have done beyond their finished calls: a call is credited when it
 * ends, and calls served side by side (the in-process model decodes its sequences in one batch,
 * a server its slots) are all part-way at once, so the credit trails the work, and the time left
 * carried that lag (the ETA ran 30-40 % high in process). The lag is read once, when the rate is
 * first stable: the time from the rows' start to the last call counted less the time the work
 * credited since then takes at that rate (the credit's delay behind the work: the first calls'
 * time, in process seconds; one call's round trip for a server whose slots are full from the
 * start). Then it is that lag at the current rate, shrinking as the rows in flight do at the end.
 * Not each row in flight judged by its age: with every row started at once (a remote job's 50
 * rows sharing a server's 8 slots, served nearly one after another) the rows waiting counted as
 * nearly done (−88 %).
 *
 * Beside the lag, the time since the last call ended, at the rate: the rows in flight went on
 * working while no call ended (an in-process paraphrase call decodes for seconds), and a reading
 * taken then (the periodic progress, PROGRESS_TICK_MS) would otherwise still say the time left as
 * of that call. Both together never exceed most of what the rows in flight have left, so a stall
 * shows as an ETA that stops falling (and grows once the rate is read over the stall), not one
 * that reaches zero.
 */
export function workInFlight(calls: CallTally, now: number, rate: number | null): number {
  // rate: work units per second, null while not stable.
  if (!rate || !(rate > 0) || calls.inFlight.size === 0) return 0;
  const moved = Math.min(now, calls.eta.lastMoved() ?? now);
  if (!calls.lag) {
    const elapsed = moved - calls.rowsFrom.t;
    const credited = workDone(calls) - workOf(calls, calls.rowsFrom.sides);
    calls.lag = { ms: Math.min(elapsed / 2, Math.max(0, elapsed - (credited / rate) * 1000)), rows: calls.inFlight.size };
  }
  const g = callWeight(calls, 'generator');
  const e = callWeight(calls, 'evaluator');
  const { perCall, perChar } = sizeWeights(calls);
  let open = 0;
  for (const row of calls.inFlight) {
    const gRow = g * (perCall + perChar * row.size);
    open += calls.generatorPerRow * gRow + sidePerRow(calls, 'evaluator') * e - row.generator * gRow - row.evaluator * e;
  }
  const lag = Math.min(0.5 * open, ((rate * calls.lag.ms) / 1000) * Math.min(1, calls.inFlight.size / calls.lag.rows));
  const since = (rate * (now - moved)) / 1000;
  return Math.min(0.9 * open, lag + since);
}

export function rowsProgress(jobId: string, tally: RowTally, phase: JobProgress['phase'] = 'rows'): JobProgress {
  const minutes = (Date.now() - tally.sessionStart) / 60000;
  const rate = minutes > 0 && tally.session > 0 ? tally.session / minutes : 0;
  const { calls } = tally;
  const now = Date.now();
  // Every call done is nothing left, whatever the weights' rounding left in the work done; the
  // rows in flight have done some of the rest.
  const notCredited = calls.done >= calls.plan.total ? 0 : Math.max(0, calls.plan.total - workDone(calls));
  const left = Math.max(0, notCredited - workInFlight(calls, now, calls.eta.rate(now)));
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

/** A session's tally at its start: the job's counts as stored, its calls as planned, its rows' lengths when known. */
export function sessionTally(job: JobInfo, storedExampleRuns: number, sizes?: RowSizes): RowTally {
  return {
    done: job.rowsDone,
    failed: 0,
    correct: job.rowsCorrect,
    withGold: job.rowsWithGold,
    session: 0,
    total: job.rowsTotal,
    sessionStart: Date.now(),
    deterministic: job.deterministic,
    calls: newCallTally(job, storedExampleRuns, sizes),
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
