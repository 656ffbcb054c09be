// A run's wall time from its calls, as a backend serves them: each call holds one of the
// backend's slots (a server's batch, the in-process model's sequences) for a time of its own (a
// fixed cost, the evaluator's shared prefix already evaluated, plus a cost per generated token),
// and a job keeps only so many calls in flight (its rows in flight × the wave of calls a row
// sends at once). Tokens per second, the plan's old measure, counted every prompt token of
// every evaluation (each one repeats the examples, which a backend evaluates once and reuses)
// and a calibration that ran two rows measured a machine far from full: plans came out up to
// 2.4× long. Pure: numbers in, numbers out.
import type { Span } from '../engine';

/** What a calibration measured: seconds a call holds a slot, and how many slots there are. */
export interface CallCost {
  /** Seconds of a call that generates nothing (its prompt's new part, the round trip). */
  perCall: number;
  /** Seconds per generated token. */
  perToken: number;
  /** Calls served at once at full load (the measured speed-up over one call alone, ≥ 1). */
  slots: number;
}

/** A stage's totals over the whole run: calls and generated tokens. */
export interface StageWork {
  calls: number;
  completion: number;
}

/**
 * Seconds for one stage: all its calls through the slots (throughput-bound), or, where the
 * job's calls in flight cannot fill the slots, one call after another per wave of rows
 * (latency-bound), whichever is longer. `rows`: rows the stage's calls belong to (0 for a job's
 * examples, made all at once before the first row); `inFlight`: rows the job runs at once.
 */
export function stageSeconds(work: StageWork, rows: number, inFlight: number, cost: CallCost): number {
  if (work.calls <= 0) return 0;
  const perCall = cost.perCall + cost.perToken * (work.completion / work.calls);
  const total = perCall * work.calls;
  // Calls of this stage in flight at once: a row sends its whole stage together.
  const wave = rows > 0 ? Math.min(rows, inFlight) * (work.calls / rows) : work.calls;
  const throughput = total / Math.max(1, Math.min(cost.slots, wave));
  const latency = rows > 0 ? Math.ceil(rows / Math.max(1, inFlight)) * perCall : perCall;
  return Math.max(throughput, latency);
}

/** A run's seconds: its examples, then its rows' paraphrases and evaluations (a row's stages run one after the other). */
export function runSeconds(stages: { examples: StageWork; paraphrases: StageWork; evaluations: StageWork }, rows: number, inFlight: number, cost: CallCost): number {
  return stageSeconds(stages.examples, 0, inFlight, cost) + stageSeconds(stages.paraphrases, rows, inFlight, cost) + stageSeconds(stages.evaluations, rows, inFlight, cost);
}

/** The min and max scenarios of a plan's stages as StageWork. */
export function stageWork(stages: Record<'examples' | 'paraphrases' | 'evaluations', { calls: Span; completion: Span }>, scenario: 'min' | 'max') {
  const pick = (st: { calls: Span; completion: Span }): StageWork => ({ calls: st.calls[scenario], completion: st.completion[scenario] });
  return { examples: pick(stages.examples), paraphrases: pick(stages.paraphrases), evaluations: pick(stages.evaluations) };
}

/** One timed call alone: its seconds and the tokens it generated. */
export interface TimedCall {
  seconds: number;
  completion: number;
}

/**
 * The cost of a call from two calls timed alone (one generating little, an evaluation; one
 * generating much, a paraphrase call): the line through them, never negative. With the two
 * about as long to write, the time is all per call (a server's latency).
 */
export function fitCallCost(short: TimedCall, long: TimedCall): { perCall: number; perToken: number } {
  const dTokens = long.completion - short.completion;
  const perToken = dTokens >= 4 ? Math.max(0, (long.seconds - short.seconds) / dTokens) : 0;
  const perCall = Math.max(0, short.seconds - perToken * short.completion);
  if (perCall === 0 && perToken === 0) return { perCall: Math.max(short.seconds, long.seconds, 1e-3), perToken: 0 };
  return { perCall, perToken };
}

/**
 * Slots from a full-load run (rows classified, `inFlight` of them at once (default all), their
 * calls' totals per stage, and the wall time): the slots with which runSeconds gives that time
 * (found by bisection: more slots, less time), between 1 and the calls that were ever in flight
 * at once.
 */
export function fitSlots(
  cost: Omit<CallCost, 'slots'>,
  load: { examples?: StageWork; paraphrases: StageWork; evaluations: StageWork; rows: number; inFlight?: number; seconds: number },
): number {
  const none: StageWork = { calls: 0, completion: 0 };
  const inFlight = load.inFlight ?? load.rows;
  const at = (slots: number) => runSeconds({ examples: load.examples ?? none, paraphrases: load.paraphrases, evaluations: load.evaluations }, load.rows, inFlight, { ...cost, slots });
  const perRow = (st: StageWork) => (load.rows > 0 ? st.calls / load.rows : 0);
  const most = Math.max(1, (load.examples ?? none).calls, Math.min(load.rows, inFlight) * Math.max(perRow(load.paraphrases), perRow(load.evaluations)));
  if (!(load.seconds > 0) || at(1) <= load.seconds) return 1;
  if (at(most) >= load.seconds) return most;
  let lo = 1;
  let hi = most;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (at(mid) > load.seconds) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** A finished job's stages over its done rows: calls, generated tokens and wall time (ms) summed, and the rows they come from. */
export interface JobStages {
  examples: StageWork;
  paraphrases: StageWork & { ms: number; rows: number };
  evaluations: StageWork & { ms: number; rows: number };
}

/**
 * A call's cost and the slots from a job that ran (the plan made from the last job on the same
 * models, beside a calibration's): a row's evaluation batch and its paraphrase batch, each as
 * long as its mean wall time (its calls went out at once), are the short and the long call of
 * fitCallCost, and the slots are those that give the job's own wall time with its rows in
 * flight. Both stage times include the waiting for the other rows' calls, so the cost of a call
 * comes out long and the slots many; together they give back the job's time, and a job of
 * other settings on the same models is planned by the same calls through the same slots.
 * Null when the job timed no evaluation.
 */
export function jobCallCost(stages: JobStages, rows: number, inFlight: number, seconds: number): CallCost | null {
  const { paraphrases: p, evaluations: e } = stages;
  if (e.calls === 0 || e.rows === 0 || !(seconds > 0)) return null;
  const batch = (st: StageWork & { ms: number; rows: number }) => ({ seconds: st.ms / 1000 / st.rows, completion: st.completion / st.calls });
  const short = batch(e);
  const cost = fitCallCost(short, p.calls > 0 && p.rows > 0 ? batch(p) : short);
  const slots = fitSlots(cost, { examples: stages.examples, paraphrases: p, evaluations: e, rows, inFlight, seconds });
  return { ...cost, slots };
}
