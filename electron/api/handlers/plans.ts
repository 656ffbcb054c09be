// Plans beside every Start button: what a classify, an evaluation, a sweep or a comparison would
// cost, made by the one planner of the composition root (jobs/planner.ts) from the same input the
// Start button sends. Nothing runs; only the models' tokenizers are read.
import type { plansMethods } from '../../common/contract/plans';
import { previewDataset } from '../../jobs';
import { newComparisonRecord } from '../../models/compare';
import type { HandlerGroup, HostDeps } from '../deps';
import type { Services } from '../services';
import type { ComparisonSpecInput } from '../../common/contract/models';
import type { CostPlan, Price } from '../../common/plan';

export function createPlansHandlers(deps: HostDeps): HandlerGroup<typeof plansMethods> {
  const planner = () => deps.services.planner();
  const task = async (id: string) => (await deps.services.tasks.find(id)).task;
  return {
    handlers: {
      'plans.classify': async (input) =>
        planner().classify({ task: await task(input.taskId), settings: input.settings, generator: input.generator, evaluator: input.evaluator, input: input.input, ...(input.price ? { price: input.price } : {}) }),
      'plans.job': async (input) =>
        planner().eval({
          task: await task(input.taskId),
          settings: input.settings,
          generator: input.generator,
          evaluator: input.evaluator,
          data: { path: input.dataPath, textColumn: input.inputColumn, ...(input.limit !== undefined ? { limit: input.limit } : {}) },
          baseline: input.baseline,
          ...(input.price ? { price: input.price } : {}),
        }),
      'plans.sweep': async (input) =>
        planner().sweep({
          task: await task(input.taskId),
          grid: input.grid,
          generator: input.generator,
          evaluator: input.evaluator,
          data: { path: input.dataPath, textColumn: input.inputColumn, ...(input.limit !== undefined ? { limit: input.limit } : {}) },
          ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
          ...(input.price ? { price: input.price } : {}),
        }),
      'plans.compare': async ({ price, ...spec }) => planComparison(deps.services, spec, price),
    },
  };
}

/** A comparison's plan: its pairs and paths as its jobs will name them (their cache keys hold them). */
export async function planComparison(services: Services, spec: ComparisonSpecInput, price?: Price): Promise<CostPlan> {
  const record = newComparisonRecord(spec);
  // The column the comparison's jobs will read: given, or guessed as they guess it.
  const textColumn = record.spec.textColumn ?? (await previewDataset(record.spec.dataset, { maxRows: 1 })).suggestedTextColumn ?? 'input';
  return services.planner().compare({
    task: await services.tasks.resolve(record.spec.task),
    settings: record.spec.settings,
    generators: record.spec.generators,
    evaluators: record.spec.evaluators,
    pairs: record.pairs.map((p) => ({ generator: p.generator, evaluator: p.evaluator })),
    data: { path: record.spec.dataset, textColumn, ...(record.spec.limit !== undefined ? { limit: record.spec.limit } : {}) },
    ...(price ? { price } : {}),
  });
}
