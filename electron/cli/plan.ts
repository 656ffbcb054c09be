// --dry-run, --calibrate, --price-in/--price-out and --budget: the options every run command shares
// to know the cost before paying it (the planner in jobs/planner.ts does the work), and the plan
// printed as a table or as the one JSON object scripts read: {"plan": {...}}.
import { type Command, Option } from 'commander';
import { UserError } from '../common/errors';
import type { ModelSpec } from '../common/model-spec';
import { type Budget, type CostPlan, type PlanCount, type Price, parseBudget, powerText, withTarget } from '../common/plan';
import { pricedBudget, type JobBudget } from '../jobs';
import type { RemoteLookup } from '../remote';
import { terminalSafe } from './terminal';
import { err, out, outJson } from './ui';
import { type CliServiceOptions, type CliServices, withCliServices } from './session';

export interface PlanCliOptions {
  dryRun?: boolean;
  calibrate?: boolean;
  /** --detect: a difference in points; the plan says the rows it needs. */
  detect?: number;
  priceIn?: number;
  priceOut?: number;
}

export function priceOption(name: string) {
  return (value: string): number => {
    const n = Number(value.trim());
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new UserError(`${name} must be a price in US dollars per million tokens (a number ≥ 0), got "${value}"`, 'bad_option');
    return n;
  };
}

/** --dry-run (print the plan, run nothing), --calibrate, --price-in/--price-out. */
export function addPlanOptions(cmd: Command): Command {
  return cmd
    .option('--dry-run', 'print what the run would cost (calls per stage, tokens, time, money) without running it; with --json one {"plan": …} object')
    .option('--calibrate', "with --dry-run: measure this machine's speed first (loads the models, times a few calls alone, then rows at full load three ways: a minute or so on a small model); kept for later plans")
    .addOption(new Option('--price-in <usd>', 'US dollars per million prompt tokens, for every model of this run (default: the remote entry\'s price)').argParser(priceOption('--price-in')))
    .addOption(new Option('--price-out <usd>', 'US dollars per million completion tokens (with --price-in)').argParser(priceOption('--price-out')))
    .addOption(new Option('--detect <points>', 'with --dry-run: the rows needed to tell apart two pairings this many points apart (80 % power at 95 %)').argParser(pointsOption));
}

function pointsOption(value: string): number {
  const n = Number(value.trim());
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n >= 100) throw new UserError(`--detect must be a difference in points between 0 and 100 (e.g. 5), got "${value}"`, 'bad_option');
  return n;
}

/** --budget calls=N|tokens=N|usd=X. */
export function budgetOption(): Option {
  return new Option('--budget <limit>', 'stop cleanly before exceeding calls=N, tokens=N (prompt + completion) or usd=X; the job pauses and `resume` continues it (a new --budget may raise the limit)').argParser((v) => {
    const b = parseBudget(v);
    if (typeof b === 'string') throw new UserError(`--budget: ${b}`, 'bad_option');
    return b;
  });
}

/**
 * The budget of --budget with the prices a money budget counts with: --price-in/--price-out for
 * every model, else each remote entry's own price.
 */
export async function jobBudgetFrom(opts: PlanCliOptions & { budget?: Budget }, lookup: RemoteLookup, models: { generator: ModelSpec; evaluator: ModelSpec }): Promise<JobBudget | undefined> {
  return opts.budget ? pricedBudget(opts.budget, models, { price: priceFrom(opts), lookup }) : undefined;
}

export function priceFrom(opts: PlanCliOptions): Price | undefined {
  if (opts.priceIn === undefined && opts.priceOut === undefined) return undefined;
  if (opts.priceIn === undefined || opts.priceOut === undefined) throw new UserError('give both --price-in and --price-out (US dollars per million prompt and completion tokens)', 'bad_option');
  return { inPerMillion: opts.priceIn, outPerMillion: opts.priceOut };
}

function count(c: PlanCount, digits = 0): string {
  const f = (x: number) => (digits > 0 ? x.toFixed(digits) : Math.round(x).toLocaleString('en-US'));
  return typeof c === 'number' ? f(c) : c.min === c.max ? f(c.max) : `${f(c.min)}–${f(c.max)}`;
}

function duration(c: PlanCount): string {
  const one = (s: number) => (s < 10 ? `${Number(s.toFixed(1))} s` : s < 90 ? `${Math.round(s)} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);
  return typeof c === 'number' ? one(c) : c.min === c.max ? one(c.max) : `${one(c.min)}–${one(c.max)}`;
}

/** The plan as a short table. */
export function formatPlan(plan: CostPlan): string {
  const c = plan.calls;
  const out = [
    `plan for ${plan.rows} row${plan.rows === 1 ? '' : 's'} (nothing was run)`,
    `  calls       ${count(c.total)}: ${count(c.examples)} examples, ${count(c.paraphrases)} paraphrases, ${count(c.evaluations)} evaluations`,
    `  tokens      ${count(plan.tokens.prompt)} prompt + ${count(plan.tokens.completion)} completion`,
    `  time        ${plan.seconds === null ? 'unknown' : `about ${duration(plan.seconds)}`} (${plan.basis})`,
  ];
  if (plan.cost) out.push(`  cost        $${count(plan.cost.usd, 2)} (${plan.cost.basis})`);
  out.push(`  tokens from ${plan.tokensBasis}`);
  if (plan.power) out.push(`  power       ${powerText(plan.power)}`);
  for (const n of plan.notes) out.push(`  note: ${n}`);
  return terminalSafe(out.join('\n'));
}

export function printPlan(plan: CostPlan, json: boolean, detect?: number): void {
  const shown = plan.power && detect !== undefined ? { ...plan, power: withTarget(plan.power, detect / 100) } : plan;
  if (json) outJson({ plan: shown });
  else out(formatPlan(shown));
}

/**
 * --dry-run: the plan `make` returns, printed. With --calibrate the services' pool is lent to it
 * (the models load for a short measurement); otherwise nothing loads but the tokenizers.
 */
export async function withPlan(
  opts: PlanCliOptions & CliServiceOptions & { json?: boolean; concurrency?: number },
  make: (services: CliServices, calibrate: boolean) => Promise<CostPlan>,
): Promise<void> {
  await withCliServices({ ...opts, ...(opts.concurrency !== undefined ? { sequences: opts.concurrency } : {}) }, async (services) => {
    if (opts.calibrate) err('calibrating: loading the models, timing a few calls alone, then rows at full load with n paraphrase lines, one and none…');
    printPlan(await make(services, opts.calibrate === true), opts.json === true, opts.detect);
  });
}
