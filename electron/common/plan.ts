// What a run will cost before it starts (a plan) and what it cost (usage), as every face shows them:
// `--dry-run --json`, `tatra eval --json`'s usage, the app's plan beside the Start button.
// common/: no Node, no DOM.
import { z } from 'zod';

/** A count known only within bounds: with early stopping, from the fewest runs to all of them. */
export const CountRange = z.object({ min: z.number(), max: z.number() });
export type CountRange = z.infer<typeof CountRange>;

/** A number when it is known, {min, max} when it is not (always {min, max} with early stopping). */
export const PlanCount = z.union([z.number(), CountRange]);
export type PlanCount = z.infer<typeof PlanCount>;

export const PlanCalls = z.object({ examples: PlanCount, paraphrases: PlanCount, evaluations: PlanCount, total: PlanCount });

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
});
export type CostPlan = z.infer<typeof CostPlan>;

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
