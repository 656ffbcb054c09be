// An opened comparison's result is read through one reader per id: an event that lands while the
// first read is on its way (a comparison pausing on its budget as its page opens) is followed by
// a fresh read, not lost behind the stale answer (which left the page without its budget banner).
import { afterEach, expect, it, vi } from 'vitest';
import { type ApiClient, setApi } from '../../../renderer/src/api/client';
import { createAppStore } from '../../../renderer/src/store';

afterEach(() => setApi(null));

const progress = { jobsDone: 0, jobsTotal: 1, rowsDone: 1, rowsTotal: 3, elapsedSeconds: 3, etaSeconds: null, etaRange: null };

it('an event during the first read of a result is followed by another read, whose answer stays', async () => {
  const answers: { status: string; stoppedBy: string | null }[] = [
    { status: 'running', stoppedBy: null },
    { status: 'paused', stoppedBy: 'budget' },
  ];
  const gets: (() => void)[] = [];
  const fake = {
    kind: 'browser',
    call: (method: string) => {
      if (method === 'experiments.list') return Promise.resolve([]);
      if (method !== 'experiments.get') return Promise.reject(new Error(`unexpected ${method}`));
      const answer = answers[gets.length]!;
      return new Promise((resolve) => gets.push(() => resolve({ id: 'c1', ...answer })));
    },
  } as unknown as ApiClient;
  setApi(fake);
  const store = createAppStore();
  const opened = store.getState().openExperiment('compare', 'c1');
  expect(gets).toHaveLength(1);
  // The comparison pauses while its first read is on its way: the read answers with the state before.
  store.getState().handleExperimentProgress({ id: 'c1', kind: 'compare', status: 'paused', progress } as Parameters<ReturnType<typeof store.getState>['handleExperimentProgress']>[0]);
  expect(gets).toHaveLength(1);
  gets[0]!();
  await vi.waitFor(() => expect(gets).toHaveLength(2));
  gets[1]!();
  await opened;
  expect(store.getState().experimentResults.c1).toMatchObject({ status: 'paused', stoppedBy: 'budget' });
  // A second open while nothing is on its way is one more read.
  answers.push({ status: 'paused', stoppedBy: 'budget' });
  const again = store.getState().openExperiment('compare', 'c1');
  expect(gets).toHaveLength(3);
  gets[2]!();
  await again;
});
