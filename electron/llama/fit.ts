// What loading a model takes, worked out by node-llama-cpp's own configuration resolver with the
// options the real load passes (loadGpuLayers below). The fit badge, `tatra models fit`, Compare's
// warnings and the out-of-memory message therefore say what the load will do, rather than a
// separate hand-made estimate that can disagree with it.
import { GgufInsights, InsufficientMemoryError, type Llama } from 'node-llama-cpp';
import { readGgufInfo } from './gguf';
import { formatBytes } from '../common/bytes';

/** The gpuLayers option every load passes: as many layers as fit in VRAM with room for the whole context. */
export function loadGpuLayers(contextSize: number, sequences: number): { fitContext: { contextSize: number } } {
  return { fitContext: { contextSize: contextSize * sequences } };
}

/**
 * Pretend this much memory is free (bytes) instead of asking the machine, for what-if questions
 * and tests. The resolver measures on the process's backend, so a VRAM budget only means
 * something where the Llama has a GPU; on a CPU-only Llama the plan is CPU whatever `vram` says.
 */
export interface MemoryBudget {
  ram: number;
  vram?: number;
}

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
  /** Whether creating the context passes the load's own memory check (resolveContextContextSize). */
  contextFits: boolean;
}

/** The plan the load would choose for `contextSize` tokens × `sequences` on `llama` (or a budget). */
export async function planLoad(
  insights: GgufInsights,
  llama: Llama,
  opts: { contextSize: number; sequences: number; budget?: MemoryBudget; /** Skip the context check (already known to fail); it costs seconds on a huge context. */ checkContext?: boolean },
): Promise<LoadPlan> {
  const { contextSize, sequences, budget, checkContext = true } = opts;
  const hasGpu = llama.gpu !== false;
  const vramState = budget ? { total: budget.vram ?? 0, free: hasGpu ? (budget.vram ?? 0) : 0, unifiedSize: 0 } : hasGpu ? await llama.getVramState() : { total: 0, free: 0, unifiedSize: 0 };
  const ramFree = budget ? budget.ram : (await llama.getRamState()).free;
  const overrides = budget
    ? {
        getVramState: async () => vramState,
        getRamState: async () => ({ total: budget.ram, free: budget.ram }),
        getSwapState: async () => ({ total: 0, free: 0 }),
      }
    : {};
  const resolver = insights.configurationResolver;
  // The call LlamaModel makes when it loads, with the same gpuLayers option.
  const { gpuLayers } = await resolver.resolveModelGpuLayersV2(loadGpuLayers(contextSize, sequences), overrides.getVramState ? { getVramState: overrides.getVramState } : {});
  const scored = await resolver.resolveAndScoreConfig({ targetGpuLayers: gpuLayers, targetContextSize: contextSize * sequences }, overrides);
  const v = scored.resolvedValues;
  // The check LlamaContext makes before it allocates: throws InsufficientMemoryError when it won't fit.
  let contextFits = true;
  if (checkContext) {
    try {
      await resolver.resolveContextContextSize(contextSize, {
        modelGpuLayers: gpuLayers,
        modelTrainContextSize: insights.trainContextSize ?? contextSize,
        sequences,
        ...overrides,
      });
    } catch (e) {
      if (!(e instanceof InsufficientMemoryError)) throw e;
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
    vramFree: vramState.free,
    contextFits,
  };
}

/**
 * "8.1 GiB (7.5 GiB weights + 560.0 MiB for the context) but only 2.0 GiB RAM is free": what
 * loading `modelPath` with this context needs against what is free, for an out-of-memory message.
 */
export async function memoryShortfall(modelPath: string, llama: Llama, shape: { contextSize: number; sequences: number }): Promise<string> {
  const info = await readGgufInfo(modelPath);
  const plan = await planLoad(await GgufInsights.from(info, llama), llama, { ...shape, checkContext: false });
  const free = llama.gpu === false ? `only ${formatBytes(plan.ramFree)} RAM is free` : `${formatBytes(plan.ramFree)} RAM and ${formatBytes(plan.vramFree)} VRAM are free`;
  return `${formatBytes(plan.ram + plan.vram)} (${formatBytes(plan.modelRam + plan.modelVram)} weights + ${formatBytes(plan.contextRam + plan.contextVram)} for the context) but ${free}`;
}
