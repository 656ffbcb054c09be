// Hardware facts and whether a model fits: memory for weights plus context (node-llama-cpp's
// GgufInsights), the GPU-layer plan, and a warning to show before loading one that won't fit.
// Header only: a 7B model is estimated without reading its weights.
import { availableParallelism, freemem, totalmem } from 'node:os';
import { basename } from 'node:path';
import { GgufInsights, readGgufFileInfo, type GgufFileInfo, type Llama } from 'node-llama-cpp';
import { UserError } from '../common/errors';
import type { FitEstimate, FitOptions, HardwareInfo } from '../common/contract/models';
import { FitOptions as FitOptionsSchema } from '../common/contract/models';
import { defaultThreads, getLlamaRuntime } from '../llama';
import { checkHeaderFields, inspectModelFile } from './gguf';

export interface EstimateFitOptions extends FitOptions {
  /**
   * Pretend this much memory is free (bytes) instead of asking the machine: for tests and
   * "what if" questions. `vram` 0 or omitted with a budget means no GPU.
   */
  budget?: { ram: number; vram?: number };
  /** The Llama to estimate with (default: the process's one). */
  llama?: Llama;
}

/** Leave this share of free memory untouched: the OS, the UI and estimation error need it. */
const HEADROOM = 0.9;

function gb(n: number): string {
  return `${(n / 1024 ** 3).toFixed(n < 1024 ** 3 ? 2 : 1)} GB`;
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
  await checkHeaderFields(modelPath);
  let info: GgufFileInfo;
  try {
    info = await readGgufFileInfo(modelPath, { logWarnings: false, ignoreKeys: ['tokenizer.ggml.tokens', 'tokenizer.ggml.merges', 'tokenizer.ggml.token_type', 'tokenizer.ggml.scores'] });
    if (!info.metadata?.general?.architecture) throw new Error('no architecture');
  } catch {
    // Let the one validator word the error (missing, not GGUF, damaged header).
    await inspectModelFile(modelPath, { checkData: false });
    throw new UserError(`cannot read the GGUF header of ${modelPath}`, 'gguf_invalid');
  }
  const name = (info.metadata.general as { name?: string }).name?.trim() || basename(modelPath).replace(/\.gguf$/i, '');
  const llama = options.llama ?? (await getLlamaRuntime());
  const insights = await GgufInsights.from(info, llama);
  const totalLayers = insights.totalLayers;

  const hasGpu = options.budget ? (options.budget.vram ?? 0) > 0 : llama.gpu !== false;
  const ramFree = options.budget ? options.budget.ram : freemem();
  const vramFree = options.budget ? (options.budget.vram ?? 0) : hasGpu ? (await llama.getVramState()).free : 0;

  // The synchronous (v1) estimates are instant and, for the weights, equal to v2 (measured); v2's
  // context estimate simulates the real backend (more conservative, ~1 s a call), so it answers
  // about this machine, and v1 answers what-if budgets (where the backend is not the real one).
  const need = async (gpuLayers: number, precise = false) => {
    const m = insights.estimateModelResourceRequirements({ gpuLayers });
    const args = { contextSize, modelGpuLayers: gpuLayers, sequences, batchSize: Math.min(512, contextSize) };
    const c = precise ? await insights.estimateContextResourceRequirementsV2(args) : insights.estimateContextResourceRequirements(args);
    return { ram: m.cpuRam + c.cpuRam, vram: m.gpuVram + c.gpuVram, ctx: c.cpuRam + c.gpuVram };
  };
  const precise = !options.budget;

  // Most layers whose weights and cache fit in free VRAM: monotonic in the layer count, so bisect.
  let gpuLayers = 0;
  if (hasGpu) {
    let lo = 0;
    let hi = totalLayers;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if ((await need(mid, precise)).vram <= vramFree * HEADROOM) lo = mid;
      else hi = mid - 1;
    }
    gpuLayers = lo;
  }
  const plan = await need(gpuLayers, precise);
  const cpuOnly = gpuLayers === 0 ? plan : await need(0, precise);
  const modelBytes = insights.modelSize;
  const contextBytes = cpuOnly.ctx;
  const totalBytes = modelBytes + contextBytes;
  const fits = plan.ram <= ramFree * HEADROOM && plan.vram <= Math.max(0, vramFree * HEADROOM);
  const mode: FitEstimate['plan'] = gpuLayers === 0 ? 'cpu' : gpuLayers >= totalLayers ? 'gpu' : 'partial';

  let warning: string | null = null;
  const shape = `${contextSize.toLocaleString('en-US')} tokens × ${sequences} sequence${sequences === 1 ? '' : 's'}`;
  if (!fits) {
    const where = hasGpu ? `${gb(ramFree)} RAM and ${gb(vramFree)} VRAM are free` : `only ${gb(ramFree)} RAM is free`;
    warning = `${name} will not fit: it needs about ${gb(hasGpu ? plan.ram + plan.vram : plan.ram)} (${gb(modelBytes)} weights + ${gb(contextBytes)} for ${shape}) but ${where}; use a smaller quantisation or model, a shorter context or fewer sequences`;
  } else if (plan.ram > ramFree * 0.75) {
    warning = `${name} only just fits (${gb(plan.ram)} of ${gb(ramFree)} free RAM); other programs may push it into swap`;
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
