// Hardware facts and whether a model fits: the GPU-layer plan and memory the load itself would
// choose (node-llama-cpp's configuration resolver, llama/fit.ts), and a warning to show before
// loading one that won't fit. Header only: a 7B model is estimated without reading its weights.
import { availableParallelism, freemem, totalmem } from 'node:os';
import { basename } from 'node:path';
import type { Llama } from 'node-llama-cpp';
import type { FitEstimate, FitOptions, GpuFacts, HardwareInfo } from '../common/contract/models';
import { FitOptions as FitOptionsSchema } from '../common/contract/models';
import { nodeLlamaCpp } from '../llama/module';
import { defaultThreads, getLlamaRuntime, parseGpuStandIn, planLoad, readGgufInfoOnce, readGpuFacts, type LoadPlan, type MemoryBudget } from '../llama';
import { formatBytes } from '../common/bytes';
import { gpuLabel } from '../common/gpu';
import { inspectModelFile } from './gguf';

export interface EstimateFitOptions extends FitOptions {
  /** Pretend this much RAM is free instead of asking the machine (llama/fit.ts MemoryBudget). */
  budget?: MemoryBudget;
  /** Stand-in GPU facts instead of the machine's (default: $TATRA_GPU_STANDIN, else the machine's). */
  gpu?: GpuFacts;
  /** The Llama to estimate with (default: the process's one). */
  llama?: Llama;
}

/**
 * The GPU facts fit checks are made against: $TATRA_GPU_STANDIN's stand-in when set (tests and
 * what-ifs; docs/gpu.md), else the process's Llama's. Loads always use the machine's own.
 */
export async function gpuFacts(llama?: Llama): Promise<GpuFacts> {
  const standIn = process.env.TATRA_GPU_STANDIN;
  if (standIn) return parseGpuStandIn(standIn);
  return readGpuFacts(llama ?? (await getLlamaRuntime()));
}

/** The GPU facts (backend, cards, VRAM), RAM (total/free) and CPU cores. Uses the process's one Llama. */
export async function hardwareInfo(llama?: Llama, gpu?: GpuFacts): Promise<HardwareInfo> {
  return {
    gpu: gpu ?? (await gpuFacts(llama)),
    ram: { total: totalmem(), free: freemem() },
    cpuCores: availableParallelism(),
    threads: defaultThreads(),
  };
}

/**
 * Where the plan puts the layers, in plain words: all on the GPU, some (and why the rest are on
 * the CPU: slower, but it loads), or none.
 */
export function describeOffload(plan: Pick<LoadPlan, 'gpuLayers' | 'totalLayers' | 'gpu'>): string {
  const { gpuLayers, totalLayers, gpu } = plan;
  const where = gpuLabel(gpu);
  if (gpu.backend === 'cpu') return `all ${totalLayers} layers on the CPU: no GPU backend here`;
  const free = `${formatBytes(gpu.vram.free)} free ${gpu.unifiedMemory ? 'memory' : 'VRAM'}`;
  if (gpuLayers === 0) return `all ${totalLayers} layers on the CPU: none fits in the ${free} of ${where}, so it runs slower, but it runs`;
  if (gpuLayers >= totalLayers) return `all ${totalLayers} layers on the GPU: ${where}`;
  return `${gpuLayers} of ${totalLayers} layers on the GPU, ${where}; the other ${totalLayers - gpuLayers} on the CPU: the whole model does not fit in ${free}, so it runs slower, but it runs`;
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
  const info = await readGgufInfoOnce(modelPath);
  const name = (info.metadata.general as { name?: string }).name?.trim() || basename(modelPath).replace(/\.gguf$/i, '');
  const llama = options.llama ?? (await getLlamaRuntime());
  const insights = await (await nodeLlamaCpp()).GgufInsights.from(info, llama);
  const gpu = options.gpu ?? (await gpuFacts(llama));
  // The load's own resolver, with the load's own gpuLayers option (llama/fit.ts).
  const plan = await planLoad(insights, llama, { contextSize, sequences, budget: options.budget, gpu });
  const { gpuLayers, totalLayers, ramFree, vramFree } = plan;
  const hasGpu = gpu.backend !== 'cpu';
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
  } else if (mode === 'partial' || (hasGpu && mode === 'cpu')) {
    warning = `${name}: ${describeOffload(plan)}`;
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
    gpu,
    offload: describeOffload(plan),
    plan: mode,
    fits,
    ramFree,
    vramFree,
    warning,
  };
}
