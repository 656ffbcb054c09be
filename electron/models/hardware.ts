// Hardware facts and whether a model fits: the GPU-layer plan and memory the load itself would
// choose (node-llama-cpp's configuration resolver, llama/fit.ts), and a warning to show before
// loading one that won't fit. Header only: a 7B model is estimated without reading its weights.
import { availableParallelism, freemem, totalmem } from 'node:os';
import { basename } from 'node:path';
import { GgufInsights, type Llama } from 'node-llama-cpp';
import type { FitEstimate, FitOptions, HardwareInfo } from '../common/contract/models';
import { FitOptions as FitOptionsSchema } from '../common/contract/models';
import { defaultThreads, getLlamaRuntime, planLoad, readGgufInfo, type MemoryBudget } from '../llama';
import { formatBytes } from '../common/bytes';
import { inspectModelFile } from './gguf';

export interface EstimateFitOptions extends FitOptions {
  /** Pretend this much memory is free instead of asking the machine (llama/fit.ts MemoryBudget). */
  budget?: MemoryBudget;
  /** The Llama to estimate with (default: the process's one). */
  llama?: Llama;
}

/** GPU kind and names, VRAM and RAM (total/free), CPU cores. Uses the process's one Llama. */
export async function hardwareInfo(llamaArg?: Llama): Promise<HardwareInfo> {
  const llama = llamaArg ?? (await getLlamaRuntime());
  const gpu = llama.gpu === false ? 'cpu' : llama.gpu;
  let vram: HardwareInfo['vram'] = null;
  let gpuDevices: string[] = [];
  if (llama.gpu !== false) {
    const v = await llama.getVramState();
    vram = { total: v.total, free: v.free };
    gpuDevices = await llama.getGpuDeviceNames();
  }
  return {
    gpu,
    gpuDevices,
    vram,
    ram: { total: totalmem(), free: freemem() },
    cpuCores: availableParallelism(),
    threads: defaultThreads(),
  };
}

/**
 * Memory a model needs with `contextSize` tokens × `sequences`, the GPU layers that fit in free
 * VRAM (the rest on CPU), and whether the whole fits. Reads the header only (a header-only or
 * truncated file can still be estimated). UserError for a missing or non-GGUF file.
 */
export async function estimateFit(modelPath: string, options: EstimateFitOptions = {}): Promise<FitEstimate> {
  const { contextSize, sequences } = FitOptionsSchema.parse({ contextSize: options.contextSize, sequences: options.sequences });
  // A header-only file can still be estimated; the one validator words every refusal.
  await inspectModelFile(modelPath, { checkData: false });
  const info = await readGgufInfo(modelPath);
  const name = (info.metadata.general as { name?: string }).name?.trim() || basename(modelPath).replace(/\.gguf$/i, '');
  const llama = options.llama ?? (await getLlamaRuntime());
  const insights = await GgufInsights.from(info, llama);
  // The load's own resolver, with the load's own gpuLayers option (llama/fit.ts).
  const plan = await planLoad(insights, llama, { contextSize, sequences, budget: options.budget });
  const { gpuLayers, totalLayers, ramFree, vramFree } = plan;
  const hasGpu = llama.gpu !== false;
  const modelBytes = insights.modelSize;
  const contextBytes = plan.contextRam + plan.contextVram;
  const totalBytes = modelBytes + contextBytes;
  const fits = plan.contextFits && plan.ram <= ramFree && plan.vram <= vramFree;
  const mode: FitEstimate['plan'] = gpuLayers === 0 ? 'cpu' : gpuLayers >= totalLayers ? 'gpu' : 'partial';

  let warning: string | null = null;
  const shape = `${contextSize.toLocaleString('en-US')} tokens × ${sequences} sequence${sequences === 1 ? '' : 's'}`;
  if (!fits) {
    const where = hasGpu ? `${formatBytes(ramFree)} RAM and ${formatBytes(vramFree)} VRAM are free` : `only ${formatBytes(ramFree)} RAM is free`;
    warning = `${name} will not fit: it needs about ${formatBytes(plan.ram + plan.vram)} (${formatBytes(modelBytes)} weights + ${formatBytes(contextBytes)} for ${shape}) but ${where}; use a smaller quantisation or model, a shorter context or fewer sequences`;
  } else if (plan.ram > ramFree * 0.75) {
    warning = `${name} only just fits (${formatBytes(plan.ram)} of ${formatBytes(ramFree)} free RAM); other programs may push it into swap`;
  } else if (mode === 'partial') {
    warning = `${name} fits with ${gpuLayers} of ${totalLayers} layers on the GPU; the rest run on the CPU, which is slower`;
  }

  return {
    path: modelPath,
    contextSize,
    sequences,
    modelBytes,
    contextBytes,
    totalBytes,
    ramBytes: plan.ram,
    vramBytes: plan.vram,
    totalLayers,
    gpuLayers,
    plan: mode,
    fits,
    ramFree,
    vramFree,
    warning,
  };
}
