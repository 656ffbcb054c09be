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
  /** Runs of the whole plan: generator × evaluator pairs, sweep jobs (default 1). */
  times?: number;
  testId: string;
}

/** "up to 2,576 model calls (10 per row × 257 rows + 6 for shared examples)"; null while unknown. */
export function planText({ task, settings, rows, baseline, times = 1 }: Omit<RunPlanProps, 'testId'>): string | null {
  if (!task || rows === null) return null;
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
