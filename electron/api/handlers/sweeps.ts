// Sensitivity sweeps over the jobs layer's SweepManager: start, pause, resume, list, the result
// so far, export. Progress streams as `sweep.progress`; the sweep's jobs stream as any job does.
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { sweepsMethods } from '../../common/contract/sweeps';
import type { HandlerGroup, HostDeps } from '../deps';
import { pricedBudget } from '../../jobs';

export function createSweepsHandlers(deps: HostDeps): HandlerGroup<typeof sweepsMethods> {
  // The host forwards its progress as `sweep.progress` from the moment it is opened (host.ts).
  const manager = async () => deps.services.sweeps();

  return {
    handlers: {
      'sweeps.start': async (input) => {
        const m = await manager();
        const budget = input.budget ? await pricedBudget(input.budget, input, { price: input.price, lookup: deps.services.remotes }) : undefined;
        const created = await m.create(input);
        return m.start(created.id, budget ? { budget } : {});
      },
      'sweeps.pause': async ({ sweepId }) => (await manager()).pause(sweepId),
      'sweeps.resume': async ({ sweepId, budget }) => {
        const m = await manager();
        // A new budget counts with the prices the sweep's had.
        return m.resume(sweepId, budget ? { budget: { ...budget, ...(m.budgetOf(sweepId)?.prices ? { prices: m.budgetOf(sweepId)!.prices! } : {}) } } : {});
      },
      'sweeps.list': async () => (await manager()).list(),
      'sweeps.get': async ({ sweepId }) => (await manager()).result(sweepId),
      'sweeps.export': async ({ sweepId, format }) => {
        const m = await manager();
        const id = m.summary(sweepId).id;
        const dir = join(deps.dataDir, 'exports');
        await mkdir(dir, { recursive: true });
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const filename = `sweep-${id}-${stamp}.${format}`;
        const path = await m.export(id, format, join(dir, filename));
        return { path, filename, bytes: (await stat(path)).size };
      },
    },
  };
}
