// DisposableStore (common/disposables.ts): the one way shutdown order is written. Disposed in the
// reverse order of adding, every item even when one fails, once however often it is asked.
import { describe, expect, it } from 'vitest';
import { DisposableStore } from '../../../electron/common/disposables';

describe('DisposableStore', () => {
  it('disposes the last added first, waiting for each, once', async () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.add(() => void order.push('database'));
    store.add({ dispose: async () => void order.push('manager') });
    store.add(async () => {
      await Promise.resolve();
      order.push('listener');
    });
    await Promise.all([store.dispose(), store.dispose()]);
    await store.dispose();
    expect(order).toEqual(['listener', 'manager', 'database']);
    expect(store.disposed).toBe(true);
  });

  it('disposes every item when one fails: reported, or the first failure once all are done', async () => {
    const order: string[] = [];
    const reported: unknown[] = [];
    const withReport = new DisposableStore((e) => reported.push(e));
    withReport.add(() => void order.push('first'));
    withReport.add(() => {
      throw new Error('cannot close');
    });
    await withReport.dispose();
    expect(order).toEqual(['first']);
    expect(reported).toEqual([new Error('cannot close')]);

    const plain = new DisposableStore();
    plain.add(() => void order.push('still closed'));
    plain.add(() => Promise.reject(new Error('first failure')));
    plain.add(() => Promise.reject(new Error('second failure')));
    await expect(plain.dispose()).rejects.toThrow('second failure');
    expect(order).toEqual(['first', 'still closed']);
  });

  it('disposes what is added after it was disposed', async () => {
    const store = new DisposableStore();
    await store.dispose();
    let late = false;
    store.add(() => void (late = true));
    await store.dispose();
    await Promise.resolve();
    expect(late).toBe(true);
  });
});
