// Plans beside every Start button: what a classify, an evaluation, a sweep or a comparison would
// cost, made by the one planner of the composition root (jobs/planner.ts) from the same input the
// Start button sends. Nothing runs; only the models' tokenizers are read.
import { parseModelPair } from '../../common/model-spec';
import type { plansMethods } from '../../common/contract/plans';
import { planComparison } from '../../experiments';
import type { HandlerGroup, HostDeps } from '../deps';

export function createPlansHandlers(deps: HostDeps): HandlerGroup<typeof plansMethods> {
  const planner = () => deps.services.planner();
  const task = async (id: string) => (await deps.services.tasks.find(id)).task;
  return {
    handlers: {
      'plans.classify': async (input) =>
        planner().classify({ task: await task(input.taskId), settings: input.settings, ...parseModelPair(input), input: input.input, ...(input.price ? { price: input.price } : {}) }),
      'plans.job': async (input) =>
        planner().eval({
          task: await task(input.taskId),
          settings: input.settings,
          ...parseModelPair(input),
          data: { path: input.dataPath, textColumn: input.inputColumn, ...(input.limit !== undefined ? { limit: input.limit } : {}) },
          baseline: input.baseline,
          ...(input.price ? { price: input.price } : {}),
        }),
      'plans.sweep': async (input) =>
        planner().sweep({
          task: await task(input.taskId),
          grid: input.grid,
          ...parseModelPair(input),
          data: { path: input.dataPath, textColumn: input.inputColumn, ...(input.limit !== undefined ? { limit: input.limit } : {}) },
          ...(input.concurrency !== undefined ? { concurrency: input.concurrency } : {}),
          ...(input.price ? { price: input.price } : {}),
        }),
      'plans.compare': async ({ price, ...spec }) => planComparison(planner(), (ref) => deps.services.tasks.resolve(ref), spec, price),
    },
  };
}
