// Confident early stop: stop launching runs once the remaining votes are unlikely to change the
// winner, under a stated model of the votes (docs/method.md §10).
//
// The model: every valid vote still to come is drawn independently from one categorical
// distribution θ over the categories (the task's labels, its abstain label; for math, the answers
// seen so far plus one category standing for every answer not seen yet), and θ has a uniform
// Dirichlet(1, …, 1) prior. After counts c the posterior is Dirichlet(1 + c), and the m votes to
// come are Dirichlet-multinomial(m, 1 + c).
//
// The risk of stopping now is the posterior probability that the full vote's winner is not the
// current leader L: summed exactly over the leader's votes to come, the rivals' joint law given
// them being again Dirichlet-multinomial (aggregation). A final tie goes to the leader when the
// votes so far already say the tie-break picks it (the first run's original, §9), and counts as a
// change otherwise. A rule that stops only when this risk is at most 1 − P has, averaged over the
// model, a probability of disagreeing with the full vote of at most 1 − P (at each stop the
// posterior risk is below 1 − P; the tower property carries that to the whole procedure, whatever
// the stopping times).
//
// With P = 1 the rule stops only when the bound is 0, i.e. when no outcome in the support lets a
// rival reach the leader: exactly `voteDecided`.
import type { VoteOptions } from './vote';

/** One category of the model with its count so far. */
interface Category {
  label: string | null;
  count: number;
  /** Can it win? The abstain label cannot. */
  rival: boolean;
}

/** The prior's pseudo-count per category. */
export const CONFIDENT_PRIOR = 1;

/** Lanczos approximation (g = 7, 9 terms) of ln Γ(x), x > 0; accurate to about 1e-15 relative. */
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];
export function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

function lnBeta(a: number, b: number): number {
  return lnGamma(a) + lnGamma(b) - lnGamma(a + b);
}

/** ln of the beta-binomial pmf P(K = k), K ~ BetaBinomial(n, α, β). */
function lnBetaBinomial(k: number, n: number, alpha: number, beta: number): number {
  return lnGamma(n + 1) - lnGamma(k + 1) - lnGamma(n - k + 1) + lnBeta(k + alpha, n - k + beta) - lnBeta(alpha, beta);
}

/** The pmf of BetaBinomial(n, α, β) at 0..n, by the ratio recurrence from one log-space anchor. */
function betaBinomialPmf(n: number, alpha: number, beta: number): Float64Array {
  const pmf = new Float64Array(n + 1);
  // Anchor at the mode's neighbourhood so the recurrence neither underflows nor overflows.
  const anchor = Math.min(n, Math.max(0, Math.round((n * alpha) / (alpha + beta))));
  pmf[anchor] = Math.exp(lnBetaBinomial(anchor, n, alpha, beta));
  for (let k = anchor; k < n; k++) pmf[k + 1] = pmf[k]! * (((n - k) * (k + alpha)) / ((k + 1) * (n - k - 1 + beta)));
  for (let k = anchor; k > 0; k--) pmf[k - 1] = pmf[k]! * ((k * (n - k + beta)) / ((n - k + 1) * (k - 1 + alpha)));
  return pmf;
}

/**
 * P(c_j + X_j ≥ c_L + X_L + t) for (X_L, X_j, X_rest) ~ DirMult(m; a, b, g): a = prior + c_L,
 * b = prior + c_j, g = the other categories' prior + counts; t = 0 when a final tie counts as a
 * change, 1 when the leader wins ties. Sums over s = X_L + X_j, then the upper tail of
 * X_j | s ~ BetaBinomial(s, b, a).
 */
function rivalReaches(lead: number, rival: number, m: number, a: number, b: number, g: number, t: 0 | 1): number {
  const d = lead - rival + t;
  // The rival cannot catch up even with every remaining vote: exactly zero.
  if (d > m) return 0;
  const sPmf = g > 0 ? betaBinomialPmf(m, a + b, g) : null;
  let total = 0;
  for (let s = 0; s <= m; s++) {
    const ps = sPmf ? sPmf[s]! : s === m ? 1 : 0;
    if (ps === 0) continue;
    // X_j − X_L ≥ d with X_L = s − X_j: X_j ≥ (s + d) / 2.
    const need = Math.max(0, Math.ceil((s + d) / 2));
    if (need > s) continue;
    const inner = betaBinomialPmf(s, b, a);
    let tail = 0;
    for (let x = need; x <= s; x++) tail += inner[x]!;
    total += ps * tail;
  }
  return Math.min(1, total);
}

/**
 * P(X_j ≤ caps[j] for every j) for X ~ DirMult(total; alphas) with the last category taking what
 * is left (its cap Infinity for categories that cannot win). Category by category: X_i given what
 * the earlier ones took is BetaBinomial(left, α_i, Σ later α), so the mass is carried over the
 * votes used so far, O(K · total²).
 */
function allWithin(total: number, alphas: readonly number[], caps: readonly number[], pmfs: Map<number, Float64Array>[]): number {
  let mass = new Float64Array(total + 1);
  mass[0] = 1;
  let laterAlpha = alphas.reduce((x, y) => x + y, 0);
  for (let i = 0; i < alphas.length; i++) {
    const alpha = alphas[i]!;
    laterAlpha -= alpha;
    const cap = caps[i]!;
    const next = new Float64Array(total + 1);
    for (let used = 0; used <= total; used++) {
      const p = mass[used]!;
      if (p === 0) continue;
      const left = total - used;
      if (i === alphas.length - 1 || laterAlpha === 0) {
        // The last category (or the last with any weight) takes every vote left.
        if (left <= cap) next[total] = next[total]! + p;
        continue;
      }
      // The same (category, votes left) recurs for every x of the caller: computed once.
      const known = (pmfs[i] ??= new Map());
      let pmf = known.get(left);
      if (!pmf) known.set(left, (pmf = betaBinomialPmf(left, alpha, laterAlpha)));
      const top = Math.min(left, cap);
      for (let x = 0; x <= top; x++) next[used + x] = next[used + x]! + p * pmf[x]!;
    }
    mass = next;
    if (laterAlpha === 0) break;
  }
  return Math.min(1, mass[total]!);
}

/** The sum over rivals of P(rival reaches the leader): never below the exact risk, and cheaper with many rivals. */
function unionBound(cats: readonly Category[], lead: Category, m: number, t: 0 | 1, stopAbove: number): number {
  const pseudo = (c: Category) => CONFIDENT_PRIOR + c.count;
  const all = cats.reduce((s, c) => s + pseudo(c), 0);
  let bound = 0;
  for (const c of cats) {
    if (c === lead || !c.rival) continue;
    bound += rivalReaches(lead.count, c.count, m, pseudo(lead), pseudo(c), all - pseudo(lead) - pseudo(c), t);
    // The caller only needs to know it is above its threshold.
    if (bound > stopAbove) return Math.min(1, bound);
  }
  return Math.min(1, bound);
}

/**
 * The union bound with every final tie counted as a change: the rule's risk before it was summed
 * exactly (kept for the benchmark that compares the two, bench/early-stop-model.ts).
 */
export function changeUnionBound(votes: Readonly<Record<string, number>>, leader: string, votesToCome: number, opts: Partial<VoteOptions>): number {
  if (votesToCome <= 0) return 0;
  const cats = categories(votes, opts);
  const lead = cats.find((c) => c.label === leader);
  return lead ? unionBound(cats, lead, votesToCome, 0, Infinity) : 1;
}

/** Above this many steps (rivals beyond the first × votes to come³) the exact sum gives way to the union bound. */
const EXACT_WORK = 2e7;

/** The model's categories with their counts; the leader is the first candidate with the top count as `tallyVotes` orders them. */
function categories(votes: Readonly<Record<string, number>>, opts: Partial<VoteOptions>): Category[] {
  const out: Category[] = Object.entries(votes).map(([label, count]) => ({ label, count, rival: label !== opts.abstainLabel }));
  // Math (no label set): answers not seen yet, as one category that could still win.
  if ((opts.labels?.length ?? 0) === 0) out.push({ label: null, count: 0, rival: true });
  return out;
}

/**
 * The posterior probability, under the model above, that the votes still to come make the full
 * vote's winner another label than `leader`. 0 when no outcome can.
 *
 * `tieWinner` is the label a final tie goes to when it is among the tied, as far as the votes so
 * far already say (the first run's original: the first rule of the tie-break, §9). A tie of the
 * leader with rivals then goes to the leader when `tieWinner` is the leader; any other tie counts
 * as a change (the later tie-break rules read votes not cast yet), so the figure is exact with two
 * labels and an upper bound only when a tie is not settled by the votes so far.
 *
 * Exact: the sum over the leader's votes to come x of P(X_L = x) · P(every rival stays below the
 * leader's final count | x), the rivals' joint law given x being again Dirichlet-multinomial
 * (categories that cannot win aggregated into one). Where that sum would be too long (many rivals
 * and many votes to come) it is the union bound over rivals, each an exact sum, never lower.
 */
export function changeProbability(
  votes: Readonly<Record<string, number>>,
  leader: string,
  votesToCome: number,
  opts: Partial<VoteOptions>,
  stopAbove = Infinity,
  tieWinner: string | null = null,
): number {
  if (votesToCome <= 0) return 0;
  const cats = categories(votes, opts);
  const lead = cats.find((c) => c.label === leader);
  if (!lead) return 1;
  const m = votesToCome;
  const t: 0 | 1 = tieWinner === leader ? 1 : 0;
  const pseudo = (c: Category) => CONFIDENT_PRIOR + c.count;
  const rivals = cats.filter((c) => c !== lead && c.rival);
  // No rival can reach the leader whatever comes: exactly zero.
  if (rivals.every((c) => lead.count - c.count + t > m)) return 0;
  const all = cats.reduce((s, c) => s + pseudo(c), 0);
  const idle = all - pseudo(lead) - rivals.reduce((s, c) => s + pseudo(c), 0);
  // One rival (two labels, with or without the abstain label): its own sum is the exact risk, in m² steps rather than m³.
  if (rivals.length === 1) return rivalReaches(lead.count, rivals[0]!.count, m, pseudo(lead), pseudo(rivals[0]!), idle, t);
  if (Math.max(0, rivals.length - 1) * m ** 3 > EXACT_WORK) return unionBound(cats, lead, m, t, stopAbove);
  const leadPmf = betaBinomialPmf(m, pseudo(lead), all - pseudo(lead));
  const alphas = [...rivals.map(pseudo), ...(idle > 0 ? [idle] : [])];
  const pmfs: Map<number, Float64Array>[] = [];
  let risk = 0;
  for (let x = 0; x <= m; x++) {
    const px = leadPmf[x]!;
    // Terms this small cannot move the risk against any level a rule uses (P ≤ 1 − 1e-6).
    if (px < 1e-15) continue;
    // A rival's final count at most the leader's, less one unless the leader wins the tie.
    const caps = [...rivals.map((c) => lead.count + x - c.count - (1 - t)), ...(idle > 0 ? [Infinity] : [])];
    const stay = caps.some((cap) => cap < 0) ? 0 : allWithin(m - x, alphas, caps, pmfs);
    risk += px * (1 - stay);
    // The caller only needs to know it is above its threshold.
    if (risk > stopAbove) return Math.min(1, risk);
  }
  return Math.min(1, Math.max(0, risk));
}

/** The early-stop rules: `exact` (nothing can change the winner) and `confident` at level p. */
export type EarlyStopRule = { rule: 'exact'; p: 1 } | { rule: 'confident'; p: number };

/** The rule a run's settings ask for; null when early stop is off. P = 1 (or no P) is the exact rule. */
export function earlyStopRule(settings: { earlyStop?: boolean | undefined; earlyStopConfidence?: number | undefined }): EarlyStopRule | null {
  if (settings.earlyStop !== true) return null;
  const p = settings.earlyStopConfidence;
  return p === undefined || p >= 1 ? { rule: 'exact', p: 1 } : { rule: 'confident', p };
}
