// The confident early stop on its own model: vote sequences drawn as the rule assumes (each
// category's share from a uniform Dirichlet, then every vote independently from those shares),
// replayed wave by wave as the engine runs them, and each stop compared with the full vote. Three
// rules side by side on the very same sequences:
//
//   union   the union bound over rivals with every final tie counted as a change, stopping at 1 − P
//   each    the exact posterior risk (engine/confident.ts changeProbability), each stop's risk at
//           most 1 − P
//   now     the same risk at most the setting's threshold λ, the largest whose expected risk at
//           the stop is at most 1 − P (engine/confident-limit.ts, what the engine does)
//
// For each P: how often the stopped vote disagrees with the full vote (the promise: at most 1 − P
// on average), the share of votes saved, λ, and the disagreement the model promises for λ computed
// exactly (the forward pass; '–' where the setting is too large to compute and λ is 1 − P).
//
//   npx tsx bench/early-stop-model.ts [--sequences 10000] [--labels 2] [--abstain] [-n 5] [-r 15]
//                                     [--p 0.8,0.9,0.95,0.99] [--seed 1] [--json]
//
// -n is paraphrases per run, so a run casts n + 1 votes. --sweep runs a small grid of settings
// (labels 2/3/5, n 1/5/10, r 5/15) with fewer sequences each.
import { parseArgs } from 'node:util';
import { firstOriginal, runWaves, seededRandom, stopRisk, tallyVotes, type Vote, type VoteOptions } from '../electron/engine';
import { changeProbability, changeUnionBound } from '../electron/engine/confident';
import { stopLimit } from '../electron/engine/confident-limit';
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

interface Row {
  setting: string;
  p: number;
  rule: Rule;
  disagree: number;
  sequences: number;
  disagreement: number;
  votesSaved: number;
}

type Risk = (votes: Record<string, number>, leader: string, toCome: number, cast: readonly Vote[], opts: VoteOptions, p: number, s: Setting) => boolean;
type Rule = 'union' | 'each' | 'now';
const RULES: readonly Rule[] = ['union', 'each', 'now'];

const stops: Record<Rule, Risk> = {
  union: (votes, leader, toCome, _cast, opts, p) => changeUnionBound(votes, leader, toCome, opts) <= 1 - p,
  each: (votes, leader, toCome, cast, opts, p) => changeProbability(votes, leader, toCome, opts, 1 - p, firstOriginal(cast)) <= 1 - p,
  now: (votes, leader, toCome, cast, opts, p, s) => stopRisk({ rule: 'confident', p }, votes, leader, toCome, opts, firstOriginal(cast), { r: s.r, perRun: s.n + 1 }) !== null,
};

/** Where the rule stops on this sequence: runs used and the label then (waves as the engine makes them). */
function replay(votes: readonly Vote[], s: Setting, opts: VoteOptions, p: number, stops: Risk): { runs: number; label: string | null } {
  const perRun = s.n + 1;
  let done = 0;
  for (const wave of runWaves(s.r, 'confident')) {
    done += wave.length;
    const toCome = (s.r - done) * perRun;
    if (toCome === 0) break;
    const cast = votes.filter((v) => v.run < done);
    const sofar = tallyVotes(cast, opts);
    if (sofar.label !== null && stops(sofar.votes, sofar.label, toCome, cast, opts, p, s)) return { runs: done, label: sofar.label };
  }
  return { runs: s.r, label: tallyVotes(votes, opts).label };
}

function simulate(s: Setting, ps: readonly number[], seed: number): Row[] {
  const labels = Array.from({ length: s.labels }, (_, i) => `l${i}`);
  const categories = [...labels, ...(s.abstain ? ['abstain'] : [])];
  const opts: VoteOptions = { labels, ...(s.abstain ? { abstainLabel: 'abstain' } : {}) };
  const name = `${s.labels} labels${s.abstain ? ' + abstain' : ''}, n=${s.n}, r=${s.r}`;
  const tally = new Map<string, { disagree: number; runs: number }>();
  for (let i = 0; i < s.sequences; i++) {
    const rand = seededRandom(seed * 1_000_003 + ((s.labels * 131 + s.n) * 37 + s.r) * 100_003 + i);
    const shares = uniformDirichlet(rand, categories.length);
    const votes: Vote[] = [];
    for (let run = 0; run < s.r; run++) for (let variant = 0; variant <= s.n; variant++) votes.push({ run, variant, label: categories[draw(rand, shares)]! });
    const full = tallyVotes(votes, opts).label;
    for (const p of ps) {
      for (const rule of RULES) {
        const got = replay(votes, s, opts, p, stops[rule]);
        const key = `${p}|${rule}`;
        const t = tally.get(key) ?? { disagree: 0, runs: 0 };
        if (got.label !== full) t.disagree++;
        t.runs += got.runs;
        tally.set(key, t);
      }
    }
  }
  const rows: Row[] = [];
  for (const p of ps) {
    for (const rule of RULES) {
      const t = tally.get(`${p}|${rule}`)!;
      rows.push({ setting: name, p, rule, disagree: t.disagree, sequences: s.sequences, disagreement: t.disagree / s.sequences, votesSaved: 1 - t.runs / (s.r * s.sequences) });
    }
  }
  return rows;
}

const ps = values.p.split(',').map(Number);
const seed = Number(values.seed);
const settings: Setting[] = values.sweep
  ? [2, 3, 5].flatMap((labels) => [1, 5, 10].flatMap((n) => [5, 15].map((r) => ({ labels, abstain: false, n, r, sequences: Math.ceil(Number(values.sequences) / 5) }))))
  : [{ labels: Number(values.labels), abstain: values.abstain, n: Number(values.n), r: Number(values.r), sequences: Number(values.sequences) }];

const rows = settings.flatMap((s) => simulate(s, ps, seed));
const limits = (r: Row) => {
  const s = settings.find((x) => r.setting.endsWith(`n=${x.n}, r=${x.r}`) && r.setting.startsWith(`${x.labels} labels${x.abstain ? ' +' : ','}`))!;
  const labels = Array.from({ length: s.labels }, (_, i) => `l${i}`);
  return stopLimit(r.p, { labels, ...(s.abstain ? { abstainLabel: 'abstain' } : {}) }, { r: s.r, perRun: s.n + 1 });
};
if (values.json) console.log(JSON.stringify(rows, null, 2));
else {
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  console.log('| setting | P | 1 − P | λ | promised (exact) | disagreement union | each | now | votes saved union | each | now | now / each | now / union |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (let i = 0; i < rows.length; i += 3) {
    const [u, e, a] = [rows[i]!, rows[i + 1]!, rows[i + 2]!];
    const l = limits(a);
    console.log(
      `| ${u.setting} | ${u.p} | ${pct(1 - u.p)} | ${l.limit.toFixed(3)} | ${l.expected === null ? '–' : pct(l.expected)} | ${pct(u.disagreement)} | ${pct(e.disagreement)} | ${pct(a.disagreement)} | ${pct(u.votesSaved)} | ${pct(e.votesSaved)} | ${pct(a.votesSaved)} | ${(a.votesSaved / e.votesSaved).toFixed(2)}× | ${(a.votesSaved / u.votesSaved).toFixed(2)}× |`,
    );
  }
}
// The promise: disagreement at most 1 − P (exit 1 otherwise, beyond three standard errors of sampling).
const broken = rows.filter((r) => r.rule === 'now' && r.disagreement > 1 - r.p + 3 * Math.sqrt((r.p * (1 - r.p)) / r.sequences));
if (broken.length > 0) {
  console.error(`promise broken: ${broken.map((r) => `${r.setting} P=${r.p}: ${r.disagree}/${r.sequences}`).join('; ')}`);
  process.exitCode = 1;
}
