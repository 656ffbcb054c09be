// What a holder of a model gets: a lease in VS Code's IReference pattern. The model is shared by
// every holder (the pool loads a file once), so a holder may use it and give its own claim back,
// never unload it for the others: the lease's backend is a view of the shared one whose
// `dispose()` is this holder's `release()`. The pool unloads a model when its last claim goes.
import type { ModelSpec, RemoteModelSpec } from '../common/model-spec';
import type { RemoteModelRef } from '../common/remote';
import type { TatraBackend } from '../engine/backend';

/** A claim on a held model. `release()` gives it back (once; later calls do nothing). */
export interface BackendLease {
  /** The shared model, for this holder: its `dispose()` releases this claim and nothing more. */
  readonly backend: TatraBackend;
  release(): Promise<void>;
}

/** Where models are held: the pool (pool.ts), or a scripted provider in tests. */
export interface BackendProvider {
  /**
   * `signal` aborts this caller's wait for a model that is still loading (pause during a load).
   * `remote`: what a job recorded about a remote model, to reach exactly those endpoints again.
   * `sequences`: parallel sequences when this acquire loads the model (a job asks for one per row
   * in flight, its concurrency); a model already loaded is shared as it is.
   */
  acquire(model: ModelSpec, opts?: { signal?: AbortSignal; remote?: RemoteModelRef; sequences?: number }): Promise<BackendLease>;
  /** Probes a remote model for the job record; absent where the host cannot reach remote models. */
  describeRemote?(spec: RemoteModelSpec, opts?: { signal?: AbortSignal }): Promise<RemoteModelRef>;
}

/** A lease on `shared` whose release (and whose backend's dispose) calls `release` once. */
export function leaseOf(shared: TatraBackend, release: () => Promise<void>): BackendLease {
  let released: Promise<void> | undefined;
  const once = () => (released ??= release());
  // Everything but dispose is the shared backend's own, called on it (its private state included).
  const backend = new Proxy(shared, {
    get(target, key) {
      if (key === 'dispose') return once;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { backend, release: once };
}
