// A CLI command's services: the composition root (api/services.ts) opened with the command's
// options, and closed with node-llama-cpp's runtime, so the process can end as soon as the command
// is done. A command loads models only when it uses the pool, and opens the database only when it
// uses the jobs: one that only reads tasks, settings or the libraries holds nothing to close.
import { openServices, type Services } from '../api/services';
import { DisposableStore } from '../common/disposables';
import { isRemote, type ModelSpec } from '../common/model-spec';
import { disposeLlamaRuntime, getLlamaRuntime } from '../llama';
import { resolveDataDir } from '../paths';

export interface CliServiceOptions {
  /** --data-dir (default $TATRA_DATA_DIR or ~/.tatra-studio). */
  dataDir?: string;
  /** --threads */
  threads?: number;
  /** --context-size */
  contextSize?: number;
  /** classify's --sequences (a job's models follow its --concurrency). */
  sequences?: number;
  /** How long a model nothing holds stays loaded: 0 for a command (default), MODEL_KEEP_ALIVE_MS for a long-lived face (`tatra api`). */
  keepAliveMs?: number;
}

export interface CliServices extends Services {
  /** Disposes the services and node-llama-cpp's runtime. */
  close(): Promise<void>;
}

export function openCliServices(opts: CliServiceOptions = {}): CliServices {
  const services = openServices({
    dataDir: resolveDataDir(opts.dataDir),
    // The command line names task files by path as well as tasks by id.
    taskPaths: true,
    ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
    ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}),
    ...(opts.sequences !== undefined ? { sequences: opts.sequences } : {}),
    ...(opts.keepAliveMs !== undefined ? { keepAliveMs: opts.keepAliveMs } : {}),
  });
  // node-llama-cpp's runtime goes last, after every model on it has unloaded.
  const lifetime = new DisposableStore();
  lifetime.add(disposeLlamaRuntime);
  lifetime.add(services);
  return Object.assign(services, { close: () => lifetime.dispose() });
}

/** Runs `work` with the command's services and closes them however it ends. */
export async function withCliServices<T>(opts: CliServiceOptions, work: (services: CliServices) => Promise<T>): Promise<T> {
  const services = openCliServices(opts);
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}

/**
 * Starts the process's Llama before a command loads a local model among `specs`: when node-llama-cpp's
 * bindings are first loaded by the GGUF check (GgufInsights without a Llama), llama.cpp's load
 * warnings later bypass our logger and land on stdout, which would corrupt --json. A run on
 * remote models only never starts llama.cpp.
 */
export async function startLlamaFor(specs: readonly ModelSpec[]): Promise<void> {
  if (specs.some((spec) => !isRemote(spec))) await getLlamaRuntime();
}
