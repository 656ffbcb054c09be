// What loading a model takes, worked out by node-llama-cpp's own configuration resolver with the
// options the real load passes (loadGpuLayers below). The fit badge, `tatra models fit`, Compare's
// warnings and the out-of-memory message therefore say what the load will do, rather than a
// separate hand-made estimate that can disagree with it.
import type { GgufInsights, InsufficientMemoryError, Llama } from 'node-llama-cpp';
import { isInsufficientMemory, nodeLlamaCpp } from './module';
import { z } from 'zod';
import { readGgufInfoOnce } from './inspection';
import { withoutSimulation } from './internals';
import { formatBytes } from '../common/bytes';
import { UserError, errorMessage } from '../common/errors';
import { GpuBackend, type GpuFacts } from '../common/contract/models';

/** The gpuLayers option every load passes: as many layers as fit in VRAM with room for the whole context. */
export function loadGpuLayers(contextSize: number, sequences: number): { fitContext: { contextSize: number } } {
  return { fitContext: { contextSize: contextSize * sequences } };
}

/** Pretend this much RAM is free (bytes) instead of asking the machine, for what-if questions and tests. */
export interface MemoryBudget {
  ram: number;
}

/**
 * The GPU facts of the process's Llama: its backend, the cards llama.cpp sees and their VRAM.
 * llama.cpp reports VRAM summed over the cards, so a card's own figures are known only when
 * there is one card.
 */
export async function readGpuFacts(llama: Llama): Promise<GpuFacts> {
  if (llama.gpu === false) return { backend: 'cpu', cards: [], vram: { total: 0, free: 0 }, unifiedMemory: false, standIn: false };
  const [v, names] = await Promise.all([llama.getVramState(), llama.getGpuDeviceNames()]);
  const one = names.length === 1;
  return {
    backend: llama.gpu,
    cards: names.map((name) => ({ name, vramTotal: one ? v.total : null, vramFree: one ? v.free : null })),
    vram: { total: v.total, free: v.free },
    unifiedMemory: v.unifiedSize > 0,
    standIn: false,
  };
}

/**
 * Stand-in GPU facts (a JSON GpuFacts without the sums, e.g. `{"backend":"cuda","cards":[{"name":
 * "RTX 4090","vramTotal":25769803776,"vramFree":24696061952}]}`) for tests and what-ifs: what the
 * fit check would say on that hardware. The load itself always runs on the real one.
 */
export function parseGpuStandIn(json: string): GpuFacts {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    throw new UserError(`the stand-in GPU facts are not JSON (${errorMessage(e)})`);
  }
  const parsed = GpuStandIn.safeParse(raw);
  if (!parsed.success) throw new UserError(`the stand-in GPU facts are not valid: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')}`);
  const { backend, cards, unifiedMemory } = parsed.data;
  const cardsOut = backend === 'cpu' ? [] : cards;
  const sum = (k: 'vramTotal' | 'vramFree') => cardsOut.reduce((a, c) => a + c[k], 0);
  return { backend, cards: cardsOut, vram: { total: sum('vramTotal'), free: sum('vramFree') }, unifiedMemory: backend !== 'cpu' && unifiedMemory, standIn: true };
}
const GpuStandIn = z.object({
  backend: GpuBackend,
  cards: z.array(z.object({ name: z.string(), vramTotal: z.number().nonnegative(), vramFree: z.number().nonnegative() })).default([]),
  unifiedMemory: z.boolean().default(false),
});

export interface LoadPlan {
  gpuLayers: number;
  totalLayers: number;
  modelRam: number;
  modelVram: number;
  contextRam: number;
  contextVram: number;
  /** Totals of the plan. */
  ram: number;
  vram: number;
  ramFree: number;
  vramFree: number;
  /** The GPU facts the plan was made against. */
  gpu: GpuFacts;
  /** Whether creating the context passes the load's own memory check (resolveContextContextSize). */
  contextFits: boolean;
}

/**
 * The plan the load would choose for `contextSize` tokens × `sequences` on `llama`, or against a
 * RAM budget and stand-in GPU facts. On the real facts the resolver measures as the load does
 * (it simulates the model on the process's backend); on stand-in facts for a backend this process
 * does not run, it cannot simulate there, and uses node-llama-cpp's own estimate from the header
 * (what the resolver falls back to wherever simulation is unavailable).
 */
export async function planLoad(
  insights: GgufInsights,
  llama: Llama,
  opts: { contextSize: number; sequences: number; budget?: MemoryBudget; gpu?: GpuFacts; /** Skip the context check (already known to fail); it costs seconds on a huge context. */ checkContext?: boolean },
): Promise<LoadPlan> {
  const { contextSize, sequences, budget, checkContext = true } = opts;
  const gpu = opts.gpu ?? (await readGpuFacts(llama));
  const ramFree = budget ? budget.ram : (await llama.getRamState()).free;
  const standIn = opts.gpu?.standIn === true;
  // Simulating on this process's backend would measure the wrong device for stand-in facts naming
  // another one (a CPU build puts every layer in RAM): estimate from the header instead
  // (test/unit/models/gpu-fit.test.ts fails if that stops working).
  if (standIn && gpu.backend !== (llama.gpu === false ? 'cpu' : llama.gpu)) withoutSimulation(insights);
  const vramState = { total: gpu.vram.total, free: gpu.vram.free, unifiedSize: gpu.unifiedMemory ? gpu.vram.total : 0 };
  const gpuOverrides = standIn
    ? { getVramState: async () => vramState, llamaGpu: gpu.backend === 'cpu' ? (false as const) : gpu.backend, llamaSupportsGpuOffloading: gpu.backend !== 'cpu' }
    : {};
  const ramOverrides = budget
    ? { getRamState: async () => ({ total: budget.ram, free: budget.ram }), getSwapState: async () => ({ total: 0, free: 0 }) }
    : {};
  const resolver = insights.configurationResolver;
  // The call LlamaModel makes when it loads, with the same gpuLayers option.
  const { gpuLayers } = await resolver.resolveModelGpuLayersV2(loadGpuLayers(contextSize, sequences), gpuOverrides);
  const scored = await resolver.resolveAndScoreConfig({ targetGpuLayers: gpuLayers, targetContextSize: contextSize * sequences }, { ...gpuOverrides, ...ramOverrides });
  const v = scored.resolvedValues;
  // The check LlamaContext makes before it allocates: throws InsufficientMemoryError when it won't fit.
  let contextFits = true;
  if (checkContext) {
    try {
      await resolver.resolveContextContextSize(contextSize, {
        modelGpuLayers: gpuLayers,
        modelTrainContextSize: insights.trainContextSize ?? contextSize,
        sequences,
        ...(standIn ? { getVramState: gpuOverrides.getVramState, llamaGpu: gpuOverrides.llamaGpu } : {}),
        ...ramOverrides,
      });
    } catch (e) {
      if (!isInsufficientMemory(e)) throw e;
      contextFits = false;
    }
  }
  return {
    gpuLayers,
    totalLayers: insights.totalLayers,
    modelRam: v.modelRamUsage,
    modelVram: v.modelVramUsage,
    contextRam: v.contextRamUsage,
    contextVram: v.contextVramUsage,
    ram: v.totalRamUsage,
    vram: v.totalVramUsage,
    ramFree,
    vramFree: gpu.vram.free,
    gpu,
    contextFits,
  };
}

/**
 * The least a context of `shape` takes (its KV cache and output buffers: node-llama-cpp's header
 * estimate without the compute graph, which llama.cpp allocates whatever else it needs) and the
 * weights, against all the RAM, swap and VRAM free. Worked out from the header in milliseconds,
 * where the resolver's own check simulates the context: for millions of tokens that took minutes
 * of the machine's memory before it said "too large".
 */
async function contextFloor(insights: GgufInsights, llama: Llama, shape: { contextSize: number; sequences: number }) {
  const context = insights.estimateContextResourceRequirements({ contextSize: shape.contextSize, sequences: shape.sequences, modelGpuLayers: 0, includeGraphOverhead: false });
  const weights = insights.estimateModelResourceRequirements({ gpuLayers: 0 });
  const [ram, swap, vram] = await Promise.all([llama.getRamState(), llama.getSwapState(), llama.gpu === false ? null : llama.getVramState()]);
  const contextBytes = context.cpuRam + context.gpuVram;
  const weightBytes = weights.cpuRam + weights.gpuVram;
  return { contextBytes, weightBytes, ramFree: ram.free, vramFree: vram?.free ?? 0, beyond: contextBytes + weightBytes > ram.free + (swap.allocated - swap.used) + (vram?.free ?? 0) };
}

/**
 * An InsufficientMemoryError when `shape`'s context cannot fit in all the memory free whatever
 * the load does (contextFloor), else null: checked before the model loads, so such a context is
 * refused at once.
 */
export async function contextBeyondMemory(modelPath: string, llama: Llama, shape: { contextSize: number; sequences: number }): Promise<InsufficientMemoryError | null> {
  const { GgufInsights, InsufficientMemoryError } = await nodeLlamaCpp();
  const floor = await contextFloor(await GgufInsights.from(await readGgufInfoOnce(modelPath), llama), llama, shape);
  return floor.beyond ? new InsufficientMemoryError(`a context of ${shape.contextSize} tokens × ${shape.sequences} sequences needs more than all the memory free`) : null;
}

/**
 * "8.1 GiB (7.5 GiB weights + 560.0 MiB for the context) but only 2.0 GiB RAM is free": what
 * loading `modelPath` with this context needs against what is free, for an out-of-memory message.
 * A context beyond all the memory free says the least it needs ("at least"), without simulating it.
 */
export async function memoryShortfall(modelPath: string, llama: Llama, shape: { contextSize: number; sequences: number }): Promise<string> {
  const info = await readGgufInfoOnce(modelPath);
  const insights = await (await nodeLlamaCpp()).GgufInsights.from(info, llama);
  const free = (ram: number, vram: number) => (llama.gpu === false ? `only ${formatBytes(ram)} RAM is free` : `${formatBytes(ram)} RAM and ${formatBytes(vram)} VRAM are free`);
  const floor = await contextFloor(insights, llama, shape);
  if (floor.beyond)
    return `at least ${formatBytes(floor.contextBytes + floor.weightBytes)} (${formatBytes(floor.weightBytes)} weights + ${formatBytes(floor.contextBytes)} for the context) but ${free(floor.ramFree, floor.vramFree)}`;
  const plan = await planLoad(insights, llama, { ...shape, checkContext: false });
  return `about ${formatBytes(plan.ram + plan.vram)} (${formatBytes(plan.modelRam + plan.modelVram)} weights + ${formatBytes(plan.contextRam + plan.contextVram)} for the context) but ${free(plan.ramFree, plan.vramFree)}`;
}
