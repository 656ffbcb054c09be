// What a holder of a model gets: a lease in VS Code's IReference pattern, the shared model and the
// holder's own claim on it. The model is shared by every holder (the pool loads a file once), so a
// holder uses it and gives its claim back, never unloads it for the others: the lease's backend is
// a TatraBackend, which has no dispose (engine/backend.ts LoadedBackend is the pool's alone). The
// pool unloads a model when its last claim goes.
import type { ModelSpec, RemoteModelSpec } from '../common/model-spec';
import type { RemoteModelRef } from '../common/remote';
import type { TatraBackend } from '../engine/backend';

/** A claim on a held model. `release()` gives it back (once; later calls do nothing). */
export interface BackendLease {
  /** The shared model, as it is. */
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
