// Long experiments, sweeps and comparisons alike, over the experiments' managers (electron/experiments):
// start, pause, resume, cancel, list, the result so far, export. An id names its experiment
// whatever its kind; progress streams as `experiment.progress` (host.ts), the cells' jobs as any job does.
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExperimentKind, ExperimentResult, ExperimentSummary, experimentsMethods } from '../../common/contract/experiments';
import { parseModelPair } from '../../common/model-spec';
import { UserError } from '../../common/errors';
import type { HandlerGroup, HostDeps } from '../deps';
import { pricedBudget, sharedPriceBudget, type JobBudget } from '../../jobs';
import type { Budget } from '../../common/plan';

const KINDS: readonly ExperimentKind[] = ['sweep', 'compare'];

export function createExperimentsHandlers(deps: HostDeps): HandlerGroup<typeof experimentsMethods> {
  const { services } = deps;
  /** Each kind's manager, opened on first use. */
  const managers = { sweep: () => services.sweeps(), compare: () => services.comparisons() };
  const manager = (kind: ExperimentKind) => managers[kind]();

  /** The kind of the experiment an id names (each kind's ids are looked up: old comparisons' ids carry no kind letter). */
  const kindOf = (id: string): ExperimentKind => {
    const kinds = KINDS.filter((k) => manager(k).has(id));
    if (kinds[0] !== undefined && kinds.length === 1) return kinds[0];
    if (kinds.length === 0) throw new UserError(`no experiment "${id}"`, 'experiment_unknown');
    throw new UserError(`"${id}" starts the ids of a sweep and a comparison: give more of it`, 'bad_option');
  };
  const summary = (kind: ExperimentKind, id: string): ExperimentSummary =>
    kind === 'sweep' ? { kind, ...managers.sweep().summary(id) } : { kind, ...managers.compare().summary(id) };
  /** A resume's new budget, counted with the prices the experiment's had. */
  const resumeBudget = (kind: ExperimentKind, id: string, budget: Budget): JobBudget => {
    const before = manager(kind).budgetOf(id);
    // A comparison's one price over all its models; a sweep's generator and evaluator prices.
    return kind === 'compare' ? sharedPriceBudget(budget, undefined, before) : { ...budget, ...(before?.prices ? { prices: before.prices } : {}) };
  };

  return {
    handlers: {
      'experiments.start': async (input) => {
        // Bad models, data sets and columns answer the call itself, not a later event.
        if (input.kind === 'sweep') {
          const { spec } = input;
          const budget = spec.budget ? await pricedBudget(spec.budget, parseModelPair(spec), { price: spec.price, lookup: services.remotes }) : undefined;
          const sweeps = managers.sweep();
          const { id } = await sweeps.create(spec);
          return { kind: 'sweep', ...sweeps.start(id, budget ? { budget } : {}) };
        }
        const { budget, price, ...spec } = input.spec;
        const priced = budget ? sharedPriceBudget(budget, price) : undefined;
        const comparisons = managers.compare();
        const { id } = await comparisons.create(spec);
        comparisons.start(id, priced ? { budget: priced } : {});
        return summary('compare', id);
      },
      'experiments.pause': async ({ id }) => {
        const kind = kindOf(id);
        await manager(kind).pause(id);
        return summary(kind, id);
      },
      'experiments.cancel': async ({ id }) => {
        const kind = kindOf(id);
        await manager(kind).cancel(id);
        return summary(kind, id);
      },
      'experiments.resume': async ({ id, budget }) => {
        const kind = kindOf(id);
        manager(kind).resume(id, budget ? { budget: resumeBudget(kind, id, budget) } : {});
        return summary(kind, id);
      },
      'experiments.list': async ({ kind }) => {
        const all: ExperimentSummary[] = [
          ...(kind !== 'compare' ? managers.sweep().list().map((s) => ({ kind: 'sweep' as const, ...s })) : []),
          ...(kind !== 'sweep' ? managers.compare().list().map((c) => ({ kind: 'compare' as const, ...c })) : []),
        ];
        return all.sort((a, b) => b.createdAt - a.createdAt);
      },
      'experiments.get': async ({ id }): Promise<ExperimentResult> => {
        const kind = kindOf(id);
        return kind === 'sweep' ? { kind, ...managers.sweep().get(id) } : { kind, ...managers.compare().get(id) };
      },
      'experiments.export': async ({ id, format }) => {
        const kind = kindOf(id);
        const full = manager(kind).summary(id).id;
        const dir = join(deps.dataDir, 'exports');
        await mkdir(dir, { recursive: true });
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const filename = `${kind}-${full}-${stamp}.${format}`;
        const path = await manager(kind).export(full, format, join(dir, filename));
        return { path, filename, bytes: (await stat(path)).size };
      },
    },
    // Running experiments pause with the services (resumable).
  };
}
