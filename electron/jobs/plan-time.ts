// A run's wall time from its calls, as a backend serves them: each call holds one of the
// backend's slots (a server's batch, the in-process model's sequences) for a time of its own (a
// fixed cost, the evaluator's shared prefix already evaluated, plus a cost per generated token),
// and a job keeps only so many calls in flight (its rows in flight × the wave of calls a row
// sends at once). Tokens per second, the plan's old measure, counted every prompt token of
// every evaluation (each one repeats the examples, which a backend evaluates once and reuses)
// and a calibration that ran two rows measured a machine far from full: plans came out up to
// 2.4× long. A call alone and a call among full slots are not the same call, though: on the
// in-process tiny model a paraphrase call's fixed cost timed alone (0.08–0.28 s in calibrations
// minutes apart) was several times what one added to a full run (27 ms), and one "calls at once"
// for both planned a job of one-line paraphrases 21–41 % long. So a calibration also measures what
// a call and a token cost at full load (fitLoadedCost), and a stage that fills the slots is planned
// at that. Pure: numbers in, numbers out.
import type { Span } from '../engine';

/** What a calibration measured: seconds a call holds a slot, and how many slots there are. */
export interface CallCost {
  /** Seconds of a call that generates nothing (its prompt's new part, the round trip). */
  perCall: number;
  /** Seconds per generated token. */
  perToken: number;
  /** Calls served at once at full load (the measured speed-up over one call alone, ≥ 1). */
  slots: number;
  /**
   * Seconds of a generator call (a paraphrase or example call) that generates nothing, where it
   * was measured apart (perCall otherwise): its prompt is all new, where an evaluation's is mostly
   * the examples the backend already holds.
   */
  perGeneratorCall?: number;
  /**
   * Seconds of the backend's time a call and a generated token take while its slots are full,
   * where a calibration measured them at full load (fitLoadedCost); the costs alone over the
   * slots otherwise.
   */
  loaded?: LoadedCost;
}

/** What calls cost the backend at full load: seconds an evaluation, a generator call and a generated token add to a full run's wall time. */
export interface LoadedCost {
  perCall: number;
  perGeneratorCall: number;
  perToken: number;
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
export function stageSeconds(work: StageWork, rows: number, inFlight: number, cost: StageCost): number {
  if (work.calls <= 0) return 0;
  const perCall = cost.perCall + cost.perToken * (work.completion / work.calls);
  // Calls of this stage in flight at once: a row sends its whole stage together.
  const wave = rows > 0 ? Math.min(rows, inFlight) * (work.calls / rows) : work.calls;
  // Where full-load costs were measured, the stage takes what its calls cost the backend at full
  // load, or, with too few calls in flight to fill it, its calls alone a wave at a time; else its
  // calls alone through the slots they fill.
  const alone = perCall * work.calls;
  const throughput = cost.loaded ? Math.max(cost.loaded.perCall * work.calls + cost.loaded.perToken * work.completion, alone / Math.max(1, wave)) : alone / Math.max(1, Math.min(cost.slots, wave));
  const latency = rows > 0 ? Math.ceil(rows / Math.max(1, inFlight)) * perCall : perCall;
  return Math.max(throughput, latency);
}

/** One stage's view of a CallCost: its calls' fixed cost alone, and at full load. */
export interface StageCost {
  perCall: number;
  perToken: number;
  slots: number;
  loaded?: { perCall: number; perToken: number };
}

/** A run's seconds: its examples, then its rows' paraphrases and evaluations (a row's stages run one after the other). */
export function runSeconds(stages: { examples: StageWork; paraphrases: StageWork; evaluations: StageWork }, rows: number, inFlight: number, cost: CallCost): number {
  const { loaded } = cost;
  const evaluator: StageCost = { perCall: cost.perCall, perToken: cost.perToken, slots: cost.slots, ...(loaded ? { loaded: { perCall: loaded.perCall, perToken: loaded.perToken } } : {}) };
  const generator: StageCost = { ...evaluator, perCall: cost.perGeneratorCall ?? cost.perCall, ...(loaded ? { loaded: { perCall: loaded.perGeneratorCall, perToken: loaded.perToken } } : {}) };
  return stageSeconds(stages.examples, 0, inFlight, generator) + stageSeconds(stages.paraphrases, rows, inFlight, generator) + stageSeconds(stages.evaluations, rows, inFlight, evaluator);
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
 * Slots from a full-load run (rows classified at once, their calls' totals per stage and the
 * wall time): the slots with which runSeconds gives that time (found by bisection: more slots,
 * less time), between 1 and the calls that were ever in flight at once.
 */
export function fitSlots(cost: Omit<CallCost, 'slots'>, load: { paraphrases: StageWork; evaluations: StageWork; rows: number; seconds: number; inFlight?: number }): number {
  const none: StageWork = { calls: 0, completion: 0 };
  const inFlight = Math.min(load.rows, load.inFlight ?? load.rows);
  const at = (slots: number) => runSeconds({ examples: none, paraphrases: load.paraphrases, evaluations: load.evaluations }, load.rows, inFlight, { ...cost, slots });
  // A stage's calls in flight at once: its rows in flight's calls (stageSeconds' wave).
  const wave = (st: StageWork) => (load.rows > 0 ? (inFlight * st.calls) / load.rows : st.calls);
  const most = Math.max(1, wave(load.paraphrases), wave(load.evaluations));
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

/** A full-load run of a calibration: its paraphrase and evaluation calls and tokens, and its wall time in seconds. */
export interface LoadRun {
  paraphrases: StageWork;
  evaluations: StageWork;
  seconds: number;
}

/**
 * What calls cost at full load, from full-load runs that differ in their mix (a calibration runs
 * its rows with n lines, with one and with none): the non-negative a (a generator call), b (a
 * generated token) and c (an evaluation) for which each run's wall time is a·paraphrase calls +
 * b·tokens generated + c·evaluations, by least squares (exact for three runs whose mixes differ).
 * A cost the runs cannot tell from zero is zero: each set of costs held at zero is tried, and of
 * the fits whose costs are all non-negative the one closest to the runs is kept. Null when no
 * fit leaves a cost above zero.
 */
export function fitLoadedCost(runs: readonly LoadRun[]): LoadedCost | null {
  const rows = runs.filter((r) => r.seconds > 0).map((r) => ({ x: [r.paraphrases.calls, r.paraphrases.completion + r.evaluations.completion, r.evaluations.calls], y: r.seconds }));
  let best: { fit: number[]; residual: number } | null = null;
  for (let mask = 1; mask < 8; mask++) {
    const free = [0, 1, 2].filter((i) => mask & (1 << i));
    const fit = leastSquares(rows.map((r) => free.map((i) => r.x[i]!)), rows.map((r) => r.y));
    if (!fit || fit.some((v) => v < 0)) continue;
    const full = [0, 0, 0];
    free.forEach((i, j) => (full[i] = fit[j]!));
    const residual = rows.reduce((s, r) => s + (r.y - r.x.reduce((a, xi, i) => a + xi * full[i]!, 0)) ** 2, 0);
    if (!best || residual < best.residual - 1e-12) best = { fit: full, residual };
  }
  if (!best || best.fit.every((v) => v === 0)) return null;
  const [perGeneratorCall, perToken, perCall] = best.fit as [number, number, number];
  return { perCall, perGeneratorCall, perToken };
}

/** The least-squares solution of X·β = y (normal equations, Gaussian elimination); null where X's columns are not independent. */
function leastSquares(x: number[][], y: number[]): number[] | null {
  const m = x[0]?.length ?? 0;
  if (m === 0 || x.length < m) return null;
  // A = XᵀX | Xᵀy, reduced in place.
  const a = Array.from({ length: m }, (_, i) => [...Array.from({ length: m }, (_, j) => x.reduce((s, row) => s + row[i]! * row[j]!, 0)), x.reduce((s, row, k) => s + row[i]! * y[k]!, 0)]);
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let r = col + 1; r < m; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    const scale = Math.max(...a.map((row) => Math.abs(row[col]!)));
    if (!(Math.abs(a[pivot]![col]!) > 1e-12 * Math.max(1, scale))) return null;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    for (let r = 0; r < m; r++) {
      if (r === col) continue;
      const f = a[r]![col]! / a[col]![col]!;
      for (let c = col; c <= m; c++) a[r]![c]! -= f * a[col]![c]!;
    }
  }
  return a.map((row, i) => row[m]! / row[i]!);
}

/** A finished job's stages over its done rows: calls, generated tokens and wall time (ms) summed. */
export interface JobStages {
  examples: StageWork;
  paraphrases: StageWork & { ms: number };
  evaluations: StageWork & { ms: number };
}

/**
 * A call's cost from a job that ran (the plan made from the last job on the same models, beside a
 * calibration's), as if the backend served the job's calls one at a time at the pace the job
 * went: a call's fixed cost and its cost per token in the ratio a row's evaluation and paraphrase
 * batches give (each batch's mean wall time over its calls: fitCallCost's short and long call),
 * scaled so that the job's own calls take the job's own wall time, through one slot. The batches'
 * times include the waiting for the other rows' calls, so they give the ratio, not the scale:
 * taken as the times of calls alone, a job of 50 rows sharing a server's 8 slots made every later
 * call seconds long and planned a job of many rows 17-23× long.
 * Null when the job timed no evaluation.
 */
export function jobCallCost(stages: JobStages, rows: number, inFlight: number, seconds: number): CallCost | null {
  const { paraphrases: p, evaluations: e } = stages;
  if (e.calls === 0 || e.ms <= 0 || !(seconds > 0)) return null;
  const perCall = (st: StageWork & { ms: number }) => ({ seconds: st.ms / 1000 / st.calls, completion: st.completion / st.calls });
  const short = perCall(e);
  const shape = fitCallCost(short, p.calls > 0 && p.ms > 0 ? perCall(p) : short);
  const unit = runSeconds({ examples: stages.examples, paraphrases: p, evaluations: e }, rows, inFlight, { ...shape, slots: 1 });
  if (!(unit > 0)) return null;
  const scale = seconds / unit;
  return { perCall: shape.perCall * scale, perToken: shape.perToken * scale, slots: 1 };
}
