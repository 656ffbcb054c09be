// Plans beside every Start button: what a classify, an evaluation, a sweep or a comparison would
// cost, made by the one planner of the composition root (jobs/planner.ts) from the same input the
// Start button sends (an experiment's through its kind's definition). Nothing runs; only the
// models' tokenizers are read.
import { parseModelPair } from '../../common/model-spec';
import type { plansMethods } from '../../common/contract/plans';
import type { Price } from '../../common/plan';
import type { HandlerGroup, HostDeps } from '../deps';

export function createPlansHandlers(deps: HostDeps): HandlerGroup<typeof plansMethods> {
  const planner = () => deps.services.planner();
  /** What a plan of any one run takes alike: its task, its models (parsed here, where they come in) and a price. */
  const run = async (input: { taskId: string; generator: string; evaluator: string; price?: Price | undefined }) => ({
    task: (await deps.services.tasks.find(input.taskId)).task,
    ...parseModelPair(input),
    ...(input.price ? { price: input.price } : {}),
  });
  const data = (input: { dataPath: string; inputColumn: string; limit?: number | undefined }) => ({ path: input.dataPath, textColumn: input.inputColumn, ...(input.limit !== undefined ? { limit: input.limit } : {}) });
  return {
    handlers: {
      // A plan is made only for its answer: one the page no longer waits for (its settings changed
      // again, the page closed) stops where it is (CallContext).
      'plans.classify': async (input, { signal }) => planner().classify({ ...(await run(input)), settings: input.settings, input: input.input, signal }),
      'plans.job': async (input, { signal }) => planner().eval({ ...(await run(input)), settings: input.settings, data: data(input), baseline: input.baseline, signal }),
      'plans.sweep': async ({ price, ...input }, { signal }) => deps.services.experiments().plan('sweep', input, planner(), { ...(price ? { price } : {}), signal }),
      'plans.compare': async ({ price, ...input }, { signal }) => deps.services.experiments().plan('compare', input, planner(), { ...(price ? { price } : {}), signal }),
    },
  };
}
