// The confident early stop's threshold (docs/method.md §10). The rule promises an average: over
// the model, the stopped vote disagrees with the full vote in at most a fraction 1 − P of inputs.
// Stopping whenever a stop's own risk is at most 1 − P keeps that promise with a wide margin (most
// stops happen at a risk near 0), so it spends votes the promise does not need. Here the threshold
// λ is the largest one whose expected risk at the stop, under the model and the actual waves, is
// at most 1 − P; that expectation is the probability of disagreeing (each stop's risk is the
// posterior probability that the full vote differs), so the promise holds exactly, not by margin.
//
// The expectation is a forward pass over the vote counts after each wave: under the model (a
// uniform Dirichlet prior, then independent votes) the counts after the first wave are uniform
// over every way to split its votes, each later wave adds Dirichlet-multinomial counts, and the
// first run's original vote (the tie-break's first rule) is any one of the first wave's votes
// alike. A state stops when `changeProbability` (the very function the engine calls) is at most λ;
// the mass that stops adds its risk.
//
// What keeps it short:
// - label symmetry: the prior is the same for every label, so a state is its sorted label counts
//   (the first original's label marked, the abstain label apart: it cannot win) and the mass of
//   every permutation of it is carried as one;
// - only states some λ ≥ 1 − P reaches are built: a state whose risk is at most 1 − P stops for
//   every λ the search tries, so what follows it is never needed;
// - a state reached with less than NEGLIGIBLE mass is not expanded. Whatever the engine then does
//   there, each of its stops has risk at most λ, so that mass adds at most λ × its mass to the
//   disagreement: the pass adds exactly that, and the promise is still a bound.
//
// Deterministic and cached per setting. Where the pass would be too long (many labels and many
// votes, counted in steps, not time) and for math tasks (answers not known beforehand) the
// threshold is 1 − P itself: each stop's risk at most 1 − P keeps the promise too.
import { changeProbability, type EarlyStopRule } from './confident';
import { runWaves, voteDecided, type VoteOptions } from './vote';

/** The run schedule the threshold is computed for: r runs of `perRun` votes each (n + 1). */
export interface StopSchedule {
  r: number;
  perRun: number;
  /** The waves' sizes in runs; the engine's (`runWaves`) when absent. Other schedules are for the benchmark's comparisons. */
  waves?: readonly number[];
}

/**
 * Never stop above this risk. With a rival tied with the leader (and the tie not going to the
 * leader) the risk is at least ½ by symmetry, so the pass needs no tie-break beyond the first
 * original to know those states go on.
 */
const MAX_LIMIT = 0.49;

/** Above this upper bound on the transitions the pass is not tried (it would give up; this skips the wait). */
const TRANSITIONS_BOUND = 4e6;

/** A state reached with less mass than this is not expanded (its mass is bounded, see above). */
const NEGLIGIBLE = 1e-10;

/**
 * Above this many steps the threshold stays 1 − P: a risk costs about votes to come² with one rival,
 * categories × votes to come³ with more, a transition 1000 (about a nanosecond a step here, so the
 * pass gives up within about half a second on a quiet machine).
 */
const CALIBRATION_WORK = 4e8;

/** Every way to split `total` votes over `parts` categories, flattened (parts numbers each). */
function splits(total: number, parts: number): Int32Array {
  const out: number[] = [];
  const cur = new Array<number>(parts).fill(0);
  const walk = (i: number, left: number) => {
    if (i === parts - 1) {
      cur[i] = left;
      out.push(...cur);
      return;
    }
    for (let x = 0; x <= left; x++) {
      cur[i] = x;
      walk(i + 1, left - x);
    }
  };
  walk(0, total);
  return Int32Array.from(out);
}

/** One wave's states: counts (labels sorted, largest first; then the abstain label), the first original's category, risks, and where the mass goes. */
interface Wave {
  /** `cats` counts per state. */
  counts: Int32Array;
  first: Int32Array;
  /** The risk the engine computes here; NaN where it never stops whatever λ (see MAX_LIMIT). */
  risk: Float64Array;
  /** The states that go on from here (risk above the lowest λ tried, mass not negligible): their transitions [offset[i], offset[i + 1]). */
  offset: Int32Array;
  to: Int32Array;
  p: Float64Array;
  /** 1 where the state's continuing mass was negligible and not expanded (not in the last wave). */
  dropped: Uint8Array;
}

/** The pass's model of one setting, built for thresholds λ ≥ `floor`. */
export interface StopModel {
  floor: number;
  r: number;
  /** The steps it took (see CALIBRATION_WORK). */
  work: number;
  /** Runs cast after each wave that has runs still to come. */
  runs: number[];
  waves: Wave[];
  /** The first wave's mass per state. */
  start: Float64Array;
}

/**
 * The states, their risks and the transitions for one setting, for every threshold at least
 * `floor`; null when too long to compute (or not a label task). `negligible`: the mass below
 * which a state is not expanded (a parameter for the tests of that bound).
 */
export function buildStopModel(opts: Partial<VoteOptions>, s: StopSchedule, floor: number, negligible = NEGLIGIBLE): StopModel | null {
  const labels = opts.labels ?? [];
  const L = labels.length;
  if (L < 2) return null;
  const names = [...labels, ...(opts.abstainLabel !== undefined ? [opts.abstainLabel] : [])];
  const cats = names.length;
  const runs = runsBeforeLastWave(s);
  if (runs.length === 0) return null;
  const base = s.r * s.perRun + 1;
  // Keys: the counts in base `all + 1`, then the first original; exact in a double.
  if (base ** cats * cats >= Number.MAX_SAFE_INTEGER) return null;
  // Before any work: when even the transitions' upper bound is far beyond what the step count
  // allows, the pass would only give up later.
  if (transitionsBound(runs, s.perRun, L, cats) > TRANSITIONS_BOUND) return null;
  return new StopPass(opts, names, L, s, floor, negligible).run(runs);
}

/** Runs cast after each wave that has runs still to come (the engine's waves, or the schedule's own). */
function runsBeforeLastWave(s: StopSchedule): number[] {
  const runs: number[] = [];
  let done = 0;
  for (const size of s.waves ?? runWaves(s.r, 'confident').map((w) => w.length)) {
    done += size;
    if (done < s.r) runs.push(done);
  }
  return runs;
}

/** An upper bound on the pass's transitions: every split after every wave but the last, label orders as one. */
function transitionsBound(runs: readonly number[], perRun: number, L: number, cats: number): number {
  const choose = (a: number, b: number) => {
    let x = 1;
    for (let i = 1; i <= b; i++) x = (x * (a - b + i)) / i;
    return x;
  };
  let labelOrders = 1;
  for (let i = 2; i <= L; i++) labelOrders *= i;
  let bound = 0;
  for (let w = 0; w + 1 < runs.length; w++) bound += ((choose(runs[w]! * perRun + cats - 1, cats - 1) * cats) / labelOrders) * choose((runs[w + 1]! - runs[w]!) * perRun + cats - 1, cats - 1);
  return bound;
}

/** A state's canonical form (labels sorted, largest first; then the abstain label) and its key. */
class Canon {
  /** The last canonical counts `sort` wrote. */
  readonly scratch: Int32Array;
  private readonly order: Int32Array;
  constructor(
    private readonly L: number,
    private readonly cats: number,
    private readonly base: number,
  ) {
    this.scratch = new Int32Array(cats);
    this.order = new Int32Array(L);
  }

  /** Sort the labels of `c` (largest first, the first original's label first among equals) into `scratch`; returns the first original's new index. */
  sort(c: Int32Array | number[], cOff: number, first: number): number {
    const { L, cats, order, scratch } = this;
    for (let i = 0; i < L; i++) {
      // Insertion sort of label indices: by count (descending), the first original ahead of its equals.
      let j = i;
      const ci = c[cOff + i]!;
      while (j > 0) {
        const o = order[j - 1]!;
        const co = c[cOff + o]!;
        if (co > ci || (co === ci && i !== first)) break;
        order[j] = o;
        j--;
      }
      order[j] = i;
    }
    let newFirst = first;
    for (let i = 0; i < L; i++) {
      scratch[i] = c[cOff + order[i]!]!;
      if (order[i] === first) newFirst = i;
    }
    for (let i = L; i < cats; i++) scratch[i] = c[cOff + i]!;
    return newFirst;
  }

  /** The key of `scratch` with the first original at `first`. */
  keyOf(first: number): number {
    let k = first;
    for (let i = this.cats - 1; i >= 0; i--) k = k * this.base + this.scratch[i]!;
    return k;
  }
}

/** One wave's distinct canonical states as they are reached, each with the mass that reaches it. */
class StateSet {
  private readonly keys = new Map<number, number>();
  readonly counts: number[] = [];
  readonly firsts: number[] = [];
  readonly mass: number[] = [];

  /** The index of the state in `canon.scratch` with the first original at `first`, added (massless) if new. */
  at(canon: Canon, first: number): number {
    const k = canon.keyOf(first);
    let at = this.keys.get(k);
    if (at === undefined) {
      this.keys.set(k, (at = this.firsts.length));
      this.counts.push(...canon.scratch);
      this.firsts.push(first);
      this.mass.push(0);
    }
    return at;
  }
}

/** The forward pass over one setting's waves, counting its steps (see CALIBRATION_WORK). */
class StopPass {
  private work = 0;
  private readonly cats: number;
  private readonly canon: Canon;
  private readonly lnF: Float64Array;
  private readonly votes: Record<string, number> = Object.create(null) as Record<string, number>;

  constructor(
    private readonly opts: Partial<VoteOptions>,
    private readonly names: string[],
    private readonly L: number,
    private readonly s: StopSchedule,
    private readonly floor: number,
    private readonly negligible: number,
  ) {
    const all = s.r * s.perRun;
    this.cats = names.length;
    this.canon = new Canon(L, this.cats, all + 1);
    this.lnF = new Float64Array(all + this.cats + 2);
    for (let i = 2; i < this.lnF.length; i++) this.lnF[i] = this.lnF[i - 1]! + Math.log(i);
  }

  run(runs: number[]): StopModel | null {
    let states = this.firstWave(runs[0]! * this.s.perRun);
    const start = Float64Array.from(states.mass);
    const waves: Wave[] = [];
    for (let w = 0; w < runs.length; w++) {
      const next = new StateSet();
      const wave = this.wave(states, runs, w, next);
      if (!wave) return null;
      waves.push(wave);
      states = next;
    }
    return { floor: this.floor, r: this.s.r, work: this.work, runs, waves, start };
  }

  /** The first wave: every split alike (a uniform Dirichlet-multinomial), the first original any of its votes alike. */
  private firstWave(n0: number): StateSet {
    const { cats, canon } = this;
    const firstSplits = splits(n0, cats);
    const nFirst = firstSplits.length / cats;
    const states = new StateSet();
    for (let j = 0; j < nFirst; j++) {
      for (let f = 0; f < cats; f++) {
        const cf = firstSplits[j * cats + f]!;
        if (cf === 0) continue;
        const at = states.at(canon, canon.sort(firstSplits, j * cats, f));
        states.mass[at] = states.mass[at]! + cf / n0 / nFirst;
      }
    }
    return states;
  }

  /** The engine's risk for these (canonical) counts; NaN when it would not stop whatever λ. */
  private riskAt(c: Int32Array, off: number, first: number, toCome: number): number {
    const { L, cats, names, votes } = this;
    // The leader: the top label, sorted first; in a tie only when it is the first original (sorted first among equals).
    if (L > 1 && c[off + 1] === c[off] && first !== 0) return NaN;
    for (let i = 0; i < cats; i++) votes[names[i]!] = c[off + i]!;
    // One rival (two labels, abstain or not) is m² steps (confident.ts), more are about m³ each.
    this.work += L === 2 ? toCome ** 2 : (cats - 1) * toCome ** 3;
    const risk = changeProbability(votes, names[0]!, toCome, this.opts, MAX_LIMIT, names[first]!);
    return risk <= MAX_LIMIT ? risk : NaN;
  }

  /** Wave `w`: its states' risks and, unless it is the last, where each state that goes on leads (into `next`); null past the step count. */
  private wave(states: StateSet, runs: readonly number[], w: number, next: StateSet): Wave | null {
    const { cats, s, lnF, canon } = this;
    const { mass } = states;
    const n = states.firsts.length;
    const c = Int32Array.from(states.counts);
    const first = Int32Array.from(states.firsts);
    const toCome = (s.r - runs[w]!) * s.perRun;
    const risk = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      risk[i] = this.riskAt(c, i * cats, first[i]!, toCome);
      if (this.work > CALIBRATION_WORK) return null;
    }
    const offset = new Int32Array(n + 1);
    const dropped = new Uint8Array(n);
    const to: number[] = [];
    const pr: number[] = [];
    if (w + 1 < runs.length) {
      const added = (runs[w + 1]! - runs[w]!) * s.perRun;
      const adds = splits(added, cats);
      const nAdds = adds.length / cats;
      const cur = new Int32Array(cats);
      for (let i = 0; i < n; i++) {
        offset[i] = to.length;
        // Stops for every λ tried.
        if (risk[i]! <= this.floor) continue;
        if (mass[i]! < this.negligible) {
          dropped[i] = 1;
          continue;
        }
        this.work += 1000 * nAdds;
        if (this.work > CALIBRATION_WORK) return null;
        let had = 0;
        for (let q = 0; q < cats; q++) had += c[i * cats + q]!;
        // ln of the Dirichlet-multinomial pmf of each add given pseudo-counts 1 + counts (all integers: log-factorials).
        const fixed = lnF[added]! + lnF[had + cats - 1]! - lnF[had + cats - 1 + added]!;
        for (let a = 0; a < nAdds; a++) {
          let lp = fixed;
          for (let q = 0; q < cats; q++) {
            const x = adds[a * cats + q]!;
            const cq = c[i * cats + q]!;
            cur[q] = cq + x;
            lp += lnF[cq + x]! - lnF[cq]! - lnF[x]!;
          }
          const at = next.at(canon, canon.sort(cur, 0, first[i]!));
          const p = Math.exp(lp);
          to.push(at);
          pr.push(p);
          next.mass[at] = next.mass[at]! + mass[i]! * p;
        }
      }
    }
    offset[n] = to.length;
    return { counts: c, first, risk, offset, to: Int32Array.from(to), p: Float64Array.from(pr), dropped };
  }
}

/**
 * The expected risk at the stop (the probability of disagreeing with the full vote) when the rule
 * stops at risk ≤ λ, and the expected runs. Mass at a state not expanded (negligible) counts λ, its
 * bound, and every run.
 */
export function passAt(model: StopModel, limit: number): { risk: number; runs: number; bounded: number } {
  let mass = Float64Array.from(model.start);
  let risk = 0;
  let bounded = 0;
  let runs = 0;
  for (let w = 0; w < model.waves.length; w++) {
    const st = model.waves[w]!;
    const next = w + 1 < model.waves.length ? new Float64Array(model.waves[w + 1]!.first.length) : null;
    for (let i = 0; i < mass.length; i++) {
      const m = mass[i]!;
      if (m === 0) continue;
      const r = st.risk[i]!;
      if (r <= limit) {
        risk += m * r;
        runs += m * model.runs[w]!;
      } else if (!next) runs += m * model.r;
      else if (st.dropped[i]) {
        bounded += m * limit;
        runs += m * model.r;
      } else
        for (let e = st.offset[i]!; e < st.offset[i + 1]!; e++) {
          const t = st.to[e]!;
          next[t] = next[t]! + m * st.p[e]!;
        }
    }
    if (next) mass = next;
  }
  return { risk: risk + bounded, runs, bounded };
}

export interface StopLimit {
  /** Stop once the risk is at most this. */
  limit: number;
  /** The expected risk at the stop under the model with this limit (the disagreement it promises, a bound), null where not computed. */
  expected: number | null;
}

const cache = new Map<string, StopLimit>();
/** The last model built (the thresholds are cached, the models are only needed to find them). */
let last: { id: string; model: StopModel | null } | null = null;

function settingId(opts: Partial<VoteOptions>, s: StopSchedule): string {
  return JSON.stringify([opts.labels ?? [], opts.abstainLabel ?? null, s.r, s.perRun, s.waves ?? null]);
}

/**
 * The model of this setting built for λ ≥ floor (null when not computed), always for that very
 * floor: a model built for a lower floor would serve too, but which states it leaves unexpanded
 * (and whether it is too long) depends on its floor, so λ would depend on which levels were asked
 * before. This way λ depends on P and the setting alone: the same input gives the same result.
 */
export function stopModel(opts: Partial<VoteOptions>, s: StopSchedule, floor: number): StopModel | null {
  const id = JSON.stringify([floor, settingId(opts, s)]);
  if (last?.id !== id) last = { id, model: buildStopModel(opts, s, floor) };
  return last.model;
}

/**
 * The risk level the confident rule stops at for level p: the largest risk a state of the model
 * takes whose expected risk at the stop is at most 1 − p, or 1 − p where that is not computed.
 */
export function stopLimit(p: number, opts: Partial<VoteOptions>, s: StopSchedule): StopLimit {
  const id = JSON.stringify([p, settingId(opts, s)]);
  const known = cache.get(id);
  if (known) return known;
  const found = calibrate(p, opts, s);
  cache.set(id, found);
  return found;
}

/**
 * The thresholds worth trying: each a risk some state takes, nudged up by far less than the gap to
 * the next one. The engine computes a permuted state's risk with its categories in another order,
 * so the last bits may differ (about 1e-16); risks within 1e-12 of each other are one candidate,
 * and the threshold sits above the group, so the engine's decisions are the ones the pass counted.
 */
function candidates(model: StopModel, floor: number): number[] {
  const risks = [...new Set(model.waves.flatMap((w) => [...w.risk].filter((x) => x > floor)))].sort((a, b) => a - b);
  const out: number[] = [];
  for (let i = 0; i < risks.length; i++) {
    const top = risks[i]!;
    const next = risks[i + 1];
    if (next !== undefined && next - top <= 1e-12 * next) continue;
    out.push(next === undefined ? top * (1 + 1e-9) : Math.min(top * (1 + 1e-9), (top + next) / 2));
  }
  return out;
}

function calibrate(p: number, opts: Partial<VoteOptions>, s: StopSchedule): StopLimit {
  const budget = 1 - p;
  const plain: StopLimit = { limit: budget, expected: null };
  if (budget <= 0 || budget >= MAX_LIMIT || (opts.labels?.length ?? 0) < 2) return plain;
  const model = stopModel(opts, s, budget);
  if (!model) return plain;
  const risks = candidates(model, budget);
  // The largest candidate whose expectation fits (bisection; the chosen one is checked itself, whatever the shape).
  let lo = -1;
  let hi = risks.length;
  let best: StopLimit = { limit: budget, expected: passAt(model, budget).risk };
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    const expected = passAt(model, risks[mid]!).risk;
    if (expected <= budget) {
      lo = mid;
      best = { limit: risks[mid]!, expected };
    } else hi = mid;
  }
  return best;
}

/** The expected risk at the stop for a given λ (the benchmark and the tests check the promise with it). */
export function expectedRiskAt(limit: number, opts: Partial<VoteOptions>, s: StopSchedule): number | null {
  const model = stopModel(opts, s, Math.min(limit, MAX_LIMIT));
  return model ? passAt(model, limit).risk : null;
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
