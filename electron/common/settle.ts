// Stopping several pieces of work at once (a manager's dispose): every one is tried, and what failed
// is reported together, never dropped.

/** Waits for every promise; throws the failures together (one: itself) once all have settled. */
export async function settleAll(work: readonly Promise<unknown>[], what: string): Promise<void> {
  const failed = (await Promise.allSettled(work)).flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (failed.length === 1) throw failed[0];
  if (failed.length > 1) throw new AggregateError(failed, `${what}: ${failed.length} failed`);
}
