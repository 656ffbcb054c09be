// A CLI command's services: the composition root (api/services.ts) opened with the command's
// options, and closed with node-llama-cpp's runtime, so the process can end as soon as the command
// is done. A command loads models only when it uses the pool, and opens the database only when it
// uses the jobs: one that only reads tasks, settings or the libraries holds nothing to close.
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { openServices, type Services } from '../api/services';
import { DisposableStore } from '../common/disposables';
import { isRemote, type ModelSpec } from '../common/model-spec';
import { replaceDefaultLoad } from '../hold/pool';
import { disposeLlamaRuntime, getLlamaRuntime } from '../llama';
import { loadLlamaBackend, type LoadLlamaBackendOptions } from '../llama/load-backend';
import type { LlamaBackend } from '../llama/backend';
import { defaultThreads } from '../llama/threads';
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
  if (!kept) lifetime.add(disposeLlamaRuntime);
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

/** Models kept by keepModelsBetweenCommands, by their load settings; undefined when off (always, outside tests). */
let kept: Map<string, Promise<{ backend: LlamaBackend; unload: () => Promise<void> }>> | undefined;

/**
 * Tests only (test/helpers/tatra-cli.ts, for commands run in the test's process): from now on a
 * command leaves node-llama-cpp's runtime and the models it loaded in place, and a later command
 * that loads the same file with the same settings gets that model instead of loading it again.
 * Its pool still leases and releases as always; only the unload waits for the returned release,
 * as a long-lived face's keep-alive would (a model is deterministic whatever ran on it before,
 * llama/backend.ts). A file rewritten in place is not noticed: a test that swaps a model under one
 * path runs those commands in their own processes. Never called by the product: a command there
 * ends with everything closed.
 */
export function keepModelsBetweenCommands(): () => Promise<void> {
  const models = new Map<string, Promise<{ backend: LlamaBackend; unload: () => Promise<void> }>>();
  kept = models;
  replaceDefaultLoad(async (opts) => {
    const key = await loadKey(opts);
    for (let held = models.get(key); held; held = models.get(key)) {
      const found = await held.catch(() => undefined);
      // A command may still close the runtime itself (`tatra models info`): its models went with it.
      if (found && !found.backend.model.disposed) return found.backend;
      if (models.get(key) === held) models.delete(key);
    }
    const loading = loadLlamaBackend(opts).then((backend) => {
      const unload = backend.dispose.bind(backend);
      backend.dispose = () => Promise.resolve();
      return { backend, unload };
    });
    models.set(key, loading);
    loading.catch(() => models.delete(key));
    return (await loading).backend;
  });
  return async () => {
    if (kept === models) {
      kept = undefined;
      replaceDefaultLoad(null);
    }
    const loaded = await Promise.allSettled(models.values());
    models.clear();
    for (const r of loaded) if (r.status === 'fulfilled') await r.value.unload();
    await disposeLlamaRuntime();
  };
}

/** What decides a load's result: the file and every setting, defaults resolved (the signal only stops it). */
async function loadKey({ signal: _signal, ...opts }: LoadLlamaBackendOptions): Promise<string> {
  const modelPath = await realpath(opts.modelPath).catch(() => resolve(opts.modelPath));
  return JSON.stringify({ ...opts, modelPath, threads: opts.threads ?? defaultThreads() });
}
