// The fit check on GPUs this machine does not have: stand-in GPU facts (backend, cards, free
// VRAM) go through the same plan the load uses (llama/fit.ts planLoad, node-llama-cpp's resolver
// with the load's own gpuLayers option), on the real tiny model and a 7B-shaped header. Checks
// the backend and cards named, full offload where it fits, partial offload said in plain words
// where it does not, and the CPU.
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import type { GpuFacts } from '../../../electron/common/contract/models';
import { disposeLlamaRuntime, parseGpuStandIn } from '../../../electron/llama';
import { estimateFit, hardwareInfo } from '../../../electron/models';
import { ensureSyntheticModel } from '../../../tools/synthetic-gguf';
import { tinyModelPath } from '../../helpers/models';

const GiB = 1024 ** 3;
const roomyRam = { ram: 64 * GiB };
const standIn = (backend: GpuFacts['backend'], cards: [string, number, number][], unifiedMemory = false): GpuFacts =>
  parseGpuStandIn(JSON.stringify({ backend, unifiedMemory, cards: cards.map(([name, total, free]) => ({ name, vramTotal: total * GiB, vramFree: free * GiB })) }));

const oneCuda24 = standIn('cuda', [['NVIDIA GeForce RTX 4090', 24, 23]]);
const oneCuda8 = standIn('cuda', [['NVIDIA GeForce RTX 3070', 8, 7]]);
const twoCards = standIn('cuda', [['NVIDIA RTX A2000', 6, 4], ['NVIDIA T400', 4, 3]]);
const mac = standIn('metal', [['Apple M2 Max', 32, 24]], true);
const cpu = standIn('cpu', []);
const shape = { contextSize: 4096, sequences: 1, budget: roomyRam };

afterAll(() => disposeLlamaRuntime());

describe('stand-in GPU facts', () => {
  it('are parsed with the sums and checked, one clear line for a bad one', () => {
    expect(twoCards).toMatchObject({ backend: 'cuda', vram: { total: 10 * GiB, free: 7 * GiB }, unifiedMemory: false, standIn: true });
    expect(twoCards.cards.map((c) => c.name)).toEqual(['NVIDIA RTX A2000', 'NVIDIA T400']);
    expect(mac.unifiedMemory).toBe(true);
    expect(cpu).toMatchObject({ backend: 'cpu', cards: [], vram: { total: 0, free: 0 } });
    expect(() => parseGpuStandIn('{cuda')).toThrow(UserError);
    expect(() => parseGpuStandIn('{"backend":"rocm"}')).toThrow(/stand-in GPU facts are not valid: backend:/);
    expect(() => parseGpuStandIn('{"backend":"cuda","cards":[{"name":"x","vramTotal":-1,"vramFree":0}]}')).toThrow(/cards\.0\.vramTotal/);
  });

  it('hardwareInfo carries the facts it is given', async () => {
    const hw = await hardwareInfo(undefined, twoCards);
    expect(hw.gpu).toEqual(twoCards);
    expect(hw.ram.total).toBeGreaterThan(0);
  });
});

describe('the fit check on stand-in GPUs', { timeout: 300_000 }, () => {
  it('one 24 GB CUDA card: a small model and a 7B both go wholly on the GPU', async () => {
    const tiny = await estimateFit(await tinyModelPath(), { ...shape, gpu: oneCuda24 });
    expect(tiny).toMatchObject({ plan: 'gpu', fits: true, warning: null });
    expect(tiny.gpuLayers).toBe(tiny.totalLayers);
    expect(tiny.gpu.backend).toBe('cuda');
    expect(tiny.offload).toBe(`all ${tiny.totalLayers} layers on the GPU: NVIDIA GeForce RTX 4090 (CUDA)`);

    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const big = await estimateFit(p7, { ...shape, gpu: oneCuda24 });
    expect(big).toMatchObject({ plan: 'gpu', gpuLayers: 29, totalLayers: 29, fits: true, vramFree: 23 * GiB });
    expect(big.vramBytes).toBeGreaterThan(6e9);
    expect(big.vramBytes).toBeLessThanOrEqual(23 * GiB);
  });

  it('one 8 GB card: the 7B is offloaded partly, said in plain words, and still fits', async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const f = await estimateFit(p7, { ...shape, gpu: oneCuda8 });
    expect(f.plan).toBe('partial');
    expect(f.fits).toBe(true);
    expect(f.gpuLayers).toBeGreaterThan(0);
    expect(f.gpuLayers).toBeLessThan(29);
    expect(f.vramBytes).toBeLessThanOrEqual(7 * GiB);
    expect(f.ramBytes).toBeGreaterThan(0);
    expect(f.offload).toBe(`${f.gpuLayers} of 29 layers on the GPU, NVIDIA GeForce RTX 3070 (CUDA); the other ${29 - f.gpuLayers} on the CPU: the whole model does not fit in 7.0 GiB free VRAM, so it runs slower, but it runs`);
    expect(f.warning).toContain(f.offload);
    // Less VRAM, fewer layers: the plan follows the facts.
    const smaller = await estimateFit(p7, { ...shape, gpu: standIn('cuda', [['NVIDIA GeForce RTX 3050', 4, 3]]) });
    expect(smaller.gpuLayers).toBeLessThan(f.gpuLayers);
    expect(smaller.gpuLayers).toBeGreaterThan(0);
  });

  it('two cards: both named, their VRAM summed, the 7B partly offloaded across them', async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const f = await estimateFit(p7, { ...shape, gpu: twoCards });
    expect(f.plan).toBe('partial');
    expect(f.vramFree).toBe(7 * GiB);
    expect(f.gpu.cards).toHaveLength(2);
    expect(f.offload).toMatch(/^\d+ of 29 layers on the GPU, NVIDIA RTX A2000 \+ NVIDIA T400 \(CUDA\); the other \d+ on the CPU: the whole model does not fit in 7\.0 GiB free VRAM/);
  });

  it('a Metal Mac with unified memory: the 7B wholly on the GPU, the memory shared', async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const f = await estimateFit(p7, { ...shape, gpu: mac });
    expect(f).toMatchObject({ plan: 'gpu', gpuLayers: 29, fits: true });
    expect(f.gpu).toMatchObject({ backend: 'metal', unifiedMemory: true });
    expect(f.offload).toBe('all 29 layers on the GPU: Apple M2 Max (Metal)');
  });

  it('a card too small for any layer: all on the CPU, said so; no card at all: CPU only', async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const tiny = await estimateFit(p7, { ...shape, gpu: standIn('vulkan', [['Intel UHD 620', 1, 0.25]]) });
    expect(tiny).toMatchObject({ plan: 'cpu', gpuLayers: 0, fits: true });
    expect(tiny.offload).toBe('all 29 layers on the CPU: none fits in the 256.0 MiB free VRAM of Intel UHD 620 (Vulkan), so it runs slower, but it runs');
    expect(tiny.warning).toContain(tiny.offload);

    const none = await estimateFit(p7, { ...shape, gpu: cpu });
    expect(none).toMatchObject({ plan: 'cpu', gpuLayers: 0, vramBytes: 0, fits: true, warning: null });
    expect(none.offload).toBe('all 29 layers on the CPU: no GPU backend here');
  });
});
