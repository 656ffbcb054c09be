// Holds every model the process uses, local and remote: each model file is loaded once and shared
// (generator and evaluator on the same file, and every job using it, get one copy of the weights,
// one sequence pool), a remote model is connected once per endpoint set. Each holder gets a lease
// (lease.ts) and gives back only its own claim; a model nobody holds is disposed, at once or after
// a keep-alive, so only the models in use stay loaded. Above llama/ and remote/, which know
// nothing of each other.
import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { errorMessage, raceAbort } from '../common/errors';
import { ifMissing } from '../common/env-errors';
import { terminalSafe } from '../common/control-chars';
import type { ModelSpec, RemoteModelSpec } from '../common/model-spec';
import type { RemoteModelRef } from '../common/remote';
import type { LoadedBackend } from '../engine/backend';
import { connectRemote, type RemoteBackend, type RemoteLookup, type RemoteTuning } from '../remote';
import { loadLlamaBackend, type LoadLlamaBackendOptions } from '../llama/load-backend';
import type { BackendLease } from './lease';

/** Load settings; they apply when the model is first loaded. A later acquire of the same file shares what is loaded. */
export type AcquireOptions = Omit<LoadLlamaBackendOptions, 'modelPath'> & {
  /** A remote model as a job recorded it: connect to exactly these endpoints. */
  remote?: RemoteModelRef;
};

/** How remote models (`remote:NAME`, `openai+http://…#MODEL`) are reached. */
export interface RemoteModelsOptions {
  /** The library's remote entries and stored keys (needed for `remote:NAME`). */
  lookup?: RemoteLookup;
  /** Timeouts and in-flight limits. */
  tuning?: RemoteTuning;
  /** How to connect; default connectRemote. */
  connect?: typeof connectRemote;
}

export interface ModelPoolOptions {
  /** Milliseconds an unused model stays loaded, in case it is wanted again. Default 0: disposed at once. */
  keepAliveMs?: number;
  /** Defaults for every load (contextSize, sequences, threads, gpuLayers). */
  defaults?: Omit<AcquireOptions, 'signal'>;
  /** How to load a backend; default loadLlamaBackend. Tests may pass a scripted one. */
  load?: (opts: LoadLlamaBackendOptions) => Promise<LoadedBackend>;
  /** Remote models; without a lookup only inline `openai+http://…#MODEL` specs work. */
  remote?: RemoteModelsOptions;
  /** Where an unload nobody waits for (a keep-alive's end) says it failed; default stderr. */
  log?: (line: string) => void;
}

/**
 * The load of every pool made without a `load` of its own: loadLlamaBackend, or (tests only,
 * cli/session.ts keepModelsBetweenCommands) one that keeps what it loads for the next command.
 */
let defaultLoad: (opts: LoadLlamaBackendOptions) => Promise<LoadedBackend> = loadLlamaBackend;

/** Tests only (cli/session.ts keepModelsBetweenCommands): replaces the default load; null restores loadLlamaBackend. */
export function replaceDefaultLoad(load: ((opts: LoadLlamaBackendOptions) => Promise<LoadedBackend>) | null): void {
  defaultLoad = load ?? loadLlamaBackend;
}

/** What an entry holds: a loaded model, or a connected remote one (which also describes itself for a job's record). */
type Held = { kind: 'local'; backend: LoadedBackend } | { kind: 'remote'; backend: RemoteBackend };

interface Entry {
  key: string;
  path: string;
  refs: number;
  held: Promise<Held>;
  /** Aborts the load itself; used once every caller waiting for it has given up. */
  loading: AbortController | null;
  timer?: NodeJS.Timeout;
}

export class ModelPool {
  private readonly entries = new Map<string, Entry>();
  private readonly keepAliveMs: number;
  private readonly load: (opts: LoadLlamaBackendOptions) => Promise<LoadedBackend>;
  private readonly log: (line: string) => void;
  private disposed = false;

  constructor(private readonly opts: ModelPoolOptions = {}) {
    this.keepAliveMs = opts.keepAliveMs ?? 0;
    this.load = opts.load ?? ((o) => defaultLoad(o));
    this.log = opts.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /**
   * A lease on `model`, loading it if it is not loaded yet. Paths naming the same file (relative,
   * absolute, through a symlink) share one backend. Bad files reject with the UserError of
   * inspectGguf; `signal` aborts this caller's wait (the load goes on for others).
   */
  async acquire(model: ModelSpec, opts: AcquireOptions = {}): Promise<BackendLease> {
    const { held, release } = await this.hold(model, opts);
    return { backend: held.backend, release };
  }

  /** A remote model's record for a job (probes it, sharing the connection with later acquires). */
  async describeRemote(spec: RemoteModelSpec, opts: { signal?: AbortSignal } = {}): Promise<RemoteModelRef> {
    const { held, release } = await this.hold(spec, opts);
    try {
      if (held.kind !== 'remote') throw new Error(`${spec.text} is held as a local model`);
      return held.backend.describe();
    } finally {
      await release();
    }
  }

  /** A claim on `model`'s entry, loading it if need be; `release` gives the claim back once. */
  private async hold(model: ModelSpec, opts: AcquireOptions): Promise<{ held: Held; release: () => Promise<void> }> {
    if (this.disposed) throw new Error('the model pool has been disposed');
    opts.signal?.throwIfAborted();
    const key = model.kind === 'gguf' ? await realpath(model.path).catch(ifMissing(resolve(model.path))) : remoteKey(model, opts.remote);
    // The pool may have been disposed (the app quitting) while we waited: loading now would leak.
    if (this.disposed) throw new Error('the model pool has been disposed');
    let entry = this.entries.get(key);
    if (!entry) {
      const { signal: _signal, remote: ref, ...loadOpts } = opts;
      // The load is shared, so no one caller's signal stops it; it stops when all of them have
      // gone (Ctrl-C or a pause while the models load: unref).
      const loading = new AbortController();
      const created: Entry = {
        key,
        path: model.text,
        refs: 0,
        loading,
        held:
          model.kind === 'gguf'
            ? this.load({ ...this.opts.defaults, ...loadOpts, modelPath: model.path, signal: loading.signal }).then((backend) => ({ kind: 'local', backend }))
            : this.connectRemote(model, ref).then((backend) => ({ kind: 'remote', backend })),
      };
      entry = created;
      this.entries.set(key, created);
      // A failed load leaves no entry behind, so the next acquire tries again.
      created.held.then(
        () => (created.loading = null),
        () => {
          if (this.entries.get(key) === created) this.entries.delete(key);
        },
      );
    }
    if (entry.timer) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
    }
    entry.refs++;
    const claimed = entry;
    let held: Held;
    try {
      held = await raceAbort(claimed.held, opts.signal);
    } catch (e) {
      await this.unref(claimed);
      throw e;
    }
    let released: Promise<void> | undefined;
    return { held, release: () => (released ??= this.unref(claimed)) };
  }

  private connectRemote(spec: RemoteModelSpec, ref: RemoteModelRef | undefined): Promise<RemoteBackend> {
    const r = this.opts.remote ?? {};
    return (r.connect ?? connectRemote)(spec, { ...(ref ? { ref } : {}), ...(r.lookup ? { lookup: r.lookup } : {}), ...(r.tuning ? { tuning: r.tuning } : {}) });
  }

  /** Models loaded or loading, with how many leases hold each. */
  loaded(): Array<{ path: string; refs: number }> {
    return [...this.entries.values()].map((e) => ({ path: e.path, refs: e.refs }));
  }

  /** Disposes every model, held or not; leases released afterwards do nothing. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    // Loads under way are stopped, not awaited to their end (the app quitting while a model loads).
    for (const e of entries) e.loading?.abort();
    await Promise.allSettled(entries.map((e) => this.disposeEntry(e)));
  }

  private async unref(entry: Entry): Promise<void> {
    entry.refs = Math.max(0, entry.refs - 1);
    if (entry.refs > 0 || this.entries.get(entry.key) !== entry) return;
    if (entry.loading) {
      // Still loading and nobody waits for it: stop the load (llama.cpp stops between tensors)
      // rather than finish it only to dispose of it.
      this.entries.delete(entry.key);
      entry.loading.abort();
      await this.disposeEntry(entry);
      return;
    }
    if (this.keepAliveMs > 0) {
      entry.timer = setTimeout(() => {
        if (entry.refs === 0 && this.entries.get(entry.key) === entry) {
          this.entries.delete(entry.key);
          // Nobody awaits this unload: a failure is said here, once, or it would be an unhandled
          // rejection, which ends the process (tatra serve, tatra api).
          this.disposeEntry(entry).catch((e: unknown) => this.log(`tatra: unloading ${terminalSafe(entry.path)} failed: ${terminalSafe(errorMessage(e))}`));
        }
      }, this.keepAliveMs);
      entry.timer.unref();
      return;
    }
    this.entries.delete(entry.key);
    await this.disposeEntry(entry);
  }

  private async disposeEntry(entry: Entry): Promise<void> {
    if (entry.timer) clearTimeout(entry.timer);
    await entry.held.then(
      (held) => held.backend.dispose(),
      // A load that failed left nothing to unload; whoever waited for it was told why.
      () => undefined,
    );
  }
}

/** Remote models are shared by what identifies their endpoints: the spec, or a job's recorded endpoints. */
function remoteKey(spec: RemoteModelSpec, ref: RemoteModelRef | undefined): string {
  return ref ? `remote-ref:${JSON.stringify([ref.urls, ref.model, ref.name ?? null, ref.keyEnv ?? null, ref.keyStored ?? false, ref.kind, ref.constrained, ref.maxInFlight ?? null])}` : `remote-spec:${spec.text}`;
}
