// The model pool (hold/pool.ts) shares one load among every caller that wants the same file, so no single
// caller's signal stops it; once every caller waiting for it has given up (Ctrl-C or a pause
// while the models load), the load itself is stopped instead of finishing only to be disposed.
// A scripted loader pins exactly that: it settles only when told to, or when its signal aborts.
import { describe, expect, it, vi } from 'vitest';
import { parseModelSpec, type RemoteModelSpec } from '../../../electron/common/model-spec';
import type { RemoteBackend } from '../../../electron/remote';
import type { LoadedBackend } from '../../../electron/engine/backend';
import { ModelPool } from '../../../electron/hold/pool';
import type { LoadLlamaBackendOptions } from '../../../electron/llama/load-backend';

interface ScriptedLoad {
  path: string;
  signal: AbortSignal;
  finish(): void;
}

function scriptedPool(): { pool: ModelPool; loads: ScriptedLoad[]; disposed: string[] } {
  const loads: ScriptedLoad[] = [];
  const disposed: string[] = [];
  const load = (opts: LoadLlamaBackendOptions) =>
    new Promise<LoadedBackend>((res, rej) => {
      const signal = opts.signal!;
      const backend = { id: opts.modelPath, dispose: async () => void disposed.push(opts.modelPath) } as unknown as LoadedBackend;
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
  it('hands out the shared model itself; releasing gives back that claim only, once; the last claim unloads the model', async () => {
    const { pool, loads, disposed } = scriptedPool();
    const [a, b] = [pool.acquire(parseModelSpec('/m/e.gguf')), pool.acquire(parseModelSpec('/m/e.gguf'))];
    await vi.waitFor(() => expect(loads).toHaveLength(1));
    loads[0]!.finish();
    const [first, second] = await Promise.all([a, b]);
    // One object, no view around it: what the engine is given is the model the pool loaded.
    expect(first.backend).toBe(second.backend);
    // @ts-expect-error A holder's backend has no dispose (engine/backend.ts): only the pool unloads.
    void first.backend.dispose;
    await first.release();
    await first.release();
    expect(disposed).toEqual([]);
    expect(pool.loaded()).toEqual([{ path: '/m/e.gguf', refs: 1 }]);
    await second.release();
    expect(disposed).toEqual(['/m/e.gguf']);
    expect(pool.loaded()).toEqual([]);
  });

  it('describes a remote model from its connection, sharing it with the holders', async () => {
    const described = { urls: ['http://gpu1:8000/v1'], model: 'm', kind: 'vllm' as const, version: null, constrained: 'structured-outputs' as const };
    const connected: string[] = [];
    const disposed: string[] = [];
    const connect = async (spec: RemoteModelSpec) => {
      connected.push(spec.text);
      return { id: spec.text, describe: () => described, dispose: async () => void disposed.push(spec.text) } as unknown as RemoteBackend;
    };
    const pool = new ModelPool({ remote: { connect } });
    const spec = parseModelSpec('openai+http://gpu1:8000/v1#m') as RemoteModelSpec;
    const lease = await pool.acquire(spec);
    expect(await pool.describeRemote(spec)).toEqual(described);
    expect(connected).toEqual([spec.text]);
    expect(disposed).toEqual([]);
    await lease.release();
    expect(disposed).toEqual([spec.text]);
  });
});

describe('a model unloaded after its keep-alive', () => {
  it('whose unload fails is logged once, escaped, and the process goes on (no unhandled rejection, which ends tatra serve or tatra api)', async () => {
    const lines: string[] = [];
    let loadsMade = 0;
    const load = async (opts: LoadLlamaBackendOptions) => {
      loadsMade++;
      const dispose = loadsMade === 1 ? async () => Promise.reject(new Error('unload failed\x1b[2J')) : async () => undefined;
      return { id: opts.modelPath, dispose } as unknown as LoadedBackend;
    };
    // Whichever comes first: the pool's line, or the rejection nothing handled.
    let said: (what: string) => void = () => undefined;
    const outcome = new Promise<string>((res) => (said = res));
    const onUnhandled = (reason: unknown) => said(`unhandled rejection: ${String(reason)}`);
    process.once('unhandledRejection', onUnhandled);
    const log = (line: string) => {
      lines.push(line);
      said('logged');
    };
    const pool = new ModelPool({ load, keepAliveMs: 1, log });
    await (await pool.acquire(parseModelSpec('/m/f.gguf'))).release();
    const result = await outcome;
    process.off('unhandledRejection', onUnhandled);
    // The same model wanted again loads afresh.
    await vi.waitFor(() => expect(pool.loaded()).toEqual([]));
    await (await pool.acquire(parseModelSpec('/m/f.gguf'))).release();
    expect(loadsMade).toBe(2);
    expect(result).toBe('logged');
    expect(lines).toEqual(['tatra: unloading /m/f.gguf failed: unload failed\\u001b[2J']);
  });
});
