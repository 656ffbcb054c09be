// The curated catalog (models/catalog.json): the paper's models and smaller ones for laptops.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CatalogEntry, type CatalogFit, type HardwareInfo, type MemoryState } from '../common/contract/models';
import { UserError } from '../common/errors';
import { appRoot } from '../paths';

const CatalogFile = z.object({ models: z.array(CatalogEntry) });

/** Path of models/catalog.json in the app root. */
export function catalogPath(): string {
  return join(appRoot(), 'models', 'catalog.json');
}

/** The catalog, validated (UserError when the file is broken). */
export async function loadCatalog(path: string = catalogPath()): Promise<CatalogEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read the model catalog ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, 'catalog_invalid');
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UserError(`the model catalog ${path} is not valid JSON: ${(e as Error).message}`, 'catalog_invalid');
  }
  const parsed = CatalogFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`the model catalog ${path} is invalid at ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'unknown'}`, 'catalog_invalid');
  }
  return parsed.data.models;
}

/** The catalog entry with this id, or undefined. */
export async function findCatalogEntry(id: string, path?: string): Promise<CatalogEntry | undefined> {
  return (await loadCatalog(path)).find((m) => m.id === id);
}

/**
 * Roughly what a catalog model needs before it is downloaded (no header to read yet): its
 * weights, plus the KV cache and buffers of a 4,096-token context, which for these models is a
 * few hundred MiB (256 MiB plus a tenth of the weights covers 0.5B to 8B at f16).
 */
export function catalogNeedBytes(entry: Pick<CatalogEntry, 'sizeBytes'>): number {
  return Math.round(entry.sizeBytes * 1.1 + 256 * 1024 * 1024);
}

/** "7.6B" → 7.6e9; NaN when the catalog says something else. */
function paramCount(entry: Pick<CatalogEntry, 'parameters'>): number {
  const m = /^([\d.]+)\s*([BM])$/i.exec(entry.parameters.trim());
  return m ? Number(m[1]) * (m[2]!.toUpperCase() === 'B' ? 1e9 : 1e6) : Number.NaN;
}

/** Free VRAM (null without a GPU) and RAM, from HardwareInfo (freeMemory). */
export interface FreeMemory {
  vram: MemoryState | null;
  ram: MemoryState;
}

/** The free memory catalogFit weighs, from the hardware facts. */
export function freeMemory(hw: HardwareInfo): FreeMemory {
  return { vram: hw.gpu.backend === 'cpu' ? null : hw.gpu.vram, ram: hw.ram };
}

/** Where a catalog model would run on this machine, and whether it fits at all. */
export function catalogFit(entry: Pick<CatalogEntry, 'sizeBytes'>, hw: FreeMemory): CatalogFit {
  const needBytes = catalogNeedBytes(entry);
  if (hw.vram && hw.vram.free >= needBytes) return { fits: true, where: 'gpu', needBytes, freeBytes: hw.vram.free };
  return { fits: hw.ram.free >= needBytes, where: 'cpu', needBytes, freeBytes: hw.ram.free };
}

/** On a CPU, models above this many parameters fit but run too slowly for a first hour. */
const CPU_COMFORT_PARAMS = 3.5e9;

/**
 * The model to offer a newcomer: the largest that runs on the GPU (the paper's own when it fits);
 * on a CPU alone, the largest up to about 3B that fits in half the free memory; else the smallest
 * that fits. Null when none fits.
 */
export function recommendCatalog<E extends Pick<CatalogEntry, 'id' | 'sizeBytes' | 'parameters' | 'paper'>>(entries: readonly E[], hw: FreeMemory): E | null {
  const fitting = entries.map((e) => ({ e, fit: catalogFit(e, hw) })).filter((x) => x.fit.fits);
  const bySize = (a: { e: E }, b: { e: E }) => b.e.sizeBytes - a.e.sizeBytes || Number(b.e.paper) - Number(a.e.paper);
  const gpu = fitting.filter((x) => x.fit.where === 'gpu').sort(bySize);
  if (gpu[0]) return gpu[0].e;
  const comfortable = fitting.filter((x) => paramCount(x.e) <= CPU_COMFORT_PARAMS && x.fit.needBytes <= x.fit.freeBytes / 2).sort(bySize);
  if (comfortable[0]) return comfortable[0].e;
  return [...fitting].sort((a, b) => a.e.sizeBytes - b.e.sizeBytes)[0]?.e ?? null;
}
