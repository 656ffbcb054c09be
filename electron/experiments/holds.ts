// The models an experiment's walk holds between its jobs (hold/ leases), so each loads once: a
// cell's own are leased before its job starts; what no cell to come wants is given back first, so
// two generators of a comparison are never both held. A raced experiment (race.ts) runs its cells
// again every round: it keeps every model of the cells still in the race, each loaded once for the
// whole race, and gives back a model once the cells that use it are dropped or done.
import { errorMessage, isAbortError } from '../common/errors';
import { parseModelSpec } from '../common/model-spec';
import type { BackendLease, BackendProvider } from '../jobs/types';

/** Held models by path, as one walk over the cells holds them. */
export type Holds = Map<string, BackendLease>;

/**
 * Gives back what is neither `own` nor `keep`, then leases whatever of `own` is not held yet.
 * Returns why a model of `own` could not be loaded (one line), or null.
 */
export async function holdModels(pool: BackendProvider, holds: Holds, own: readonly string[], keep: readonly string[], opts: { signal: AbortSignal; sequences: number }): Promise<string | null> {
  const want = new Set([...own, ...keep]);
  for (const [path, lease] of [...holds]) {
    if (want.has(path)) continue;
    holds.delete(path);
    await lease.release();
  }
  for (const path of new Set(own)) {
    if (holds.has(path)) continue;
    try {
      holds.set(path, await pool.acquire(parseModelSpec(path), { signal: opts.signal, sequences: opts.sequences }));
    } catch (e) {
      if (isAbortError(e)) throw e;
      return errorMessage(e);
    }
  }
  return null;
}
