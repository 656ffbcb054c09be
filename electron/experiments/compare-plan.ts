// A comparison's plan (what it would cost before it runs), for the app's plan beside Start and
// `tatra compare --dry-run`: the one planner (jobs/planner.ts) on the pairs and the columns the
// comparison's jobs will use, checked as creating the comparison checks them, so a data set
// without the text column is refused in the same words, never planned on a guessed column.
import type { ComparisonSpecInput } from '../common/contract/comparisons';
import { parseModelSpec } from '../common/model-spec';
import type { CostPlan, Price } from '../common/plan';
import type { TaskDefinition } from '../common/task';
import type { Planner } from '../jobs';
import { checkComparisonInputs, newComparisonResult } from './compare';

export async function planComparison(planner: Planner, resolveTask: (ref: string) => Promise<TaskDefinition>, specInput: ComparisonSpecInput, price?: Price): Promise<CostPlan> {
  // Its pairs and paths as its jobs will name them (their cache keys hold them).
  const { spec, pairs } = newComparisonResult(specInput);
  const { inputColumn } = await checkComparisonInputs(spec);
  return planner.compare({
    task: await resolveTask(spec.taskId),
    settings: spec.settings,
    pairs: pairs.map((p) => ({ generator: parseModelSpec(p.generator), evaluator: parseModelSpec(p.evaluator) })),
    data: { path: spec.dataPath, textColumn: inputColumn, ...(spec.limit !== undefined ? { limit: spec.limit } : {}) },
    ...(price ? { price } : {}),
  });
}
