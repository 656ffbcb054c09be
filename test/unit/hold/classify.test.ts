// withHeldModels (hold/classify.ts), the one "hold the generator and the evaluator, work, give
// both back" of every face: both claims are given back however the work ends, a cancel stops the
// wait for a model still loading, and a release that fails is not swallowed.
import { describe, expect, it, vi } from 'vitest';
import { parseModelSpec } from '../../../electron/common/model-spec';
import type { LoadedBackend, TatraBackend } from '../../../electron/engine/backend';
import { ModelPool, withHeldModels, type BackendProvider } from '../../../electron/hold';
import type { LoadLlamaBackendOptions } from '../../../electron/llama/load-backend';

function pool(opts: { failDispose?: boolean; hold?: Promise<void> } = {}) {
  const disposed: string[] = [];
  const load = (o: LoadLlamaBackendOptions) =>
    new Promise<LoadedBackend>((resolve, reject) => {
      // Like llama.cpp's load, stopped by its signal.
      o.signal?.addEventListener('abort', () => reject(o.signal!.reason), { once: true });
      const backend = {
        id: o.modelPath,
        contextSize: 512,
        dispose: async () => {
          disposed.push(o.modelPath);
          if (opts.failDispose) throw new Error(`cannot unload ${o.modelPath}`);
        },
      } as unknown as LoadedBackend;
      void (opts.hold ?? Promise.resolve()).then(() => resolve(backend));
    });
  return { models: new ModelPool({ load }), disposed };
}

describe('withHeldModels', () => {
  it('gives both claims back when the work succeeds and when it fails', async () => {
    const { models, disposed } = pool();
    expect(await withHeldModels(models, { generator: parseModelSpec('/m/g.gguf'), evaluator: parseModelSpec('/m/e.gguf') }, async (g, e) => `${g.id} ${e.id}`)).toBe('/m/g.gguf /m/e.gguf');
    expect(disposed).toEqual(['/m/e.gguf', '/m/g.gguf']);
    await expect(withHeldModels(models, { generator: parseModelSpec('/m/g.gguf'), evaluator: parseModelSpec('/m/g.gguf') }, async () => Promise.reject(new Error('the work failed')))).rejects.toThrow('the work failed');
    expect(models.loaded()).toEqual([]);
  });

  it('stops waiting for a model still loading when cancelled, and gives back what it held', async () => {
    const { models } = pool({ hold: new Promise<void>(() => undefined) });
    const ac = new AbortController();
    const work = vi.fn(async () => 'ran');
    const held = withHeldModels(models, { generator: parseModelSpec('/m/g.gguf'), evaluator: parseModelSpec('/m/e.gguf'), signal: ac.signal }, work);
    await vi.waitFor(() => expect(models.loaded().length).toBeGreaterThan(0));
    ac.abort();
    await expect(held).rejects.toMatchObject({ name: 'AbortError' });
    expect(work).not.toHaveBeenCalled();
    expect(models.loaded()).toEqual([]);
  });

  it('fails a run whose models could not be given back, rather than swallow it', async () => {
    const { models } = pool({ failDispose: true });
    await expect(withHeldModels(models, { generator: parseModelSpec('/m/g.gguf'), evaluator: parseModelSpec('/m/g.gguf') }, async () => 'done')).rejects.toThrow('cannot unload /m/g.gguf');
  });

  it('holds through any provider: a scripted one sees each claim given back once', async () => {
    const released: string[] = [];
    const provider: BackendProvider = {
      acquire: async ({ text }) => ({ backend: { id: text } as TatraBackend, release: async () => void released.push(text) }),
    };
    await withHeldModels(provider, { generator: parseModelSpec('a'), evaluator: parseModelSpec('b') }, async () => undefined);
    expect(released).toEqual(['b', 'a']);
  });
});
