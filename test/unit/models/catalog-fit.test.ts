// Which catalog model to offer a newcomer, and whether each fits, before anything is downloaded.
import { describe, expect, it } from 'vitest';
import { catalogFit, loadCatalog, recommendCatalog } from '../../../electron/models/catalog';

const GiB = 1024 ** 3;

describe('catalog fit and recommendation', () => {
  it('offers the largest model the GPU holds, else a small one a CPU runs well, else none', async () => {
    const catalog = await loadCatalog();
    const ids = (hw: Parameters<typeof recommendCatalog>[1]) => recommendCatalog(catalog, hw)?.id ?? null;
    // A 24 GB GPU: the paper's larger model, on the GPU.
    expect(ids({ vram: { total: 24 * GiB, free: 22 * GiB }, ram: { total: 32 * GiB, free: 20 * GiB } })).toBe('llama-3.1-8b-instruct-q4_k_m');
    // A laptop without a GPU and 16 GB free: up to about 3B parameters.
    expect(ids({ vram: null, ram: { total: 32 * GiB, free: 16 * GiB } })).toBe('qwen2.5-3b-instruct-q4_k_m');
    // Tight memory: the smallest that fits at all.
    expect(ids({ vram: null, ram: { total: 4 * GiB, free: 1.2 * GiB } })).toBe('qwen2.5-0.5b-instruct-q4_k_m');
    expect(ids({ vram: null, ram: { total: 1 * GiB, free: 0.3 * GiB } })).toBeNull();
    const seven = catalog.find((c) => c.id === 'qwen2.5-7b-instruct-q4_k_m')!;
    expect(catalogFit(seven, { vram: null, ram: { total: 8 * GiB, free: 4 * GiB } })).toMatchObject({ fits: false, where: 'cpu', freeBytes: 4 * GiB });
  });
});
