// Long experiments, sweeps and comparisons alike, over the experiments' registry (electron/experiments,
// Experiments): start, pause, resume, cancel, list, the result so far, export. An id names its
// experiment whatever its kind; what differs by kind is the kind's definition, never a branch
// here. Progress streams as `experiment.progress` (host.ts), the cells' jobs as any job does.
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { experimentsMethods } from '../../common/contract/experiments';
import type { HandlerGroup, HostDeps } from '../deps';

export function createExperimentsHandlers(deps: HostDeps): HandlerGroup<typeof experimentsMethods> {
  const experiments = () => deps.services.experiments();
  return {
    handlers: {
      // Bad models, data sets, columns and budgets answer the call itself, not a later event.
      'experiments.start': async (input) => experiments().start(input),
      'experiments.pause': async ({ id }) => experiments().pause(id),
      'experiments.cancel': async ({ id }) => experiments().cancel(id),
      // A new budget keeps the price the experiment had.
      'experiments.resume': async ({ id, budget }) => experiments().resume(id, budget ? { budget } : {}),
      'experiments.list': async ({ kind }) => experiments().list(kind),
      'experiments.get': async ({ id }) => experiments().get(id),
      'experiments.export': async ({ id, format }) => {
        const { kind, id: full } = experiments().summary(id);
        const dir = join(deps.dataDir, 'exports');
        await mkdir(dir, { recursive: true });
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const filename = `${kind}-${full}-${stamp}.${format}`;
        const path = await experiments().find(full).export(full, format, join(dir, filename));
        return { path, filename, bytes: (await stat(path)).size };
      },
    },
    // Running experiments pause with the services (resumable).
  };
}
