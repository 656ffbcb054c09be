// The host's shared resources, created on first use: one model pool (every classify run and job
// acquires from it, so one file is loaded once and a model nothing holds is unloaded after a
// short keep-alive) and one job manager on the SQLite store in the data folder.
import type { BackendProvider } from '../jobs';
import { JobManager, openJobStore, type JobStore } from '../jobs';
import { ModelPool } from '../llama';
import type { RemoteModelsOptions } from '../llama/pool';
import { findTask } from './handlers/tasks';

/** How long an unused model stays loaded, so a second classify does not reload it. */
export const MODEL_KEEP_ALIVE_MS = 30_000;

export interface HostPool {
  get(): Promise<BackendProvider>;
  dispose(): Promise<void>;
}

export function createHostPool(opts: { threads: number; provider?: BackendProvider; keepAliveMs?: number; remote?: RemoteModelsOptions }): HostPool {
  let pool: ModelPool | null = null;
  return {
    async get() {
      if (opts.provider) return opts.provider;
      pool ??= new ModelPool({ keepAliveMs: opts.keepAliveMs ?? MODEL_KEEP_ALIVE_MS, defaults: { threads: opts.threads }, ...(opts.remote ? { remote: opts.remote } : {}) });
      return pool;
    },
    async dispose() {
      await pool?.dispose();
      pool = null;
    },
  };
}

export interface HostJobs {
  manager: JobManager;
  store: JobStore;
}

export async function createHostJobs(opts: { dataDir: string; provider: BackendProvider }): Promise<HostJobs> {
  const store = openJobStore(opts.dataDir);
  const manager = new JobManager({
    store,
    backends: opts.provider,
    // Task ids only (built-in or the user's own in this data folder), never a path.
    resolveTask: async (id) => (await findTask(opts.dataDir, id)).task,
  });
  return { manager, store };
}
