// The confident early stop on its own model: vote sequences drawn as the rule assumes (each
// category's share from a uniform Dirichlet, then every vote independently from those shares),
// replayed wave by wave, and each stop compared with the full vote. Three rules side by side on
// the very same sequences:
//
//   union     before: the union bound over rivals with every final tie counted as a change,
//             stopping at 1 − P, waves of a fifth of r
//   previous  the threshold λ of the first forward pass (λ where that pass computed it, 1 − P where
//             the setting was too large for it), waves of a fifth of r
//   now       what the engine does: λ from the symmetric pass (engine/confident-limit.ts), the
//             engine's waves (vote.ts runWaves: the first fifth of r in doubling waves)
//
// For each P: how often the stopped vote disagrees with the full vote (the promise: at most 1 − P
// on average), the share of votes saved, λ, and the disagreement the pass promises for λ
// ('–' where the setting is too large to compute and λ is 1 − P).
//
//   npx tsx bench/early-stop-model.ts [--sequences 10000] [--labels 2] [--abstain] [-n 5] [-r 15]
//                                     [--p 0.8,0.9,0.95,0.99] [--seed 1] [--json] [--sweep] [--bound]
//
// -n is paraphrases per run, so a run casts n + 1 votes. --sweep runs a grid of settings (labels
// 2/3/5, n 1/5/10, r 5/15, two labels + abstain, five labels at the app's default n=5 r=3) with a
// fifth of the sequences each. --bound prints, for the setting, what ANY stopping rule could save
// on each wave schedule with its expected disagreement at most 1 − P (exact, no sampling).
import { parseArgs } from 'node:util';
import { firstOriginal, runWaves, seededRandom, stopRisk, tallyVotes, voteDecided, type Vote, type VoteOptions } from '../electron/engine';
import { changeProbability, changeUnionBound } from '../electron/engine/confident';
import { buildStopModel, passAt, stopLimit, type StopModel, type StopSchedule } from '../electron/engine/confident-limit';
import { draw, uniformDirichlet } from '../test/helpers/dirichlet';

const { values } = parseArgs({
  options: {
    sequences: { type: 'string', default: '10000' },
    labels: { type: 'string', default: '2' },
    abstain: { type: 'boolean', default: false },
    n: { type: 'string', short: 'n', default: '5' },
    r: { type: 'string', short: 'r', default: '15' },
    p: { type: 'string', default: '0.8,0.9,0.95,0.99' },
    seed: { type: 'string', default: '1' },
    sweep: { type: 'boolean', default: false },
    bound: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

interface Setting {
  labels: number;
  abstain: boolean;
  n: number;
  r: number;
  sequences: number;
}

type Rule = 'union' | 'previous' | 'now';
const RULES: readonly Rule[] = ['union', 'previous', 'now'];

interface Row {
  setting: string;
  p: number;
  rule: Rule;
  limit: number;
  promised: number | null;
  disagree: number;
  sequences: number;
  disagreement: number;
  votesSaved: number;
}

/** The waves before: a fifth of r each. */
function fifths(r: number): number[] {
  const size = Math.max(1, Math.ceil(r / 5));
  const out: number[] = [];
  for (let start = 0; start < r; start += size) out.push(Math.min(size, r - start));
  return out;
}

function optsOf(s: Setting): VoteOptions {
  const labels = Array.from({ length: s.labels }, (_, i) => `l${i}`);
  return { labels, ...(s.abstain ? { abstainLabel: 'abstain' } : {}) };
}

function nameOf(s: Setting): string {
  return `${s.labels} labels${s.abstain ? ' + abstain' : ''}, n=${s.n}, r=${s.r}`;
}

/**
 * Whether the first pass (3942a32) computed λ for a setting: its own estimate of its work, on
 * the waves of a fifth, at most 6·10⁷ steps. Replayed here so "previous" is that rule.
 */
function firstPassComputed(s: Setting): boolean {
  const cats = s.labels + (s.abstain ? 1 : 0);
  const choose = (a: number, b: number) => {
    let x = 1;
    for (let i = 1; i <= b; i++) x = (x * (a - b + i)) / i;
    return Math.round(x);
  };
  const perRun = s.n + 1;
  const totals: number[] = [];
  let done = 0;
  for (const w of fifths(s.r)) {
    done += w;
    if (done < s.r) totals.push(done * perRun);
  }
  let work = 0;
  for (let w = 0; w < totals.length; w++) {
    const states = choose(totals[w]! + cats - 1, cats - 1) * cats;
    const toCome = s.r * perRun - totals[w]!;
    const next = w + 1 < totals.length ? choose(totals[w + 1]! - totals[w]! + cats - 1, cats - 1) : 0;
    work += states * (toCome ** Math.min(cats, 3) * (cats - 1) + 16 * next);
  }
  return totals.length > 0 && work <= 6e7;
}

/** Each rule's waves (sizes in runs) and its stop test at level p. */
function rules(s: Setting, p: number): Record<Rule, { waves: number[]; limit: number; promised: number | null; stops: (votes: Record<string, number>, leader: string, toCome: number, cast: readonly Vote[]) => boolean }> {
  const opts = optsOf(s);
  const perRun = s.n + 1;
  const old: StopSchedule = { r: s.r, perRun, waves: fifths(s.r) };
  const prev = firstPassComputed(s) ? stopLimit(p, opts, old) : { limit: 1 - p, expected: null };
  const now = stopLimit(p, opts, { r: s.r, perRun });
  return {
    union: { waves: fifths(s.r), limit: 1 - p, promised: null, stops: (votes, leader, toCome) => changeUnionBound(votes, leader, toCome, opts) <= 1 - p },
    previous: {
      waves: fifths(s.r),
      limit: prev.limit,
      promised: prev.expected,
      stops: (votes, leader, toCome, cast) => voteDecided(votes, toCome, opts) || changeProbability(votes, leader, toCome, opts, prev.limit, firstOriginal(cast)) <= prev.limit,
    },
    now: {
      waves: runWaves(s.r, 'confident').map((w) => w.length),
      limit: now.limit,
      promised: now.expected,
      stops: (votes, leader, toCome, cast) => stopRisk({ rule: 'confident', p }, votes, leader, toCome, opts, firstOriginal(cast), { r: s.r, perRun }) !== null,
    },
  };
}

/** Where a rule stops on this sequence: runs used and the label then. */
function replay(votes: readonly Vote[], s: Setting, opts: VoteOptions, rule: ReturnType<typeof rules>[Rule]): { runs: number; label: string | null } {
  const perRun = s.n + 1;
  let done = 0;
  for (const size of rule.waves) {
    done += size;
    const toCome = (s.r - done) * perRun;
    if (toCome === 0) break;
    const cast = votes.filter((v) => v.run < done);
    const sofar = tallyVotes(cast, opts);
    if (sofar.label !== null && rule.stops(sofar.votes, sofar.label, toCome, cast)) return { runs: done, label: sofar.label };
  }
  return { runs: s.r, label: tallyVotes(votes, opts).label };
}

function simulate(s: Setting, ps: readonly number[], seed: number): Row[] {
  const opts = optsOf(s);
  const categories = [...opts.labels, ...(s.abstain ? ['abstain'] : [])];
  const byP = ps.map((p) => rules(s, p));
  const tally = new Map<string, { disagree: number; runs: number }>();
  for (let i = 0; i < s.sequences; i++) {
    const rand = seededRandom(seed * 1_000_003 + ((s.labels * 131 + s.n) * 37 + s.r) * 100_003 + (s.abstain ? 7 : 0) + i);
    const shares = uniformDirichlet(rand, categories.length);
    const votes: Vote[] = [];
    for (let run = 0; run < s.r; run++) for (let variant = 0; variant <= s.n; variant++) votes.push({ run, variant, label: categories[draw(rand, shares)]! });
    const full = tallyVotes(votes, opts).label;
    ps.forEach((p, pi) => {
      for (const rule of RULES) {
        const got = replay(votes, s, opts, byP[pi]![rule]);
        const key = `${p}|${rule}`;
        const t = tally.get(key) ?? { disagree: 0, runs: 0 };
        if (got.label !== full) t.disagree++;
        t.runs += got.runs;
        tally.set(key, t);
      }
    });
  }
  return ps.flatMap((p, pi) =>
    RULES.map((rule) => {
      const t = tally.get(`${p}|${rule}`)!;
      const r = byP[pi]![rule];
      return { setting: nameOf(s), p, rule, limit: r.limit, promised: r.promised, disagree: t.disagree, sequences: s.sequences, disagreement: t.disagree / s.sequences, votesSaved: 1 - t.runs / (s.r * s.sequences) };
    }),
  );
}

/**
 * For multiplier μ, the stopping rule on the model's waves that minimises E[runs] + μ·E[risk at
 * the stop] (backward induction over every state), and its E[runs] and E[risk]. Any rule may stop
 * anywhere: where the engine would never stop (a tie, or a risk above 0.49) it is charged 0.49,
 * and a state the pass did not expand (negligible mass) is taken as free, so the figure is an
 * upper bound on what any rule saves.
 */
function lagrangian(model: StopModel, mu: number): { runs: number; risk: number } {
  const W = model.waves.length;
  const value: Float64Array[] = [];
  const stop: Uint8Array[] = [];
  const riskOf = (x: number) => (Number.isNaN(x) ? 0.49 : x);
  for (let w = W - 1; w >= 0; w--) {
    const st = model.waves[w]!;
    const more = (w + 1 < W ? model.runs[w + 1]! : model.r) - model.runs[w]!;
    const v = new Float64Array(st.first.length);
    const halt = new Uint8Array(st.first.length);
    for (let i = 0; i < v.length; i++) {
      let go = more;
      if (w + 1 < W) {
        if (st.offset[i + 1] === st.offset[i]) go = 0;
        else for (let e = st.offset[i]!; e < st.offset[i + 1]!; e++) go += st.p[e]! * value[0]![st.to[e]!]!;
      }
      const here = mu * riskOf(st.risk[i]!);
      if (here <= go) halt[i] = 1;
      v[i] = Math.min(here, go);
    }
    value.unshift(v);
    stop.unshift(halt);
  }
  let mass = Float64Array.from(model.start);
  let runs = 0;
  let risk = 0;
  for (let w = 0; w < W; w++) {
    const st = model.waves[w]!;
    const next = w + 1 < W ? new Float64Array(model.waves[w + 1]!.first.length) : null;
    for (let i = 0; i < mass.length; i++) {
      const m = mass[i]!;
      if (m === 0) continue;
      if (stop[w]![i]) {
        runs += m * model.runs[w]!;
        risk += m * riskOf(st.risk[i]!);
      } else if (!next) runs += m * model.r;
      else if (st.offset[i + 1] === st.offset[i]) runs += m * model.runs[w]!;
      else
        for (let e = st.offset[i]!; e < st.offset[i + 1]!; e++) {
          const t = st.to[e]!;
          next[t] = next[t]! + m * st.p[e]!;
        }
    }
    if (next) mass = next;
  }
  return { runs, risk };
}

/** The most any stopping rule on these waves saves (share of runs) with expected risk at most `budget`: a mix of two Lagrangian rules. */
function bestSaving(model: StopModel, budget: number): number {
  let lo = 0;
  let hi = 1e6;
  let above = lagrangian(model, lo);
  let below = lagrangian(model, hi);
  if (above.risk <= budget) return 1 - above.runs / model.r;
  for (let k = 0; k < 60; k++) {
    const mid = Math.sqrt(Math.max(lo, 1e-9) * hi);
    const got = lagrangian(model, mid);
    if (got.risk > budget) {
      lo = mid;
      above = got;
    } else {
      hi = mid;
      below = got;
    }
  }
  const t = above.risk === below.risk ? 0 : (budget - below.risk) / (above.risk - below.risk);
  return 1 - (below.runs + t * (above.runs - below.runs)) / model.r;
}

const ps = values.p.split(',').map(Number);
const seed = Number(values.seed);
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

if (values.bound) {
  const s: Setting = { labels: Number(values.labels), abstain: values.abstain, n: Number(values.n), r: Number(values.r), sequences: 0 };
  const opts = optsOf(s);
  const schedules: [string, number[]][] = [
    ['a fifth each (before)', fifths(s.r)],
    ['first fifth doubling (now)', runWaves(s.r, 'confident').map((w) => w.length)],
    ['one run each', Array.from({ length: s.r }, () => 1)],
  ];
  console.log(`${nameOf(s)}: votes saved with expected disagreement ≤ 1 − P (exact)`);
  console.log('| waves | P | λ rule | any rule (bound) |');
  console.log('|---|---|---|---|');
  for (const [name, waves] of schedules) {
    const schedule: StopSchedule = { r: s.r, perRun: s.n + 1, waves };
    const all = buildStopModel(opts, schedule, 0);
    for (const p of ps) {
      const { limit } = stopLimit(p, opts, schedule);
      const model = buildStopModel(opts, schedule, 1 - p);
      const rule = model ? pct(1 - passAt(model, limit).runs / s.r) : '–';
      console.log(`| ${name} [${waves.join(',')}] | ${p} | ${rule} | ${all ? pct(bestSaving(all, 1 - p)) : '–'} |`);
    }
  }
} else {
  const settings: Setting[] = values.sweep
    ? [
        ...[2, 3, 5].flatMap((labels) => [1, 5, 10].flatMap((n) => [5, 15].map((r) => ({ labels, abstain: false, n, r, sequences: Math.ceil(Number(values.sequences) / 5) })))),
        ...[5, 10].map((n) => ({ labels: 2, abstain: true, n, r: 15, sequences: Math.ceil(Number(values.sequences) / 5) })),
        { labels: 5, abstain: false, n: 5, r: 3, sequences: Math.ceil(Number(values.sequences) / 5) },
      ]
    : [{ labels: Number(values.labels), abstain: values.abstain, n: Number(values.n), r: Number(values.r), sequences: Number(values.sequences) }];
  const rows = settings.flatMap((s) => simulate(s, ps, seed));
  if (values.json) console.log(JSON.stringify(rows, null, 2));
  else {
    console.log('| setting | P | 1 − P | λ previous / now | promised now | disagreement union / previous / now | votes saved union / previous / now | now ÷ union | now ÷ previous |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (let i = 0; i < rows.length; i += 3) {
      const [u, e, a] = [rows[i]!, rows[i + 1]!, rows[i + 2]!];
      console.log(
        `| ${u.setting} | ${u.p} | ${pct(1 - u.p)} | ${e.limit.toFixed(3)} / ${a.limit.toFixed(3)} | ${a.promised === null ? '–' : pct(a.promised)} | ${pct(u.disagreement)} / ${pct(e.disagreement)} / ${pct(a.disagreement)} | ${pct(u.votesSaved)} / ${pct(e.votesSaved)} / ${pct(a.votesSaved)} | ${(a.votesSaved / u.votesSaved).toFixed(2)}× | ${(a.votesSaved / e.votesSaved).toFixed(2)}× |`,
      );
    }
  }
  // The promise: disagreement at most 1 − P (exit 1 otherwise, beyond three standard errors of sampling).
  const broken = rows.filter((r) => r.rule !== 'union' && r.disagreement > 1 - r.p + 3 * Math.sqrt((r.p * (1 - r.p)) / r.sequences));
  if (broken.length > 0) {
    console.error(`promise broken: ${broken.map((r) => `${r.setting} P=${r.p} ${r.rule}: ${r.disagree}/${r.sequences}`).join('; ')}`);
    process.exitCode = 1;
  }
}
