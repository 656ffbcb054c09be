// What a run will cost, said beside its Start button before it starts. At once: model calls for
// the chosen rows, counted by the one rule the jobs' progress uses (common/calls.ts). Then, as the
// settings settle, the host's plan (`plans.*`, the object `--dry-run --json` prints): calls per
// stage, prompt and completion tokens counted with the model's tokenizer, a time estimate with
// what it rests on, and the cost where the models have a price. Classify, Evaluate, Compare and
// Sweep all show this one component, so every Start button says the same things in the same words.
import { useEffect, useState } from 'react';
import { callPlan } from '../../../electron/common/calls';
import type { MethodInput } from '../../../electron/common/contract';
import { type CostPlan, type PlanCount, countMax, countMin, powerText } from '../../../electron/common/plan';
import type { TaskDefinition } from '../../../electron/common/task';
import type { TatraSettings } from '../../../electron/common/tatra';
import { getApi } from '../api/client';
import { count, duration } from './labels';

/** The host's plan for exactly what the Start button would send. */
export type PlanRequest =
  | { method: 'plans.classify'; input: MethodInput<'plans.classify'> }
  | { method: 'plans.job'; input: MethodInput<'plans.job'> }
  | { method: 'plans.sweep'; input: MethodInput<'plans.sweep'> }
  | { method: 'plans.compare'; input: MethodInput<'plans.compare'> };

export interface RunPlanProps {
  task: TaskDefinition | undefined;
  settings: Pick<TatraSettings, 'n' | 'k' | 'r' | 'scope'>;
  /** Rows the run classifies (1 for Classify); null while unknown (no file read yet). */
  rows: number | null;
  baseline?: boolean;
  /** Runs of the whole plan: generator × evaluator pairs (default 1). */
  times?: number;
  /** A sweep: one job per cell, each with its own n and k (summed; shared work makes it cost less). */
  cells?: Pick<TatraSettings, 'n' | 'k' | 'r' | 'scope'>[];
  /** When the run is fully set up: the host plans it (tokens, time, money). */
  request?: PlanRequest | null;
  testId: string;
}

/** "up to 2,576 model calls (10 per row × 257 rows + 6 for shared examples)"; null while unknown. */
export function planText({ task, settings, rows, baseline, times = 1, cells }: Omit<RunPlanProps, 'testId' | 'request'>): string | null {
  if (!task || rows === null) return null;
  if (cells) {
    const total = cells.reduce((sum, c) => sum + callPlan(task, c, { rows }).total, 0);
    return `up to ${count(total, 'model call')} (${count(cells.length, 'job')} × ${count(rows, 'row')}, before what the jobs share)`;
  }
  const plan = callPlan(task, settings, { rows, baseline: baseline === true });
  const parts = rows === 1 ? '' : [`${plan.perRow.toLocaleString('en-US')} per row × ${count(rows, 'row')}`, plan.shared > 0 ? `${plan.shared.toLocaleString('en-US')} for shared examples` : null].filter(Boolean).join(' + ');
  const how = times > 1 ? `${times} × ${plan.total.toLocaleString('en-US')}${parts ? `: ${parts}` : ''}` : parts;
  return `up to ${count(plan.total * times, 'model call')}${how ? ` (${how})` : ''}`;
}

function amount(c: PlanCount, fmt: (x: number) => string): string {
  const lo = countMin(c);
  const hi = countMax(c);
  return lo === hi ? fmt(hi) : `${fmt(lo)}–${fmt(hi)}`;
}

const num = (x: number) => Math.round(x).toLocaleString('en-US');

/**
 * The host's plan in one line: "52 model calls for 12 rows · 6,240 + 348 tokens · about 15 s · $0.02".
 * It names its rows as the call count before it did, so the line never loses what it covers.
 */
export function hostPlanText(plan: CostPlan): string {
  const parts = [
    `${amount(plan.calls.total, num)} model calls${plan.rows === 1 ? '' : ` for ${count(plan.rows, 'row')}`}`,
    `${amount(plan.tokens.prompt, num)} + ${amount(plan.tokens.completion, num)} tokens`,
    plan.seconds === null ? 'time unknown' : `about ${amount(plan.seconds, (s) => duration(s * 1000))}`,
    ...(plan.cost ? [`$${amount(plan.cost.usd, (x) => x.toFixed(2))}`] : []),
  ];
  return parts.join(' · ');
}

/** Everything the plan rests on, for the tooltip and screen readers. */
export function planDetail(plan: CostPlan): string {
  const c = plan.calls;
  return [
    `Calls: ${amount(c.examples, num)} examples, ${amount(c.paraphrases, num)} paraphrases, ${amount(c.evaluations, num)} evaluations.`,
    `Tokens: ${plan.tokensBasis}.`,
    `Time: ${plan.basis}.`,
    ...(plan.cost ? [`Cost: ${plan.cost.basis}.`] : []),
    ...plan.notes.map((n) => `Note: ${n}.`),
  ].join(' ');
}

/**
 * The host's plan for `request`, asked again when it changes (after the settings settle for a
 * moment). The plan asked before is dropped then: on a large file a plan takes seconds, and the
 * host stops one nobody waits for (api/deps.ts CallContext) instead of walking every row for it.
 */
function useHostPlan(request: PlanRequest | null | undefined): CostPlan | null {
  const [plan, setPlan] = useState<{ key: string; plan: CostPlan } | null>(null);
  const key = request ? JSON.stringify(request) : '';
  useEffect(() => {
    if (!key) return;
    const asked = new AbortController();
    const timer = setTimeout(() => {
      const r = JSON.parse(key) as PlanRequest;
      // A plan the host cannot make (a file not read yet, a model missing) leaves the call count alone.
      void (getApi().call(r.method, r.input as never, { signal: asked.signal }) as Promise<CostPlan>).then(
        (p) => (asked.signal.aborted ? undefined : setPlan({ key, plan: p })),
        () => undefined,
      );
    }, 400);
    return () => {
      asked.abort();
      clearTimeout(timer);
    };
  }, [key]);
  return plan && plan.key === key ? plan.plan : null;
}

export function RunPlan(props: RunPlanProps) {
  const host = useHostPlan(props.request);
  const text = host ? hostPlanText(host) : planText(props);
  if (!text) return null;
  return (
    <span className="plan muted small" data-testid={props.testId} title={host ? planDetail(host) : undefined} data-plan={host ? 'host' : 'calls'}>
      {text}
      {host ? <span className="sr-only"> {planDetail(host)}</span> : null}
      {host?.power ? (
        <span className="plan-power" data-testid={props.testId ? `${props.testId}-power` : undefined}>
          {' '}
          · {powerText(host.power)}
        </span>
      ) : null}
    </span>
  );
}
