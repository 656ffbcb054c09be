// What a job really spends, and the budget that stops it before it spends too much.
//
// The meter sits right on the pool's backends (under a sweep's shared-evaluation wrapper, so an
// answer from the sweep's store costs nothing): every request a model answers is counted by stage,
// with its prompt and completion tokens, as soon as it is answered.
//
// A budget holds in two ways:
//   - a row starts only if it can finish within the budget. Its calls are known exactly in
//     advance (rowCalls below), so a calls budget reserves them: the calls made plus what rows in
//     flight may still make never exceed the limit, and no row is cut in half. For tokens and
//     money a row's size is not known in advance; the largest finished row stands in for it.
//   - before any batch is sent, its worst case (every prompt's tokens plus every token limit,
//     priced) is checked against what is left; a batch that could exceed the budget is never
//     sent. The row that asked for it is dropped (not saved: a resume does it again) and the job
//     pauses, stopped by its budget.
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Budget, type Price, type Usage, emptyUsage, priceOf } from '../common/plan';
import type { ModelSpec } from '../common/model-spec';
import type { RemoteLookup } from '../remote';
import { UserError } from '../common/errors';
import type { TaskDefinition } from '../common/task';
import type { TatraSettings } from '../common/tatra';
import { exampleCalls, planStage } from '../engine';
import { type GenerateRequest, type GenerateResult, type GenerateResultListener, type TatraBackend, withGenerate } from '../engine/backend';

/** A job's budget as stored: the limit, and the prices a money budget counts with. */
export interface JobBudget extends Budget {
  prices?: { generator: Price | null; evaluator: Price | null };
}

/**
 * A budget with the prices a money budget counts with: `price` for every model when given, else
 * each remote library entry's own price (a local model, or a remote one without a price, is free).
 */
export async function pricedBudget(budget: Budget, models: { generator: ModelSpec; evaluator: ModelSpec }, opts: { price?: Price | undefined; lookup?: RemoteLookup | undefined }): Promise<JobBudget> {
  const priceOf = async (spec: ModelSpec): Promise<Price | null> => {
    if (opts.price) return opts.price;
    return spec.kind === 'library' && opts.lookup ? ((await opts.lookup.entry(spec.entry)).price ?? null) : null;
  };
  return { kind: budget.kind, limit: budget.limit, prices: { generator: await priceOf(models.generator), evaluator: await priceOf(models.evaluator) } };
}

/** A budget as stored: a money budget needs a price to count with. */
export function checkJobBudget(budget: JobBudget): JobBudget {
  if (budget.kind === 'usd' && !budget.prices?.generator && !budget.prices?.evaluator) {
    throw new UserError('a budget in usd needs a price: --price-in and --price-out, or a remote model whose entry has one', 'bad_option');
  }
  return budget;
}

/** Thrown instead of sending a batch that could exceed the budget. */
export class BudgetExhausted extends Error {
  constructor(readonly budget: Budget) {
    super(`the budget (${budget.kind}=${budget.limit}) would be exceeded`);
    this.name = 'BudgetExhausted';
  }
}

/** The most calls one row can make: paraphrases and evaluations of every run (math: each answer may need a second call), the baseline, and its own examples with scope `input`. */
export function rowCalls(task: TaskDefinition, settings: TatraSettings, baseline: boolean): number {
  const perAnswer = task.kind === 'math' ? 2 : 1;
  const perRun = (settings.n > 0 ? 1 : 0) + (settings.n + 1) * perAnswer + (settings.scope === 'input' ? exampleCalls(task, settings.k).length : 0);
  return settings.r * perRun + (baseline ? perAnswer : 0);
}

/** One row's share of the meter: what it may still need, and what it made. */
interface RowAccount {
  maxCalls: number;
  calls: number;
  tokens: number;
  usd: number;
}

export class UsageMeter {
  private readonly used: Usage;
  private usd: number;
  /** Worst case of batches sent and not answered yet. */
  private pending = { calls: 0, tokens: 0, usd: 0 };
  private readonly rows = new Set<RowAccount>();
  private readonly current = new AsyncLocalStorage<RowAccount>();
  /** The largest finished row so far: how big a row of this job can be, for tokens and money. */
  private largestRow = { tokens: 0, usd: 0 };
  /** Set once a batch was refused or a row could not start. */
  stopped = false;

  constructor(
    initial: Usage,
    private readonly budget: JobBudget | null,
    /**
     * Called once a batch has answered, before its answers go on (to the generation cache): the
     * job stores its usage there, so a kill loses only counts of calls whose answers were lost too.
     */
    private readonly onCounted: (() => void) | null = null,
  ) {
    this.used = structuredClone(initial);
    this.used.stages ??= emptyUsage().stages!;
    this.usd = initial.usd ?? 0;
  }

  /** Everything made so far, all sessions; `usd` once a price counted something. */
  get usage(): Usage {
    return { ...structuredClone(this.used), ...(this.usd > 0 || this.used.usd !== undefined ? { usd: this.usd } : {}) };
  }

  get limit(): JobBudget | null {
    return this.budget;
  }

  /** Spent so far in the budget's unit. */
  spent(kind: Budget['kind']): number {
    if (kind === 'calls') return this.used.calls.total;
    if (kind === 'tokens') return this.used.tokens.prompt + this.used.tokens.completion;
    return this.usd;
  }

  /** Whether a row of at most `maxCalls` calls can start and finish within the budget. */
  canStartRow(maxCalls: number): boolean {
    const b = this.budget;
    if (!b) return true;
    if (this.stopped) return false;
    let outstanding = 0;
    for (const r of this.rows) {
      if (b.kind === 'calls') outstanding += Math.max(0, r.maxCalls - r.calls);
      else if (b.kind === 'tokens') outstanding += Math.max(0, this.largestRow.tokens - r.tokens);
      else outstanding += Math.max(0, this.largestRow.usd - r.usd);
    }
    const next = b.kind === 'calls' ? maxCalls : b.kind === 'tokens' ? this.largestRow.tokens : this.largestRow.usd;
    const ok = this.spent(b.kind) + outstanding + next <= b.limit;
    if (!ok) this.stopped = true;
    return ok;
  }

  /** Runs one row's work with its calls attributed to it. */
  async inRow<T>(maxCalls: number, work: () => Promise<T>): Promise<T> {
    const account: RowAccount = { maxCalls, calls: 0, tokens: 0, usd: 0 };
    this.rows.add(account);
    try {
      const result = await this.current.run(account, work);
      this.largestRow = { tokens: Math.max(this.largestRow.tokens, account.tokens), usd: Math.max(this.largestRow.usd, account.usd) };
      return result;
    } finally {
      this.rows.delete(account);
    }
  }

  /** The backend of one role, metered (and gated when there is a budget). */
  wrap(role: 'generator' | 'evaluator', inner: TatraBackend): TatraBackend {
    return withGenerate(inner, (requests, onResult) => this.generate(role, inner, requests, onResult));
  }

  private async generate(role: 'generator' | 'evaluator', inner: TatraBackend, requests: readonly GenerateRequest[], onResult?: GenerateResultListener): Promise<GenerateResult[]> {
    const account = this.current.getStore();
    const worst = await this.reserve(role, inner, requests);
    const answered = new Set<number>();
    try {
      return await inner.generate(requests, (i, r) => {
        answered.add(i);
        this.count(role, requests[i]!, r, worst.each[i]!, account);
        onResult?.(i, r);
      });
    } finally {
      // What was never answered (an abort, a failure) frees its reservation.
      requests.forEach((_, i) => (answered.has(i) ? undefined : this.release(worst.each[i]!)));
      if (answered.size > 0) this.onCounted?.();
    }
  }

  private price(role: 'generator' | 'evaluator' | null): Price | null {
    const prices = this.budget?.prices;
    if (!prices) return null;
    return role === null ? null : prices[role];
  }

  private async reserve(role: 'generator' | 'evaluator', inner: TatraBackend, requests: readonly GenerateRequest[]): Promise<{ each: { calls: number; tokens: number; usd: number }[] }> {
    const b = this.budget;
    const price = this.price(role);
    const each = await Promise.all(
      requests.map(async (r) => {
        if (!b || b.kind === 'calls') return { calls: 1, tokens: 0, usd: 0 };
        const prompt = await inner.countPromptTokens(r.prompt);
        return { calls: 1, tokens: prompt + r.maxTokens, usd: price ? priceOf(price, prompt, r.maxTokens) : 0 };
      }),
    );
    if (b) {
      const batch = each.reduce((a, e) => ({ calls: a.calls + e.calls, tokens: a.tokens + e.tokens, usd: a.usd + e.usd }), { calls: 0, tokens: 0, usd: 0 });
      if (this.spent(b.kind) + this.pending[b.kind] + batch[b.kind] > b.limit) {
        this.stopped = true;
        throw new BudgetExhausted(b);
      }
      this.pending.calls += batch.calls;
      this.pending.tokens += batch.tokens;
      this.pending.usd += batch.usd;
    }
    return { each };
  }

  private release(worst: { calls: number; tokens: number; usd: number }): void {
    if (!this.budget) return;
    this.pending.calls -= worst.calls;
    this.pending.tokens -= worst.tokens;
    this.pending.usd -= worst.usd;
  }

  private count(role: 'generator' | 'evaluator', request: GenerateRequest, r: GenerateResult, worst: { calls: number; tokens: number; usd: number }, account: RowAccount | undefined): void {
    this.release(worst);
    const stage = planStage(request.stage ?? (role === 'evaluator' ? 'evaluation' : request.temperature === 0.9 ? 'paraphrases' : 'examples'));
    this.used.calls[stage]++;
    this.used.calls.total++;
    this.used.tokens.prompt += r.promptTokens;
    this.used.tokens.completion += r.completionTokens;
    const st = this.used.stages![stage];
    st.calls++;
    st.prompt += r.promptTokens;
    st.completion += r.completionTokens;
    const price = this.price(role);
    const usd = price ? priceOf(price, r.promptTokens, r.completionTokens) : 0;
    this.usd += usd;
    if (account) {
      account.calls++;
      account.tokens += r.promptTokens + r.completionTokens;
      account.usd += usd;
    }
  }
}

export { emptyUsage };

/** Several jobs' usage together (an experiment's). */
export function sumUsage(usages: readonly Usage[]): Usage {
  const total = emptyUsage();
  let usd: number | undefined;
  for (const u of usages) {
    for (const k of ['examples', 'paraphrases', 'evaluations', 'total'] as const) total.calls[k] += u.calls[k];
    total.tokens.prompt += u.tokens.prompt;
    total.tokens.completion += u.tokens.completion;
    for (const st of ['examples', 'paraphrases', 'evaluations'] as const) {
      const from = u.stages?.[st];
      if (!from) continue;
      total.stages![st].calls += from.calls;
      total.stages![st].prompt += from.prompt;
      total.stages![st].completion += from.completion;
    }
    if (u.usd !== undefined) usd = (usd ?? 0) + u.usd;
  }
  return usd === undefined ? total : { ...total, usd };
}
