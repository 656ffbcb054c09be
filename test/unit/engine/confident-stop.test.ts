// The confident early-stop rule (engine/confident.ts). Its promise: when votes follow the model it
// assumes (each label's share drawn from a uniform Dirichlet, then every vote drawn independently
// from those shares), the stopped vote disagrees with the full vote in at most a fraction 1 − P of
// inputs on average (checked exactly by enumeration on small settings, and by sampling on larger
// ones); and at P = 1 it is exactly the exact rule. Seeded generators, so
// a failure names the case that broke it.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify, firstOriginal, seededRandom, tallyVotes } from '../../../electron/engine';
import { changeProbability, changeUnionBound, earlyStopRule, lnGamma, type EarlyStopRule } from '../../../electron/engine/confident';
import { buildStopModel, expectedRiskAt, passAt, stopLimit, stopRisk } from '../../../electron/engine/confident-limit';
import { runWaves, voteDecided, type Vote, type VoteOptions } from '../../../electron/engine/vote';
import { loadBuiltInTasks } from '../../../electron/tasks';
import { TatraResult, type TatraSettings } from '../../../electron/common/tatra';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { draw, uniformDirichlet } from '../../helpers/dirichlet';

const tasks = new Map((await loadBuiltInTasks(join(import.meta.dirname, '../../../tasks'))).map((t) => [t.id, t]));

/** Where a rule stops over a full vote sequence, waves as the engine makes them: the runs used and the label then. */
function replay(votes: Vote[], r: number, perRun: number, rule: EarlyStopRule, opts: VoteOptions): { runs: number; label: string | null } {
  let done = 0;
  for (const wave of runWaves(r, rule.rule)) {
    done += wave.length;
    const sofar = tallyVotes(
      votes.filter((v) => v.run < done),
      opts,
    );
    const cast = votes.filter((v) => v.run < done);
    if (stopRisk(rule, sofar.votes, sofar.label, (r - done) * perRun, opts, firstOriginal(cast), { r, perRun }) !== null) return { runs: done, label: sofar.label };
  }
  return { runs: r, label: tallyVotes(votes, opts).label };
}

describe('changeProbability', () => {
  it('is exactly 0 when, and only when, the exact rule says decided (P = 1 is the exact rule)', () => {
    const cases: VoteOptions[] = [{ labels: ['a', 'b'] }, { labels: ['a', 'b', 'c', 'd', 'e'], defaultLabel: 'c' }, { labels: ['obj', 'subj'], abstainLabel: 'unsure' }, { labels: [] }];
    let decided = 0;
    for (const [ci, opts] of cases.entries()) {
      for (let trial = 0; trial < 400; trial++) {
        const rand = seededRandom(ci * 10_000 + trial);
        const names = opts.labels.length > 0 ? [...opts.labels, ...(opts.abstainLabel ? [opts.abstainLabel] : [])] : ['42', '7', '3.5'];
        const votes: Vote[] = Array.from({ length: 1 + Math.floor(rand() * 30) }, (_, i) => ({ run: Math.floor(i / 3), variant: i % 3, label: names[Math.floor(rand() ** 2 * names.length)]! }));
        const tally = tallyVotes(votes, opts);
        const toCome = Math.floor(rand() * 25);
        const exact = voteDecided(tally.votes, toCome, opts);
        const p = tally.label === null ? 1 : changeProbability(tally.votes, tally.label, toCome, opts);
        const context = `case ${ci} trial ${trial}: ${JSON.stringify(tally.votes)}, ${toCome} to come`;
        if (toCome > 0) expect(p === 0, context).toBe(exact);
        expect(stopRisk({ rule: 'exact', p: 1 }, tally.votes, tally.label, toCome, opts, null, { r: 10, perRun: 3 }) !== null, context).toBe(exact && toCome > 0);
        expect(stopRisk({ rule: 'confident', p: 1 }, tally.votes, tally.label, toCome, opts, null, { r: 10, perRun: 3 }) !== null, context).toBe(exact && toCome > 0);
        if (exact) decided++;
      }
    }
    expect(decided).toBeGreaterThan(200);
  });

  it('with two labels it is the exact posterior predictive probability (against a direct sum of the beta-binomial)', () => {
    for (const [a, b, m] of [
      [6, 0, 12],
      [10, 4, 30],
      [3, 3, 5],
      [20, 1, 7],
      [0, 0, 9],
      [40, 25, 60],
    ] as const) {
      // P(b + X_b ≥ a + X_a) with X_b ~ BetaBinomial(m, 1 + b, 1 + a) and X_a = m − X_b.
      let direct = 0;
      for (let x = 0; x <= m; x++) {
        if (b + x < a + (m - x)) continue;
        const lnC = lnGamma(m + 1) - lnGamma(x + 1) - lnGamma(m - x + 1);
        const lnB = (p: number, q: number) => lnGamma(p) + lnGamma(q) - lnGamma(p + q);
        direct += Math.exp(lnC + lnB(x + 1 + b, m - x + 1 + a) - lnB(1 + b, 1 + a));
      }
      expect(changeProbability({ x: a, y: b }, 'x', m, { labels: ['x', 'y'] })).toBeCloseTo(direct, 12);
    }
  });

  it('is the exact posterior risk: equal to a brute-force sum over every outcome of the votes to come (ties settled by the first original when they can be)', () => {
    /** Every way to split m votes over k categories. */
    function* splits(m: number, k: number): Generator<number[]> {
      if (k === 1) {
        yield [m];
        return;
      }
      for (let x = 0; x <= m; x++) for (const rest of splits(m - x, k - 1)) yield [x, ...rest];
    }
    const lnChoose = (a: number, b: number) => lnGamma(a + 1) - lnGamma(b + 1) - lnGamma(a - b + 1);
    const cases: { opts: VoteOptions; counts: Record<string, number>; m: number; tie: string | null }[] = [
      { opts: { labels: ['a', 'b'] }, counts: { a: 4, b: 2 }, m: 6, tie: 'a' },
      { opts: { labels: ['a', 'b'] }, counts: { a: 4, b: 2 }, m: 6, tie: 'b' },
      { opts: { labels: ['a', 'b'] }, counts: { a: 3, b: 3 }, m: 4, tie: null },
      { opts: { labels: ['a', 'b', 'c'] }, counts: { a: 5, b: 3, c: 1 }, m: 7, tie: 'a' },
      { opts: { labels: ['a', 'b', 'c'] }, counts: { a: 5, b: 3, c: 1 }, m: 7, tie: 'c' },
      { opts: { labels: ['a', 'b', 'c', 'd'] }, counts: { a: 2, b: 1, c: 1, d: 0 }, m: 5, tie: 'a' },
      { opts: { labels: ['obj', 'subj'], abstainLabel: 'unsure' }, counts: { obj: 3, subj: 1, unsure: 4 }, m: 6, tie: 'obj' },
      { opts: { labels: ['obj', 'subj'], abstainLabel: 'unsure' }, counts: { obj: 3, subj: 1, unsure: 4 }, m: 6, tie: 'unsure' },
      // Math: the answers so far and one category for every answer not seen yet.
      { opts: { labels: [] }, counts: { '42': 3, '7': 1 }, m: 5, tie: '42' },
    ];
    for (const { opts, counts, m, tie } of cases) {
      const names = [...Object.keys(counts), ...(opts.labels.length === 0 ? ['(unseen)'] : [])];
      const alpha = names.map((nm) => 1 + (counts[nm] ?? 0));
      const total = alpha.reduce((x, y) => x + y, 0);
      const leader = tallyVotes(
        Object.entries(counts).flatMap(([label, c]) => Array.from({ length: c }, (_, i) => ({ run: i + 1, variant: 1, label }))),
        opts,
      ).label!;
      let risk = 0;
      for (const x of splits(m, names.length)) {
        // Dirichlet-multinomial with integer parameters: Π C(x_j + α_j − 1, x_j) / C(m + A − 1, m).
        const p = Math.exp(x.reduce((acc, xj, j) => acc + lnChoose(xj + alpha[j]! - 1, xj), 0) - lnChoose(m + total - 1, m));
        const final = names.map((nm, j) => (counts[nm] ?? 0) + x[j]!);
        const candidates = names.map((nm, j) => ({ nm, c: final[j]! })).filter((c) => c.nm !== opts.abstainLabel);
        const top = Math.max(...candidates.map((c) => c.c));
        const tied = candidates.filter((c) => c.c === top).map((c) => c.nm);
        const winner = tied.length === 1 ? tied[0] : tie !== null && tied.includes(tie) ? tie : null;
        if (winner !== leader) risk += p;
      }
      const context = `${JSON.stringify(counts)} + ${m}, tie to ${tie}`;
      expect(changeProbability(counts, leader, m, opts, Infinity, tie), context).toBeCloseTo(risk, 12);
      // The union bound it replaces is never below it.
      expect(changeUnionBound(counts, leader, m, opts), context).toBeGreaterThanOrEqual(risk - 1e-12);
    }
  });

  it('bounds the posterior probability that the winner changes, estimated by sampling the model (five labels and an abstain label)', () => {
    const opts: VoteOptions = { labels: ['a', 'b', 'c', 'd', 'e'], abstainLabel: 'u' };
    const names = ['a', 'b', 'c', 'd', 'e', 'u'];
    const rand = seededRandom(99);
    for (const counts of [
      [9, 4, 1, 0, 0, 2],
      [5, 5, 0, 0, 0, 0],
      [12, 2, 2, 2, 2, 6],
      [3, 0, 0, 0, 0, 0],
    ]) {
      const votes = Object.fromEntries(names.map((n, i) => [n, counts[i]!]));
      const m = 12;
      const bound = changeProbability(votes, 'a', m, opts);
      // Monte Carlo of the same posterior: θ ~ Dirichlet(1 + c), then m votes.
      let changed = 0;
      const samples = 20_000;
      for (let s = 0; s < samples; s++) {
        const g = counts.map((c) => {
          // Gamma(1 + c) as a sum of 1 + c exponentials (integer shape).
          let x = 0;
          for (let i = 0; i <= c; i++) x -= Math.log(1 - rand());
          return x;
        });
        const sum = g.reduce((x, y) => x + y, 0);
        const shares = g.map((x) => x / sum);
        const final = [...counts];
        for (let v = 0; v < m; v++) final[draw(rand, shares)]!++;
        if (final.slice(1, 5).some((c) => c >= final[0]!)) changed++;
      }
      const estimate = changed / samples;
      const se = Math.sqrt((estimate * (1 - estimate)) / samples) + 1e-4;
      expect(bound, `counts ${counts.join(',')}`).toBeGreaterThanOrEqual(estimate - 4 * se);
      expect(bound).toBeLessThanOrEqual(1);
    }
  });
});

describe('the confident rule over random vote sequences drawn from its model', () => {
  const cases: { name: string; opts: VoteOptions; categories: string[] }[] = [
    { name: 'two labels', opts: { labels: ['negative', 'positive'] }, categories: ['negative', 'positive'] },
    { name: 'five labels with a default', opts: { labels: ['a', 'b', 'c', 'd', 'e'], defaultLabel: 'c' }, categories: ['a', 'b', 'c', 'd', 'e'] },
    { name: 'an abstain label', opts: { labels: ['obj', 'subj'], abstainLabel: 'unsure' }, categories: ['obj', 'subj', 'unsure'] },
    // Math: the rule sees only the answers so far plus "not seen yet"; the votes come from four answers.
    { name: 'math answers', opts: { labels: [] }, categories: ['42', '7', '3.5', '-1'] },
  ];
  for (const c of cases) {
    for (const p of [0.9, 0.95, 0.99]) {
      it(`${c.name}, P=${p}: disagreement with the full vote within 1 − P, and runs saved`, () => {
        const trials = 3000;
        let disagree = 0;
        let runsUsed = 0;
        let runsAll = 0;
        for (let trial = 0; trial < trials; trial++) {
          const rand = seededRandom(Math.round(p * 1000) * 100_000 + trial);
          // A few settings, each calibrated once (stopLimit caches it).
          const r = [3, 5, 10, 15][Math.floor(rand() * 4)]!;
          const perRun = [1, 2, 4, 6][Math.floor(rand() * 4)]!;
          const shares = uniformDirichlet(rand, c.categories.length);
          const votes: Vote[] = [];
          for (let run = 0; run < r; run++) for (let variant = 0; variant < perRun; variant++) votes.push({ run, variant, label: c.categories[draw(rand, shares)]! });
          const full = tallyVotes(votes, c.opts).label;
          const early = replay(votes, r, perRun, { rule: 'confident', p }, c.opts);
          if (early.label !== full) disagree++;
          runsUsed += early.runs;
          runsAll += r;
        }
        const rate = disagree / trials;
        // A one-sided binomial allowance of three standard errors at the promised rate.
        const allowance = 3 * Math.sqrt((p * (1 - p)) / trials);
        expect(rate, `${disagree} of ${trials} disagreed`).toBeLessThanOrEqual(1 - p + allowance);
        // Not vacuous: the rule does stop early.
        expect(runsUsed / runsAll).toBeLessThan(0.85);
      });
    }
  }

  it('stops no later than the exact rule would on the same waves, and the exact rule never disagrees', () => {
    const opts: VoteOptions = { labels: ['a', 'b', 'c'] };
    for (let trial = 0; trial < 500; trial++) {
      const rand = seededRandom(7_000 + trial);
      const r = 2 + Math.floor(rand() * 14);
      const perRun = 1 + Math.floor(rand() * 6);
      const shares = uniformDirichlet(rand, 3);
      const votes: Vote[] = [];
      for (let run = 0; run < r; run++) for (let variant = 0; variant < perRun; variant++) votes.push({ run, variant, label: ['a', 'b', 'c'][draw(rand, shares)]! });
      const exact = replay(votes, r, perRun, { rule: 'exact', p: 1 }, opts);
      expect(exact.label).toBe(tallyVotes(votes, opts).label);
      // On the confident rule's own waves, P = 1 stops exactly where the exact rule's test first holds.
      const asExact = replay(votes, r, perRun, { rule: 'confident', p: 1 }, opts);
      const sure = replay(votes, r, perRun, { rule: 'confident', p: 0.95 }, opts);
      expect(sure.runs).toBeLessThanOrEqual(asExact.runs);
    }
  });
});

describe('the threshold: the largest risk whose expected risk at the stop is at most 1 − P (stopLimit)', () => {
  /** Every vote sequence of length `total` over `cats` categories. */
  function* sequences(total: number, cats: number): Generator<number[]> {
    const seq = new Array<number>(total).fill(0);
    for (;;) {
      yield seq;
      let i = total - 1;
      while (i >= 0 && seq[i] === cats - 1) seq[i--] = 0;
      if (i < 0) return;
      seq[i]!++;
    }
  }
  const cases: { name: string; opts: VoteOptions; r: number; perRun: number }[] = [
    { name: 'two labels, r=5, 2 votes a run', opts: { labels: ['a', 'b'] }, r: 5, perRun: 2 },
    { name: 'two labels, r=4, 3 votes a run', opts: { labels: ['a', 'b'] }, r: 4, perRun: 3 },
    { name: 'three labels, r=4, 2 votes a run', opts: { labels: ['a', 'b', 'c'] }, r: 4, perRun: 2 },
    { name: 'two labels and an abstain label, r=4, 2 votes a run', opts: { labels: ['obj', 'subj'], abstainLabel: 'unsure' }, r: 4, perRun: 2 },
    // The pass carries each state's label permutations as one: many labels check that symmetry.
    { name: 'five labels, r=3, 2 votes a run', opts: { labels: ['a', 'b', 'c', 'd', 'e'] }, r: 3, perRun: 2 },
    { name: 'three labels and an abstain label, r=3, 2 votes a run', opts: { labels: ['a', 'b', 'c'], abstainLabel: 'u' }, r: 3, perRun: 2 },
  ];
  for (const c of cases) {
    it(`${c.name}: the forward pass equals a brute-force sum over every vote sequence, and the exact disagreement is at most 1 − P`, () => {
      const names = [...c.opts.labels, ...(c.opts.abstainLabel !== undefined ? [c.opts.abstainLabel] : [])];
      const total = c.r * c.perRun;
      const lnFact = (x: number) => lnGamma(x + 1);
      for (const p of [0.8, 0.9, 0.95]) {
        const { limit, expected } = stopLimit(p, c.opts, { r: c.r, perRun: c.perRun });
        // It spends the budget the plain rule (each stop at most 1 − P) leaves.
        expect(limit).toBeGreaterThanOrEqual(1 - p);
        let riskAtStop = 0;
        let disagree = 0;
        let plainRisk = 0;
        let runs = 0;
        let plainRuns = 0;
        for (const seq of sequences(total, names.length)) {
          const votes: Vote[] = seq.map((x, i) => ({ run: Math.floor(i / c.perRun), variant: i % c.perRun, label: names[x]! }));
          // The model's probability of this sequence: a Pólya urn from one ball per category.
          const counts = names.map((_, j) => seq.filter((x) => x === j).length);
          const prob = Math.exp(counts.reduce((a, k) => a + lnFact(k), 0) + lnFact(names.length - 1) - lnFact(total + names.length - 1));
          const full = tallyVotes(votes, c.opts).label;
          for (const rule of ['now', 'plain'] as const) {
            let done = 0;
            let stop: { runs: number; label: string | null; risk: number } = { runs: c.r, label: full, risk: 0 };
            for (const wave of runWaves(c.r, 'confident')) {
              done += wave.length;
              if (done === c.r) break;
              const cast = votes.filter((v) => v.run < done);
              const sofar = tallyVotes(cast, c.opts);
              const toCome = (c.r - done) * c.perRun;
              const risk =
                rule === 'now'
                  ? stopRisk({ rule: 'confident', p }, sofar.votes, sofar.label, toCome, c.opts, firstOriginal(cast), { r: c.r, perRun: c.perRun })
                  : sofar.label !== null && changeProbability(sofar.votes, sofar.label, toCome, c.opts, Infinity, firstOriginal(cast)) <= 1 - p
                    ? changeProbability(sofar.votes, sofar.label, toCome, c.opts, Infinity, firstOriginal(cast))
                    : null;
              if (risk !== null) {
                stop = { runs: done, label: sofar.label, risk };
                break;
              }
            }
            if (rule === 'now') {
              riskAtStop += prob * stop.risk;
              if (stop.label !== full) disagree += prob;
              runs += prob * stop.runs;
            } else {
              plainRisk += prob * stop.risk;
              plainRuns += prob * stop.runs;
            }
          }
        }
        const context = `P=${p}, λ=${limit}`;
        // The forward pass is the brute-force expectation of the risk at the stop, for the threshold found and for 1 − P.
        expect(expected, context).not.toBeNull();
        expect(expected!, context).toBeCloseTo(riskAtStop, 12);
        expect(expectedRiskAt(1 - p, c.opts, { r: c.r, perRun: c.perRun })!, context).toBeCloseTo(plainRisk, 12);
        // The promise, exactly: the probability that the stopped vote differs from the full vote (every tie-break rule applied) is at most 1 − P.
        expect(disagree, context).toBeLessThanOrEqual(riskAtStop + 1e-12);
        expect(disagree, context).toBeLessThanOrEqual(1 - p);
        // And it never runs more than the plain rule.
        expect(runs, context).toBeLessThanOrEqual(plainRuns + 1e-12);
        // A pass that leaves every state reached with mass below 20 % unexpanded still bounds the risk at the stop (λ × the mass it left).
        const prunedModel = buildStopModel(c.opts, { r: c.r, perRun: c.perRun }, 1 - p, 0.2)!;
        expect(passAt(prunedModel, limit).risk, context).toBeGreaterThanOrEqual(riskAtStop - 1e-12);
        // Not vacuous: with three waves or more before the last, some state was left.
        if (c.r >= 4) expect(prunedModel.waves.some((w) => w.dropped.some((x) => x === 1))).toBe(true);
      }
    });
  }

  it('is 1 − P where it is not computed: math answers (not known beforehand) and settings too large to enumerate', () => {
    expect(stopLimit(0.9, { labels: [] }, { r: 15, perRun: 6 })).toEqual({ limit: 1 - 0.9, expected: null });
    expect(stopLimit(0.9, { labels: ['a', 'b', 'c', 'd', 'e'] }, { r: 15, perRun: 11 })).toEqual({ limit: 1 - 0.9, expected: null });
    expect(stopLimit(1, { labels: ['a', 'b'] }, { r: 15, perRun: 6 }).limit).toBe(0);
  });

  it('settings the pass once left to 1 − P (three labels or an abstain label at n=5, r=15; five labels at n=5, r=3) now spend the budget and keep the promise', () => {
    const settings: { opts: VoteOptions; r: number; perRun: number }[] = [
      { opts: { labels: ['a', 'b', 'c'] }, r: 15, perRun: 6 },
      { opts: { labels: ['obj', 'subj'], abstainLabel: 'unsure' }, r: 15, perRun: 6 },
      { opts: { labels: ['a', 'b', 'c', 'd', 'e'] }, r: 3, perRun: 6 },
    ];
    for (const s of settings) {
      const { limit, expected } = stopLimit(0.95, s.opts, { r: s.r, perRun: s.perRun });
      expect(limit, JSON.stringify(s)).toBeGreaterThan(0.1);
      expect(expected!, JSON.stringify(s)).toBeLessThanOrEqual(0.05);
    }
  });

  it('depends on P and the setting alone, not on the levels asked before (a level too long to compute leaves the others computed)', () => {
    // Two labels and an abstain label at n=8, r=15: too long to compute at P=0.95, computed at P=0.8.
    const asked = stopLimit(0.95, { labels: ['a', 'b'], abstainLabel: 'u' }, { r: 15, perRun: 9 });
    expect(asked.expected).toBeNull();
    const after = stopLimit(0.8, { labels: ['a', 'b'], abstainLabel: 'u' }, { r: 15, perRun: 9 });
    // The same setting under other names, its first level asked.
    const alone = stopLimit(0.8, { labels: ['x', 'y'], abstainLabel: 'z' }, { r: 15, perRun: 9 });
    expect(alone.expected).not.toBeNull();
    expect(after).toEqual(alone);
  });

  it('the paper-like setting (two labels, n=5, r=15): well above 1 − P at P=0.95, its expected risk at most 1 − P', () => {
    const { limit, expected } = stopLimit(0.95, { labels: ['negative', 'positive'] }, { r: 15, perRun: 6 });
    expect(limit).toBeGreaterThan(0.1);
    expect(expected!).toBeLessThanOrEqual(0.05);
    expect(expected!).toBeGreaterThan(0.03);
  });
});

describe('earlyStopRule', () => {
  it('off unless asked; P absent or 1 is the exact rule', () => {
    expect(earlyStopRule({})).toBeNull();
    expect(earlyStopRule({ earlyStop: false, earlyStopConfidence: 0.9 })).toBeNull();
    expect(earlyStopRule({ earlyStop: true })).toEqual({ rule: 'exact', p: 1 });
    expect(earlyStopRule({ earlyStop: true, earlyStopConfidence: 1 })).toEqual({ rule: 'exact', p: 1 });
    expect(earlyStopRule({ earlyStop: true, earlyStopConfidence: 0.99 })).toEqual({ rule: 'confident', p: 0.99 });
  });

  it('waves for the confident rule: the first fifth of r in doubling waves (1, 1, 2, …), then a fifth per wave', () => {
    expect(runWaves(15, 'confident').map((w) => w.length)).toEqual([1, 1, 1, 3, 3, 3, 3]);
    expect(runWaves(3, 'confident').map((w) => w.length)).toEqual([1, 1, 1]);
    expect(runWaves(11, 'confident').map((w) => w.length)).toEqual([1, 1, 1, 3, 3, 2]);
    expect(runWaves(30, 'confident').map((w) => w.length)).toEqual([1, 1, 2, 2, 6, 6, 6, 6]);
    for (let r = 1; r <= 100; r++) {
      const waves = runWaves(r, 'confident');
      expect(waves.flat()).toEqual(Array.from({ length: r }, (_, j) => j));
      const fifth = Math.ceil(r / 5);
      expect(waves[0]).toEqual([0]);
      // Every fifth of r still ends a wave (it refines the waves of a fifth each), and no wave is larger.
      const ends = new Set(waves.map((w) => w.at(-1)! + 1));
      for (let end = fifth; end < r; end += fifth) expect(ends.has(end), `r=${r}`).toBe(true);
      expect(Math.max(...waves.map((w) => w.length))).toBeLessThanOrEqual(fifth);
    }
  });
});

describe('classify with the confident rule (scripted backend)', () => {
  const sst2 = tasks.get('sst2')!;
  const base: TatraSettings = { n: 5, k: 4, r: 15, seed: 3, scope: 'run' };

  it('unanimous votes stop after the first wave of 1 run at P=0.99, recording the rule and its risk; P=1 is the exact rule', async () => {
    const sure = new ScriptedBackend(politeScript({ firstLabel: 'positive' }));
    const result = await classify({ task: sst2, input: 'a fine film', settings: { ...base, earlyStop: true, earlyStopConfidence: 0.99 }, generator: sure, evaluator: sure });
    expect(() => TatraResult.parse(result)).not.toThrow();
    expect(result.label).toBe('positive');
    expect(result.decidedEarly).toBe(true);
    expect(result.runs.map((r) => r.run)).toEqual([0]);
    expect(result.votesCast).toBe(6);
    expect(result.earlyStop?.rule).toBe('confident');
    expect(result.earlyStop?.p).toBe(0.99);
    expect(result.earlyStop?.risk).toBeGreaterThan(0);
    expect(result.earlyStop?.risk).toBeLessThanOrEqual(stopLimit(0.99, { labels: ['negative', 'positive'] }, { r: 15, perRun: 6 }).limit);
    expect(result.callsSaved).toBe(14 * 9);

    const one = new ScriptedBackend(politeScript({ firstLabel: 'positive' }));
    const exact = new ScriptedBackend(politeScript({ firstLabel: 'positive' }));
    const atOne = await classify({ task: sst2, input: 'a fine film', settings: { ...base, earlyStop: true, earlyStopConfidence: 1 }, generator: one, evaluator: one });
    const asExact = await classify({ task: sst2, input: 'a fine film', settings: { ...base, earlyStop: true }, generator: exact, evaluator: exact });
    expect(atOne.earlyStop).toEqual({ rule: 'exact', p: 1, risk: 0 });
    expect({ ...atOne, totalMs: 0, stages: null }).toEqual({ ...asExact, totalMs: 0, stages: null, settings: atOne.settings });
    expect(one.requests.length).toBe(exact.requests.length);
  });

  it('a split vote runs to the end; without early stop the rule is null', async () => {
    const backend = new ScriptedBackend(politeScript({ answer: (c) => (c.startsWith('Paraphrase') ? 'negative' : 'positive') }));
    const split = await classify({ task: sst2, input: 'mixed', settings: { ...base, n: 1, r: 5, earlyStop: true, earlyStopConfidence: 0.95 }, generator: backend, evaluator: backend });
    expect(split.decidedEarly).toBe(false);
    expect(split.runs).toHaveLength(5);
    expect(split.earlyStop).toEqual({ rule: 'confident', p: 0.95 });
    const off = await classify({ task: sst2, input: 'mixed', settings: { ...base, n: 1, r: 2 }, generator: backend, evaluator: backend });
    expect(off.earlyStop).toBeNull();
  });
});
