// What a run will cost, said beside its Start button before it starts: model calls for the chosen
// rows, counted by the one rule the jobs' progress uses (common/calls.ts). Classify, Evaluate,
// Compare and Sweep all show this one component; what else a plan holds (tokens, time, money)
// belongs here too, so every Start button says the same things in the same words.
import { callPlan } from '../../../electron/common/calls';
import type { TaskDefinition } from '../../../electron/common/task';
import type { TatraSettings } from '../../../electron/common/tatra';
import { count } from './labels';

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
  testId: string;
}

/** "up to 2,576 model calls (10 per row × 257 rows + 6 for shared examples)"; null while unknown. */
export function planText({ task, settings, rows, baseline, times = 1, cells }: Omit<RunPlanProps, 'testId'>): string | null {
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

export function RunPlan(props: RunPlanProps) {
  const text = planText(props);
  if (!text) return null;
  return (
    <span className="plan muted small" data-testid={props.testId}>
      {text}
    </span>
  );
}
