// The model pool (hold/pool.ts) shares one load among every caller that wants the same file, so no single
// caller's signal stops it; once every caller waiting for it has given up (Ctrl-C or a pause
// while the models load), the load itself is stopped instead of finishing only to be disposed.
// A scripted loader pins exactly that: it settles only when told to, or when its signal aborts.
import { describe, expect, it, vi } from 'vitest';
import { parseModelSpec } from '../../../electron/common/model-spec';
import type { TatraBackend } from '../../../electron/engine/backend';
import { ModelPool } from '../../../electron/hold/pool';
import type { LoadLlamaBackendOptions } from '../../../electron/llama/backend';

interface ScriptedLoad {
  path: string;
  signal: AbortSignal;
  finish(): void;
}

function scriptedPool(): { pool: ModelPool; loads: ScriptedLoad[]; disposed: string[] } {
  const loads: ScriptedLoad[] = [];
  const disposed: string[] = [];
  const load = (opts: LoadLlamaBackendOptions) =>
    new Promise<TatraBackend>((res, rej) => {
      const signal = opts.signal!;
      const backend = { id: opts.modelPath, dispose: async () => void disposed.push(opts.modelPath) } as unknown as TatraBackend;
      loads.push({ path: opts.modelPath, signal, finish: () => res(backend) });
      signal.addEventListener('abort', () => rej(signal.reason), { once: true });
    });
  return { pool: new ModelPool({ load }), loads, disposed };
}

const settled = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => e,
  );

describe('a load nobody waits for any more is stopped', () => {
  it('the only caller gives up: the load is aborted, and the next acquire loads afresh', async () => {
    const { pool, loads } = scriptedPool();
    const ac = new AbortController();
    const acquiring = settled(pool.acquire(parseModelSpec('/m/a.gguf'), { signal: ac.signal }));
    await vi.waitFor(() => expect(loads).toHaveLength(1));
    ac.abort();
    expect(await acquiring).toBe(ac.signal.reason);
    expect(loads[0]!.signal.aborted).toBe(true);
    expect(pool.loaded()).toEqual([]);
    const again = pool.acquire(parseModelSpec('/m/a.gguf'));
    await vi.waitFor(() => expect(loads).toHaveLength(2));
    loads[1]!.finish();
    await (await again).release();
  });

  it('one of two callers gives up: the load goes on for the other', async () => {
    const { pool, loads, disposed } = scriptedPool();
    const ac = new AbortController();
    const first = settled(pool.acquire(parseModelSpec('/m/b.gguf'), { signal: ac.signal }));
    const second = pool.acquire(parseModelSpec('/m/b.gguf'));
    await vi.waitFor(() => expect(pool.loaded()).toEqual([{ path: '/m/b.gguf', refs: 2 }]));
    ac.abort();
    expect(await first).toBe(ac.signal.reason);
    expect(loads).toHaveLength(1);
    expect(loads[0]!.signal.aborted).toBe(false);
    loads[0]!.finish();
    const lease = await second;
    expect(lease.backend.id).toBe('/m/b.gguf');
    await lease.release();
    expect(disposed).toEqual(['/m/b.gguf']);
  });

  it('a loaded model is not aborted by a later release, and dispose stops loads under way', async () => {
    const { pool, loads, disposed } = scriptedPool();
    const held = pool.acquire(parseModelSpec('/m/c.gguf'));
    const loading = settled(pool.acquire(parseModelSpec('/m/d.gguf')));
    await vi.waitFor(() => expect(loads).toHaveLength(2));
    const c = loads.find((l) => l.path === '/m/c.gguf')!;
    c.finish();
    await (await held).release();
    expect(c.signal.aborted).toBe(false);
    expect(disposed).toEqual(['/m/c.gguf']);
    await pool.dispose();
    expect(loads.find((l) => l.path === '/m/d.gguf')!.signal.aborted).toBe(true);
    expect(await loading).toBeInstanceOf(Error);
  });
});

describe('a lease is one holder’s claim (IReference): using it never unloads the model for the others', () => {
  it('disposing a lease’s backend releases that claim only; the last claim unloads the model', async () => {
    const { pool, loads, disposed } = scriptedPool();
    const [a, b] = [pool.acquire(parseModelSpec('/m/e.gguf')), pool.acquire(parseModelSpec('/m/e.gguf'))];
    await vi.waitFor(() => expect(loads).toHaveLength(1));
    loads[0]!.finish();
    const [first, second] = await Promise.all([a, b]);
    expect(first.backend.id).toBe(second.backend.id);
    // Before, the lease handed out the shared backend itself: this unloaded it for `second` too.
    await first.backend.dispose();
    await first.backend.dispose();
    await first.release();
    expect(disposed).toEqual([]);
    expect(pool.loaded()).toEqual([{ path: '/m/e.gguf', refs: 1 }]);
    await second.backend.dispose();
    expect(disposed).toEqual(['/m/e.gguf']);
    expect(pool.loaded()).toEqual([]);
  });
});
