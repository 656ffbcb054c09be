// The one lifecycle of work this process runs (jobs and experiments alike): a run is known while
// its body runs, a stop aborts it and waits for its end, dispose pauses every run, and work
// another process runs is refused in the same words whatever its kind.
import { describe, expect, it } from 'vitest';
import { RunningWork, refuseStopElsewhere, type Run } from '../../../electron/jobs/running-work';
import { UserError } from '../../../electron/common/errors';

/** A body that runs until its run is aborted, then records how it was stopped. */
function untilAborted(stopped: string[]) {
  return (run: Run) =>
    new Promise<void>((resolve) => {
      run.ac.signal.addEventListener('abort', () => {
        stopped.push(run.stop ?? 'none');
        resolve();
      });
    });
}

const newRun = (): Run => ({ ac: new AbortController(), stop: null, done: Promise.resolve() });

describe('RunningWork', () => {
  it('knows a run while its body runs; a stop aborts it, waits for its end and forgets it', async () => {
    const work = new RunningWork<Run>('pausing things');
    const stopped: string[] = [];
    work.launch('a', newRun(), untilAborted(stopped));
    expect(work.has('a')).toBe(true);
    const order: string[] = [];
    expect(await work.stop('a', 'cancelled', async () => void order.push('first'))).toBe(true);
    expect(stopped).toEqual(['cancelled']);
    expect(order).toEqual(['first']);
    expect(work.has('a')).toBe(false);
    // Nothing runs here any more: the caller decides what stopping it means.
    expect(await work.stop('a', 'paused')).toBe(false);
  });

  it('forgets a run whose body ended by itself', async () => {
    const work = new RunningWork<Run>('pausing things');
    const run = work.launch('b', newRun(), async () => undefined);
    await run.done;
    expect(work.has('b')).toBe(false);
  });

  it('dispose pauses every run and throws their failures together', async () => {
    const work = new RunningWork<Run>('pausing things');
    const stopped: string[] = [];
    for (const id of ['a', 'b']) work.launch(id, newRun(), untilAborted(stopped));
    await expect(work.dispose(async (id) => (id === 'b' ? Promise.reject(new Error('b would not stop')) : work.stop(id, 'paused')))).rejects.toThrow('b would not stop');
    // Every run was tried: a's pause went through although b's failed.
    expect(stopped).toEqual(['paused']);
    await work.stop('b', 'paused');
  });
});

describe('refuseStopElsewhere', () => {
  it('refuses done work and work another process runs, in the same words for every kind', () => {
    for (const [what, code] of [
      ['job j1', 'job_state'],
      ['sweep s1', 'sweep_state'],
      ['comparison c1', 'compare_state'],
    ] as const) {
      expect(() => refuseStopElsewhere(what, 'done', code)).toThrow(new UserError(`${what} is already done`, code));
      expect(() => refuseStopElsewhere(what, 'running elsewhere', code)).toThrow(`${what} is running in another process`);
      expect(() => refuseStopElsewhere(what, 'stopped', code)).not.toThrow();
    }
  });
});
