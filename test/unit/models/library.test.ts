// The library over real files: synthetic GGUFs, a corrupt one, a truncated one, a text file named
// .gguf and an in-progress download; added folders/files persisted and referenced in place.
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelLibrary, estimateFit, hardwareInfo, scanLibrary } from '../../../electron/models';
import { UserError } from '../../../electron/common/errors';
import { parseGpuStandIn } from '../../../electron/llama/fit';
import { ensureSyntheticModel } from '../../../tools/synthetic-gguf';
import { tinyModelBPath, tinyModelPath } from '../../helpers/models';

let root: string;
let tiny: string;
let tinyB: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tatra-lib-'));
  tiny = await tinyModelPath();
  tinyB = await tinyModelBPath();
  const models = join(root, 'models');
  await mkdir(models);
  await copyFile(tiny, join(models, 'tiny.gguf'));
  const bytes = await readFile(tiny);
  await writeFile(join(models, 'cut.gguf'), bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  await writeFile(join(models, 'notes.gguf'), 'this is a text file, not a model\n');
  await writeFile(join(models, 'empty.gguf'), '');
  // The magic then garbage: node-llama-cpp's reader never returns on this one; the library must.
  await writeFile(join(models, 'garbage.gguf'), Buffer.concat([Buffer.from('GGUF'), Buffer.from([0x20, 0x62, 0x75, 0x74]), Buffer.alloc(64, 0xff)]));
  await writeFile(join(models, 'big.gguf.partial'), bytes.subarray(0, 1000));
  await writeFile(join(models, 'big.gguf.partial.json'), '{}');
  await writeFile(join(models, 'readme.txt'), 'ignored');
  await writeFile(join(models, 'half.gguf.partial'), bytes.subarray(0, 4096));
  await writeFile(join(models, 'half.gguf.partial.json'), JSON.stringify({ url: 'https://example.org/half.gguf', source: 'qwen2.5-0.5b-instruct-q4_k_m', total: 400_000_000, etag: null }));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('scanLibrary', () => {
  it('describes valid models from the header and lists bad files with their reasons', async () => {
    const { models, invalid } = await scanLibrary([join(root, 'models')], [tinyB]);
    expect(models.map((m) => m.fileName)).not.toContain('half.gguf');
    expect(models.map((m) => m.fileName)).toEqual(['tiny.gguf', tinyB.split('/').pop()]);
    const t = models[0]!;
    expect(t).toMatchObject({ architecture: 'qwen2', hasChatTemplate: true, quantization: 'Q8_0', layers: 2, contextLength: 8192, source: 'folder' });
    expect(t.parameters).toBeGreaterThan(1_000_000);
    expect(t.sizeBytes).toBe((await readFile(tiny)).length);
    const b = models[1]!;
    expect(b.source).toBe('file');
    expect(b.layers).toBe(3);
    expect(b.parameters).toBeGreaterThan(t.parameters!);

    const byName = Object.fromEntries(invalid.map((i) => [i.path.split('/').pop(), i]));
    // Unfinished downloads are offered for resuming, never listed as models or as broken files.
    const { partials } = await scanLibrary([join(root, 'models')]);
    expect(partials).toEqual([{ path: join(root, 'models', 'half.gguf'), source: 'qwen2.5-0.5b-instruct-q4_k_m', bytes: 4096, total: 400_000_000 }]);
    expect(Object.keys(byName).sort()).toEqual(['cut.gguf', 'empty.gguf', 'garbage.gguf', 'notes.gguf']);
    expect(byName['garbage.gguf']).toMatchObject({ code: 'invalid' });
    expect(byName['garbage.gguf']!.reason).toMatch(/damaged GGUF version/);
    expect(byName['cut.gguf']).toMatchObject({ code: 'truncated' });
    expect(byName['cut.gguf']!.reason).toMatch(/^truncated GGUF model \(/);
    expect(byName['notes.gguf']).toMatchObject({ code: 'not_gguf' });
    expect(byName['notes.gguf']!.reason).toMatch(/does not start with "GGUF"/);
    expect(byName['empty.gguf']!.reason).toMatch(/empty/);
    for (const i of invalid) expect(i.reason).not.toContain(root);
  });

  it('reports a missing folder and a missing file instead of throwing', async () => {
    const { models, invalid } = await scanLibrary([join(root, 'nope')], [join(root, 'gone.gguf')]);
    expect(models).toEqual([]);
    expect(invalid.map((i) => [i.code, i.reason])).toEqual([
      ['missing', 'folder not found'],
      ['missing', expect.stringMatching(/not found/)],
    ]);
  });
});

describe('ModelLibrary', () => {
  it('remembers added folders and files in library.json, references them in place and forgets them', async () => {
    const data = join(root, 'data');
    const extra = join(root, 'extra');
    await mkdir(extra);
    await copyFile(tinyB, join(extra, 'b.gguf'));
    const lib = new ModelLibrary(data, { defaultDir: join(root, 'models') });
    let l = await lib.list();
    expect(l.models.map((m) => m.fileName)).toEqual(['tiny.gguf']);
    expect(l.models[0]!.source).toBe('models-dir');
    l = await lib.addFolder(extra);
    expect(l.folders).toEqual([extra]);
    expect(l.models.map((m) => m.path)).toContain(join(extra, 'b.gguf'));
    l = await lib.addFile(tiny);
    expect(l.files).toEqual([tiny]);
    expect(l.models.find((m) => m.path === tiny)?.source).toBe('file');
    // A second instance (a restart) sees the same library; nothing was copied.
    const again = await new ModelLibrary(data, { defaultDir: join(root, 'models') }).list();
    expect(again.folders).toEqual([extra]);
    expect(JSON.parse(await readFile(join(data, 'library.json'), 'utf8'))).toEqual({ folders: [extra], files: [tiny] });
    expect(await readdir(data)).toEqual(['library.json']);

    await expect(lib.addFolder(join(root, 'missing'))).rejects.toThrow(/folder not found/);
    await expect(lib.addFile(join(root, 'models', 'readme.txt'))).rejects.toThrow(/is not a \.gguf file/);
    // A .gguf that is not a GGUF is refused with its reason, and not kept.
    await writeFile(join(root, 'notes.gguf'), 'not a model at all\n');
    await expect(lib.addFile(join(root, 'notes.gguf'))).rejects.toThrow(/does not start with "GGUF"/);
    expect((await lib.list()).files).toEqual([tiny]);
    await expect(lib.remove(join(root, 'models'))).rejects.toThrow(/always scanned/);
    l = await lib.remove(extra);
    expect(l.folders).toEqual([]);
    expect(l.models.map((m) => m.path)).not.toContain(join(extra, 'b.gguf'));
    expect((await readdir(extra)).length).toBe(1);
  });
});

describe('hardware and fit', () => {
  it('reports the machine', async () => {
    const hw = await hardwareInfo();
    expect(hw.ram.total).toBeGreaterThan(hw.ram.free);
    expect(hw.cpuCores).toBeGreaterThanOrEqual(1);
    expect(['cuda', 'metal', 'vulkan', 'cpu']).toContain(hw.gpu.backend);
    expect(hw.gpu.standIn).toBe(false);
    if (hw.gpu.backend === 'cpu') expect(hw.gpu).toMatchObject({ cards: [], vram: { total: 0, free: 0 } });
  });

  it('estimates a 7B-shaped header at several GB and says it will not fit a tiny budget', { timeout: 300_000 }, async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const roomy = await estimateFit(p7, { contextSize: 4096, sequences: 1, budget: { ram: 64 * 1024 ** 3 } });
    expect(roomy.modelBytes).toBeGreaterThan(6e9);
    expect(roomy.modelBytes).toBeLessThan(10e9);
    expect(roomy.contextBytes).toBeGreaterThan(0);
    expect(roomy.totalBytes).toBe(roomy.modelBytes + roomy.contextBytes);
    expect(roomy).toMatchObject({ fits: true, plan: 'cpu', gpuLayers: 0, totalLayers: 29 });

    const tight = await estimateFit(p7, { contextSize: 4096, sequences: 1, budget: { ram: 2 * 1024 ** 3 } });
    expect(tight.fits).toBe(false);
    expect(tight.warning).toMatch(/will not fit: it needs about \d+\.\d GiB .* only 2\.0 GiB RAM is free/);

    // More context and sequences need more memory.
    const bigger = await estimateFit(p7, { contextSize: 16384, sequences: 4, budget: { ram: 64 * 1024 ** 3 } });
    expect(bigger.contextBytes).toBeGreaterThan(roomy.contextBytes * 2);

  });

  // Stand-in facts naming the process's own backend: the resolver simulates on the real device.
  it.skipIf(!process.env.TATRA_TEST_GPU)('plans GPU layers for a VRAM what-if on the real backend (run with TATRA_TEST_GPU=1 on a GPU machine)', async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const hw = await hardwareInfo();
    const card = (gib: number) => parseGpuStandIn(JSON.stringify({ backend: hw.gpu.backend, cards: [{ name: hw.gpu.cards[0]?.name ?? 'GPU', vramTotal: gib * 1024 ** 3, vramFree: gib * 1024 ** 3 }] }));
    const half = await estimateFit(p7, { contextSize: 4096, sequences: 1, budget: { ram: 64 * 1024 ** 3 }, gpu: card(5) });
    expect(half.plan).toBe('partial');
    expect(half.gpuLayers).toBeGreaterThan(0);
    expect(half.gpuLayers).toBeLessThan(29);
    expect(half.vramBytes).toBeLessThanOrEqual(5 * 1024 ** 3);
    expect(half.fits).toBe(true);
    const full = await estimateFit(p7, { contextSize: 4096, sequences: 1, budget: { ram: 64 * 1024 ** 3 }, gpu: card(24) });
    expect(full).toMatchObject({ plan: 'gpu', gpuLayers: 29, fits: true });
  }, 300_000);

  it('refuses a file that is not a model with a clear error', async () => {
    await expect(estimateFit(join(root, 'models', 'notes.gguf'))).rejects.toThrow(UserError);
  });
});
