// The confident early stop's threshold (docs/method.md §10). The rule promises an average: over
// the model, the stopped vote disagrees with the full vote in at most a fraction 1 − P of inputs.
// Stopping whenever a stop's own risk is at most 1 − P keeps that promise with a wide margin (most
// stops happen at a risk near 0), so it spends votes the promise does not need. Here the threshold
// λ is the largest one whose expected risk at the stop, under the model and the actual waves, is
// at most 1 − P; that expectation is the probability of disagreeing (each stop's risk is the
// posterior probability that the full vote differs), so the promise holds exactly, not by margin.
//
// The expectation is an exact forward pass over the vote counts after each wave: under the model
// (a uniform Dirichlet prior, then independent votes) the counts after the first wave are uniform
// over every way to split its votes, each later wave adds Dirichlet-multinomial counts, and the
// first run's original vote (the tie-break's first rule) is any one of the first wave's votes
// alike. A state stops when `changeProbability` (the very function the engine calls, on the very
// same counts) is at most λ; the mass that stops adds its risk. The candidates for λ are the risks
// the states take, so the engine's decisions are exactly those the pass counted.
//
// Deterministic and cached per setting. Where the pass would be too long (many labels and many
// votes) and for math tasks (answers not known beforehand) the threshold is 1 − P itself: each
// stop's risk at most 1 − P keeps the promise too.
import { changeProbability, lnGamma, type EarlyStopRule } from './confident';
import { runWaves, voteDecided, type VoteOptions } from './vote';

/** The run schedule the threshold is computed for: r runs of `perRun` votes each (n + 1). */
export interface StopSchedule {
  r: number;
  perRun: number;
}

/**
 * Never stop above this risk. With a rival tied with the leader (and the tie not going to the
 * leader) the risk is at least ½ by symmetry, so the pass needs no tie-break beyond the first
 * original to know those states go on.
 */
const MAX_LIMIT = 0.49;

/** Above this many steps (states × their risk sums and transitions) the threshold stays 1 − P. */
const CALIBRATION_WORK = 6e7;

/** Every way to split `total` votes over `parts` categories. */
function splits(total: number, parts: number): number[][] {
  if (parts === 1) return [[total]];
  const out: number[][] = [];
  for (let x = 0; x <= total; x++) for (const rest of splits(total - x, parts - 1)) out.push([x, ...rest]);
  return out;
}

function choose(a: number, b: number): number {
  return Math.round(Math.exp(lnGamma(a + 1) - lnGamma(b + 1) - lnGamma(a - b + 1)));
}

/** ln of the Dirichlet-multinomial pmf of `add` given pseudo-counts `alpha`. */
function lnDirMult(add: readonly number[], alpha: readonly number[]): number {
  let total = 0;
  let sumA = 0;
  let out = 0;
  for (let i = 0; i < add.length; i++) {
    total += add[i]!;
    sumA += alpha[i]!;
    out += lnGamma(alpha[i]! + add[i]!) - lnGamma(alpha[i]!) - lnGamma(add[i]! + 1);
  }
  return out + lnGamma(total + 1) + lnGamma(sumA) - lnGamma(sumA + total);
}

/** One state of the pass: the counts after a wave (labels in order, then the abstain label) and the first original. */
interface State {
  counts: number[];
  first: number;
  /** The risk the engine would compute here; null when it would not stop whatever λ (see MAX_LIMIT). */
  risk: number | null;
}

interface Model {
  /** The states after each wave that has votes still to come. */
  waves: State[][];
  /** For wave w, the mass carried from each state of w to each state of w + 1: [from, to, p]. */
  steps: [number, number, number][][];
  /** The first wave's mass per state. */
  start: number[];
}

function key(counts: readonly number[], first: number): string {
  return `${counts.join(',')}|${first}`;
}

/** The states, their risks and the transitions for one setting, or null when too long to compute. */
function buildModel(opts: Partial<VoteOptions>, s: StopSchedule): Model | null {
  const labels = opts.labels ?? [];
  const names = [...labels, ...(opts.abstainLabel !== undefined ? [opts.abstainLabel] : [])];
  const cats = names.length;
  const waves = runWaves(s.r, 'confident');
  let done = 0;
  const totals: number[] = [];
  for (const w of waves) {
    done += w.length;
    if (done < s.r) totals.push(done * s.perRun);
  }
  if (totals.length === 0) return null;
  // The work: every state's risk sum (votes to come², or ³ with two rivals or more) and every transition.
  let work = 0;
  for (let w = 0; w < totals.length; w++) {
    const states = choose(totals[w]! + cats - 1, cats - 1) * cats;
    const toCome = s.r * s.perRun - totals[w]!;
    const next = w + 1 < totals.length ? choose(totals[w + 1]! - totals[w]! + cats - 1, cats - 1) : 0;
    // The transitions are walked once per step of the search for λ (about 16).
    work += states * (toCome ** Math.min(cats, 3) * (cats - 1) + 16 * next);
  }
  if (work > CALIBRATION_WORK) return null;

  const model: Model = { waves: [], steps: [], start: [] };
  for (let w = 0; w < totals.length; w++) {
    const toCome = s.r * s.perRun - totals[w]!;
    const states: State[] = [];
    for (const counts of splits(totals[w]!, cats)) {
      for (let first = 0; first < cats; first++) {
        if (counts[first] === 0) continue;
        states.push({ counts, first, risk: riskAt(counts, first, names, labels.length, toCome, opts) });
      }
    }
    model.waves.push(states);
  }
  // The first wave: every split alike (a uniform Dirichlet-multinomial), the first original any of its votes alike.
  const n0 = totals[0]!;
  const splitsFirst = choose(n0 + cats - 1, cats - 1);
  model.start = model.waves[0]!.map((st) => st.counts[st.first]! / n0 / splitsFirst);
  for (let w = 0; w + 1 < totals.length; w++) {
    const index = new Map(model.waves[w + 1]!.map((st, i) => [key(st.counts, st.first), i]));
    const adds = splits(totals[w + 1]! - totals[w]!, cats);
    const step: [number, number, number][] = [];
    model.waves[w]!.forEach((st, from) => {
      if (st.risk === 0) return;
      const alpha = st.counts.map((c) => c + 1);
      for (const add of adds) {
        const to = index.get(
          key(
            st.counts.map((c, i) => c + add[i]!),
            st.first,
          ),
        )!;
        step.push([from, to, Math.exp(lnDirMult(add, alpha))]);
      }
    });
    model.steps.push(step);
  }
  return model;
}

/**
 * The risk the engine computes after a wave with these counts and this first original: the
 * leader as `tallyVotes` names it (the top label; in a tie, the first original when it is among
 * the tied). Null when the top is tied without the first original: the risk is then at least ½.
 */
function riskAt(counts: readonly number[], first: number, names: readonly string[], labels: number, toCome: number, opts: Partial<VoteOptions>): number | null {
  let top = -1;
  for (let i = 0; i < labels; i++) top = Math.max(top, counts[i]!);
  const tied = [...Array(labels).keys()].filter((i) => counts[i] === top);
  const leader = tied.length === 1 ? tied[0]! : tied.includes(first) ? first : null;
  if (leader === null) return null;
  const votes: Record<string, number> = Object.create(null) as Record<string, number>;
  names.forEach((nm, i) => (votes[nm] = counts[i]!));
  const risk = changeProbability(votes, names[leader]!, toCome, opts, MAX_LIMIT, names[first]!);
  return risk <= MAX_LIMIT ? risk : null;
}

/** The expected risk at the stop (the probability of disagreeing with the full vote) when the rule stops at risk ≤ λ. */
function expectedRisk(model: Model, limit: number): number {
  let mass = model.start.slice();
  let total = 0;
  for (let w = 0; w < model.waves.length; w++) {
    const states = model.waves[w]!;
    const going = new Float64Array(states.length);
    states.forEach((st, i) => {
      if (st.risk !== null && st.risk <= limit) total += mass[i]! * st.risk;
      else going[i] = mass[i]!;
    });
    if (w + 1 === model.waves.length) break;
    const next = new Array<number>(model.waves[w + 1]!.length).fill(0);
    for (const [from, to, p] of model.steps[w]!) if (going[from]! > 0) next[to] = next[to]! + going[from]! * p;
    mass = next;
  }
  return total;
}

export interface StopLimit {
  /** Stop once the risk is at most this. */
  limit: number;
  /** The expected risk at the stop under the model with this limit (the disagreement it promises), null where not computed. */
  expected: number | null;
}

const cache = new Map<string, StopLimit>();
/** The last setting's model, kept for the other levels of the same setting. */
let last: { id: string; model: Model | null } | null = null;

function lastModel(opts: Partial<VoteOptions>, s: StopSchedule): Model | null {
  const id = JSON.stringify([opts.labels ?? [], opts.abstainLabel ?? null, s.r, s.perRun]);
  if (last?.id !== id) last = { id, model: buildModel(opts, s) };
  return last.model;
}

/**
 * The risk level the confident rule stops at for level p: the largest risk a state of the model
 * takes whose expected risk at the stop is at most 1 − p, or 1 − p where that is not computed.
 */
export function stopLimit(p: number, opts: Partial<VoteOptions>, s: StopSchedule): StopLimit {
  const id = JSON.stringify([p, opts.labels ?? [], opts.abstainLabel ?? null, s.r, s.perRun]);
  const known = cache.get(id);
  if (known) return known;
  const found = calibrate(p, opts, s);
  cache.set(id, found);
  return found;
}

function calibrate(p: number, opts: Partial<VoteOptions>, s: StopSchedule): StopLimit {
  const budget = 1 - p;
  const plain: StopLimit = { limit: budget, expected: null };
  if (budget <= 0 || budget >= MAX_LIMIT || (opts.labels?.length ?? 0) < 2) return plain;
  const model = lastModel(opts, s);
  if (!model) return plain;
  const risks = [...new Set(model.waves.flatMap((w) => w.map((st) => st.risk)).filter((x): x is number => x !== null))].sort((a, b) => a - b);
  // The largest candidate whose expectation fits (bisection; the chosen one is checked itself, whatever the shape).
  let lo = -1;
  let hi = risks.length;
  let best: StopLimit = { limit: 0, expected: expectedRisk(model, 0) };
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const expected = expectedRisk(model, risks[mid]!);
    if (expected <= budget) {
      lo = mid;
      best = { limit: risks[mid]!, expected };
    } else hi = mid;
  }
  // Never below the plain rule's threshold when that keeps the promise too (it always does).
  return best.limit >= budget ? best : { limit: budget, expected: expectedRisk(model, budget) };
}

/** The expected risk at the stop for a given λ (the benchmark and the tests check the promise with it). */
export function expectedRiskAt(limit: number, opts: Partial<VoteOptions>, s: StopSchedule): number | null {
  const model = lastModel(opts, s);
  return model ? expectedRisk(model, limit) : null;
}

/**
 * Whether to stop launching runs: the exact rule's `voteDecided`, or the confident rule's risk at
 * most its threshold for this setting (`stopLimit`). Returns the risk it stopped at (0 for the
 * exact rule), or null to go on. `tieWinner`: the label the votes so far give a tie (the first
 * run's original vote), null when none.
 */
export function stopRisk(
  rule: EarlyStopRule,
  votes: Readonly<Record<string, number>>,
  leader: string | null,
  votesToCome: number,
  opts: Partial<VoteOptions>,
  tieWinner: string | null,
  schedule: StopSchedule,
): number | null {
  if (votesToCome <= 0 || leader === null) return null;
  if (voteDecided(votes, votesToCome, opts)) return 0;
  if (rule.rule === 'exact') return null;
  const { limit } = stopLimit(rule.p, opts, schedule);
  const risk = changeProbability(votes, leader, votesToCome, opts, limit, tieWinner);
  return risk <= limit ? risk : null;
}
