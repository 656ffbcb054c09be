// What a run will cost before it starts (a plan) and what it cost (usage), as every face shows them:
// `--dry-run --json`, `tatra eval --json`'s usage, the app's plan beside the Start button.
// common/: no Node, no DOM.
import { z } from 'zod';
import { rowsNeeded } from './stats/power';

/** A count known only within bounds: with early stopping, from the fewest runs to all of them. */
export const CountRange = z.object({ min: z.number(), max: z.number() });
export type CountRange = z.infer<typeof CountRange>;

/** A number when it is known, {min, max} when it is not (always {min, max} with early stopping). */
export const PlanCount = z.union([z.number(), CountRange]);
export type PlanCount = z.infer<typeof PlanCount>;

export const PlanCalls = z.object({ examples: PlanCount, paraphrases: PlanCount, evaluations: PlanCount, total: PlanCount });

/** McNemar's test at 80 % power and 95 % on a plan's rows, from a stated or measured disagreement. */
export const PlanPower = z.object({
  rows: z.number().int(),
  /** Share of rows where two pairings disagree (one right, the other wrong). */
  disagreement: z.number(),
  /** Where the disagreement comes from, in words. */
  basis: z.string(),
  /** The smallest difference in accuracy (0..1) the rows detect; null: none up to the disagreement. */
  detectable: z.number().nullable(),
  /** A difference asked for (--detect) and the rows it needs (null: more than the disagreement allows). */
  target: z.number().optional(),
  rowsNeeded: z.number().int().nullable().optional(),
});
export type PlanPower = z.infer<typeof PlanPower>;

export const CostPlan = z.object({
  /** Model calls per stage (evaluations include the zero-shot baseline's); cached work is not counted. */
  calls: PlanCalls,
  tokens: z.object({ prompt: PlanCount, completion: PlanCount }),
  /** Estimated wall time; null when there is nothing measured to estimate it from. */
  seconds: PlanCount.nullable(),
  /** Where the time estimate comes from (a job's figures or a calibration), in words. */
  basis: z.string(),
  /** How the tokens were counted: the model's tokenizer for known prompts, estimates for text not generated yet. */
  tokensBasis: z.string(),
  /** Money, for models with a price per million tokens; null otherwise. */
  cost: z.object({ usd: PlanCount, basis: z.string() }).nullable(),
  /**
   * Per stage: calls, prompt and completion tokens, and whether the prompt tokens were counted
   * from known text (true) or partly estimated (false: evaluator prompts hold examples and
   * paraphrases not written yet).
   */
  stages: z.record(z.enum(['examples', 'paraphrases', 'evaluations']), z.object({ calls: PlanCount, prompt: PlanCount, completion: PlanCount, promptCounted: z.boolean() })),
  /** Rows (inputs) the plan covers. */
  rows: z.number().int(),
  /** What the figures cannot foresee, one line each. */
  notes: z.array(z.string()),
  /** What difference between two pairings these rows can tell apart (docs/method.md §16); null where not worked out. */
  power: PlanPower.nullable().default(null),
});
export type CostPlan = z.infer<typeof CostPlan>;


/** The rows a difference (0..1) needs at the plan's disagreement (--detect). */
export function withTarget(p: PlanPower, target: number): PlanPower {
  return { ...p, target, rowsNeeded: rowsNeeded(target, p.disagreement) };
}

/** "with 200 rows, differences under about 8.8 points will not be told apart (…)": the plan's power in one line. */
export function powerText(p: PlanPower): string {
  const rows = `${p.rows.toLocaleString('en-US')} row${p.rows === 1 ? '' : 's'}`;
  const head =
    p.detectable === null
      ? `with ${rows}, no difference between two pairings can be told apart`
      : `with ${rows}, differences under about ${(100 * p.detectable).toFixed(1)} points will not be told apart`;
  const ask = p.target === undefined ? '' : `; ${(100 * p.target).toFixed(1)} points need ${p.rowsNeeded === null || p.rowsNeeded === undefined ? 'more rows than two pairings that disagree this little can give' : `${p.rowsNeeded.toLocaleString('en-US')} rows`}`;
  return `${head}${ask} (80 % power at 95 %; disagreement ${(100 * p.disagreement).toFixed(1)} %, ${p.basis})`;
}

const UsageCounts = z.object({ examples: z.number().int(), paraphrases: z.number().int(), evaluations: z.number().int(), total: z.number().int() });

const StageUsage = z.object({ calls: z.number().int(), prompt: z.number().int(), completion: z.number().int() });

/** What a job actually made, all its sessions together (calls really sent to a model; cached work is free). */
export const Usage = z.object({
  calls: UsageCounts,
  tokens: z.object({ prompt: z.number().int(), completion: z.number().int() }),
  /** The same per stage (jobs stored before it was kept have none). */
  stages: z.object({ examples: StageUsage, paraphrases: StageUsage, evaluations: StageUsage }).optional(),
  /** US dollars, when the job's budget priced its models. */
  usd: z.number().optional(),
});
export type Usage = z.infer<typeof Usage>;

/** A limit a job stops before exceeding: model calls, prompt + completion tokens, or US dollars. */
export const Budget = z.object({ kind: z.enum(['calls', 'tokens', 'usd']), limit: z.number().positive() });
export type Budget = z.infer<typeof Budget>;

/** Price of a remote model in US dollars per million input (prompt) and output (completion) tokens. */
export const Price = z.object({ inPerMillion: z.number().min(0), outPerMillion: z.number().min(0) });
export type Price = z.infer<typeof Price>;

export function emptyUsage(): Usage {
  const stage = () => ({ calls: 0, prompt: 0, completion: 0 });
  return { calls: { examples: 0, paraphrases: 0, evaluations: 0, total: 0 }, tokens: { prompt: 0, completion: 0 }, stages: { examples: stage(), paraphrases: stage(), evaluations: stage() } };
}

/** `calls=50000`, `tokens=2e7`, `usd=12`: one clear line for anything else. */
export function parseBudget(text: string): Budget | string {
  const m = /^\s*(calls|tokens|usd)\s*=\s*([0-9.eE+]+)\s*$/.exec(text);
  const limit = m ? Number(m[2]) : NaN;
  if (!m || !Number.isFinite(limit) || limit <= 0) return `a budget is calls=N, tokens=N or usd=X (e.g. calls=50000, tokens=2e7, usd=12), got "${text}"`;
  const kind = m[1] as Budget['kind'];
  if (kind !== 'usd' && !Number.isInteger(limit)) return `a ${kind} budget is a whole number, got "${text}"`;
  return { kind, limit };
}

export function formatBudget(b: Budget): string {
  return `${b.kind}=${b.kind === 'usd' ? b.limit : Math.round(b.limit)}`;
}

/** The lower and upper ends of a count. */
export function countMin(c: PlanCount): number {
  return typeof c === 'number' ? c : c.min;
}
export function countMax(c: PlanCount): number {
  return typeof c === 'number' ? c : c.max;
}

/** US dollars for some tokens at a price. */
export function priceOf(price: Price, prompt: number, completion: number): number {
  return (prompt / 1e6) * price.inPerMillion + (completion / 1e6) * price.outPerMillion;
}
