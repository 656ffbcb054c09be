// The one way to classify with held models, for every face: lease the generator and the
// evaluator (each a parsed ModelSpec; the same file twice is one loaded copy), run the
// work on them, give both claims back however it ends. The app's classify, `tatra classify`,
// `tatra api`'s requests and a plan's calibration all go through here; a job holds its models
// for all its rows (jobs/manager.ts), an experiment for its cells (experiments/experiment.ts).
import type { ModelSpec } from '../common/model-spec';
import type { TatraResult } from '../common/tatra';
import { classify, type ClassifyOptions, type TatraBackend } from '../engine';
import type { BackendLease, BackendProvider } from './lease';

export interface HeldModels {
  generator: ModelSpec;
  evaluator: ModelSpec;
  /** Stops waiting for a model still loading (the load goes on for other holders), and the work. */
  signal?: AbortSignal;
}

/** Runs `work` on the two models held for it; both claims are given back however it ends. */
export async function withHeldModels<T>(models: BackendProvider, held: HeldModels, work: (generator: TatraBackend, evaluator: TatraBackend) => Promise<T>): Promise<T> {
  const { signal } = held;
  const leases: BackendLease[] = [];
  // Both claims are given back, the evaluator's first; the first that could not be is returned.
  const releaseAll = async () => (await Promise.allSettled(leases.reverse().map((lease) => lease.release()))).find((r) => r.status === 'rejected');
  let value: T;
  try {
    leases.push(await models.acquire(held.generator, signal ? { signal } : {}));
    leases.push(await models.acquire(held.evaluator, signal ? { signal } : {}));
    signal?.throwIfAborted();
    value = await work(leases[0]!.backend, leases[1]!.backend);
  } catch (e) {
    // The caller is told of the run's own failure, which came first; a release failing after it
    // is not reported on top of it.
    await releaseAll();
    throw e;
  }
  // A claim that could not be given back is a fault of ours: it fails a run that succeeded.
  const failed = await releaseAll();
  if (failed) throw failed.reason;
  return value;
}

export interface ClassifyWithHeld extends Omit<ClassifyOptions, 'generator' | 'evaluator'> {
  generator: ModelSpec;
  evaluator: ModelSpec;
}

/** One input through `classify()` on models held for it. */
export function classifyWithHeld(models: BackendProvider, opts: ClassifyWithHeld): Promise<TatraResult> {
  const { generator, evaluator, ...rest } = opts;
  return withHeldModels(models, { generator, evaluator, ...(opts.signal ? { signal: opts.signal } : {}) }, (g, e) => classify({ ...rest, generator: g, evaluator: e }));
}
