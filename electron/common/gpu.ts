// How the GPU facts read to a person, the same in the CLI, the API's sentences and the Models view.
import type { GpuBackend, GpuFacts } from './contract/models';
import { formatBytes } from './bytes';

const BACKEND_LABEL: Record<GpuBackend, string> = { cuda: 'CUDA', metal: 'Metal', vulkan: 'Vulkan', cpu: 'CPU' };

/** "CUDA", "Metal", "Vulkan" or "CPU". */
export function backendLabel(backend: GpuBackend): string {
  return BACKEND_LABEL[backend];
}

/** "NVIDIA H100 + NVIDIA H100 (CUDA)", "Apple M2 Max (Metal)", or "CPU only". */
export function gpuLabel(gpu: GpuFacts): string {
  if (gpu.backend === 'cpu') return 'CPU only';
  const cards = gpu.cards.map((c) => c.name).join(' + ') || 'GPU';
  return `${cards} (${backendLabel(gpu.backend)})`;
}

/** One line per card with its free VRAM where known, then the sum when there are several. */
export function vramLines(gpu: GpuFacts): string[] {
  if (gpu.backend === 'cpu') return [];
  const memory = gpu.unifiedMemory ? 'memory (shared with the CPU)' : 'VRAM';
  const lines = gpu.cards.map((c) => (c.vramFree !== null && c.vramTotal !== null ? `${c.name}: ${formatBytes(c.vramFree)} of ${formatBytes(c.vramTotal)} ${memory} free` : `${c.name}`));
  if (gpu.cards.length !== 1) lines.push(`${formatBytes(gpu.vram.free)} of ${formatBytes(gpu.vram.total)} ${memory} free in all`);
  return lines;
}
