// The endpoint scheduler (electron/remote/endpoints.ts): requests that find every endpoint full wait
// first come first served, each freed slot wakes exactly one of them, a waiting request costs no
// timer and no abort listener of its own (one per signal), and the limits adapt to busy answers.
// Behaviour only: nothing here measures time.
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { Endpoint, EndpointSet } from '../../../electron/remote/endpoints';

function set(limits: number[], opts: Partial<ConstructorParameters<typeof EndpointSet>[1]> = {}): EndpointSet {
  const endpoints = limits.map((limit, i) => new Endpoint(`http://e${i}/v1`, limit));
  return new EndpointSet(endpoints, { reprobeMs: 10, maxReprobeMs: 40, downTimeoutMs: 60_000, check: async () => false, ...opts });
}

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

function track<T>(p: Promise<T>): { done: boolean; value?: T; error?: unknown } {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (value) => Object.assign(state, { done: true, value }),
    (error: unknown) => Object.assign(state, { done: true, error }),
  );
  return state;
}

/**
 * Runs `check` with setTimeout faked, so vi.getTimerCount() counts the timers the code under test
 * sets and nothing else: the process's own (another test's, vitest's) may fire or start meanwhile,
 * which made a count of every active Timeout go down under load. setImmediate stays real (settle).
 */
async function withCountedTimers(check: () => Promise<void>): Promise<void> {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  try {
    await check();
  } finally {
    vi.useRealTimers();
  }
}

describe('waiting for a slot', () => {
  it('serves waiting requests first come first served, one per slot freed', async () => {
    const s = set([1]);
    const first = await s.acquire();
    const order: number[] = [];
    const waiting = Array.from({ length: 5 }, (_, i) => s.acquire().then((e) => (order.push(i), e)));
    await settle();
    expect(order).toEqual([]);
    expect(s.queued).toBe(5);
    s.release(first, true);
    await settle();
    expect(order).toEqual([0]);
    for (let i = 1; i < 5; i++) {
      s.release(await waiting[i - 1]!, true);
      await settle();
      expect(order).toEqual(Array.from({ length: i + 1 }, (_, j) => j));
    }
    expect(s.queued).toBe(0);
  });

  it('a freed slot wakes exactly one of many waiting requests', async () => {
    const s = set([2, 1]);
    const held = await Promise.all([s.acquire(), s.acquire(), s.acquire()]);
    const waiters = Array.from({ length: 100 }, () => track(s.acquire()));
    await settle();
    expect(waiters.filter((w) => w.done)).toHaveLength(0);
    s.release(held[0]!, true);
    await settle();
    expect(waiters.filter((w) => w.done)).toHaveLength(1);
    expect(waiters[0]!.done).toBe(true);
    s.release(held[2]!, true);
    s.release(held[1]!, true);
    await settle();
    expect(waiters.map((w) => w.done).indexOf(false)).toBe(3);
    expect(s.endpoints.map((e) => e.inFlight)).toEqual([2, 1]);
  });

  it('a request sent again after a failure goes ahead of new ones', async () => {
    const s = set([1]);
    const held = await s.acquire();
    const order: string[] = [];
    void s.acquire().then(() => order.push('new'));
    void s.acquire(undefined, true).then(() => order.push('retry'));
    s.release(held, false);
    await settle();
    expect(order).toEqual(['retry']);
  });

  it('10,000 waiting requests on one signal hold one abort listener and no timer; aborting fails them all and removes it', () =>
    withCountedTimers(async () => {
      const s = set([1]);
      await s.acquire();
      const ac = new AbortController();
      const waiters = Array.from({ length: 10_000 }, () => track(s.acquire(ac.signal)));
      const other = track(s.acquire());
      await settle();
      expect(s.queued).toBe(10_001);
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
      expect(vi.getTimerCount()).toBe(0);
      const reason = new Error('stop');
      ac.abort(reason);
      await settle();
      expect(waiters.every((w) => w.done && w.error === reason)).toBe(true);
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
      // The request on no signal keeps its place.
      expect(other.done).toBe(false);
      expect(s.queued).toBe(1);
    }));

  it('listeners come and go with the requests of each signal', async () => {
    const s = set([1]);
    const held = await s.acquire();
    const a = new AbortController();
    const b = new AbortController();
    const wa = s.acquire(a.signal);
    void s.acquire(b.signal);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(1);
    s.release(held, true);
    await wa;
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(1);
  });

  it('an already aborted signal rejects at once; dispose fails whoever waits', async () => {
    const s = set([1]);
    await s.acquire();
    const reason = new Error('gone');
    await expect(s.acquire(AbortSignal.abort(reason))).rejects.toBe(reason);
    const w = track(s.acquire());
    s.dispose();
    await settle();
    expect(w.error).toBeInstanceOf(Error);
    expect((w.error as Error).name).toBe('AbortError');
  });
});

describe('failover', () => {
  it('the least-loaded endpoint is picked; one set aside takes nothing until a probe brings it back', async () => {
    let back = false;
    const s = set([2, 2], { check: async () => back });
    const [a, b] = await Promise.all([s.acquire(), s.acquire()]);
    expect(new Set([a!.url, b!.url]).size).toBe(2);
    s.setAside(s.endpoints[1]!, 'connection refused');
    s.release(b!, false);
    const c = await s.acquire();
    expect(c.url).toBe('http://e0/v1');
    const waiting = track(s.acquire());
    await settle();
    expect(waiting.done).toBe(false);
    back = true;
    await expect.poll(() => waiting.done, { timeout: 10_000 }).toBe(true);
    expect(waiting.value?.url).toBe('http://e1/v1');
    expect(s.states()[1]).toMatchObject({ up: true, failures: 1, lastError: 'connection refused' });
  });

  it('with every endpoint down, waiting requests fail with one line at the deadline, and later ones at once', async () => {
    const s = set([1], { downTimeoutMs: 50 });
    s.setAside(s.endpoints[0]!, 'connection refused');
    const waiting = s.acquire();
    await expect(waiting).rejects.toThrow(UserError);
    await expect(s.acquire()).rejects.toThrow('no endpoint of this remote model answers (http://e0/v1: connection refused)');
    s.dispose();
  });

  it('fails the waiting requests at the deadline also when the timer fires before the clock reaches it', async () => {
    const s = set([1], { downTimeoutMs: 50 });
    const now = Date.now;
    // The clock read as the last endpoint goes down runs 20 ms ahead of the timer (timers and
    // Date.now() are different clocks): the timer fires when the clock says 30 ms have passed.
    Date.now = () => now() + 20;
    try {
      s.setAside(s.endpoints[0]!, 'connection refused');
    } finally {
      Date.now = now;
    }
    await expect(s.acquire()).rejects.toThrow(UserError);
    s.dispose();
  });
});

describe('in-flight limits', () => {
  it('a busy answer halves the limit once per limit of calls; calls that go well raise it back to the ceiling', () => {
    const e = new Endpoint('http://e/v1', 64);
    e.noteBusy();
    expect(e.limit).toBe(32);
    // More busy answers from the same round do not cut again.
    for (let i = 0; i < 10; i++) e.noteBusy();
    expect(e.limit).toBe(32);
    for (let i = 0; i < 22; i++) e.noteBusy();
    expect(e.limit).toBe(16);
    let calls = 0;
    while (e.limit < 64 && calls < 10_000) {
      e.noteSuccess(5, 4);
      calls++;
    }
    expect(e.limit).toBe(64);
    for (let i = 0; i < 1000; i++) e.noteSuccess(5, 4);
    expect(e.limit).toBe(64);
    expect(e.snapshot()).toMatchObject({ limit: 64, maxInFlight: 64, backoffs: 2 });
  });

  it('short calls that start to queue at the server lower the limit; long calls do not count', () => {
    const e = new Endpoint('http://e/v1', 100);
    for (let i = 0; i < 50; i++) e.noteSuccess(40, 4);
    expect(e.limit).toBe(100);
    // A paraphrase taking seconds is work, not queueing.
    for (let i = 0; i < 50; i++) e.noteSuccess(5000, 256);
    expect(e.limit).toBe(100);
    for (let i = 0; i < 200; i++) e.noteSuccess(2000, 4);
    expect(e.limit).toBeLessThan(100);
    expect(e.limit).toBeGreaterThan(0);
  });
});
