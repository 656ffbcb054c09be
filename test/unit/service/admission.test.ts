// The service's two bounds: admitted requests (429 beyond) and engine slots (first come, first served).
import { describe, expect, it } from 'vitest';
import { Admission } from '../../../electron/service/admission';
import { HttpError } from '../../../electron/web/http-error';

describe('Admission', () => {
  it('admits up to maxQueue, then throws a 429 with Retry-After', () => {
    const a = new Admission({ maxQueue: 2, concurrency: 1 });
    const r1 = a.admit();
    a.admit();
    let failure: unknown;
    try {
      a.admit();
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(HttpError);
    expect((failure as HttpError).status).toBe(429);
    expect(Number((failure as HttpError).headers['Retry-After'])).toBeGreaterThanOrEqual(1);
    r1();
    r1(); // releasing twice frees one place only
    expect(a.admitted).toBe(1);
    expect(() => a.admit()).not.toThrow();
  });

  it('grants slots in arrival order, and a waiter that gives up leaves the line', async () => {
    const a = new Admission({ maxQueue: 10, concurrency: 1 });
    const order: string[] = [];
    const first = await a.slot(new AbortController().signal);
    const quitter = new AbortController();
    const b = a.slot(new AbortController().signal).then((release) => (order.push('b'), release));
    const gone = a.slot(quitter.signal);
    const c = a.slot(new AbortController().signal).then((release) => (order.push('c'), release));
    expect(a.queued).toBe(3);
    quitter.abort();
    await expect(gone).rejects.toThrow();
    expect(a.queued).toBe(2);
    first();
    (await b)();
    (await c)();
    expect(order).toEqual(['b', 'c']);
    expect(a.running).toBe(0);
  });
});
