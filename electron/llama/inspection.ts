// A GGUF file is inspected once per version of it (its path, size, modification time and inode):
// the job that records a model, the resume that checks it is still the same file, the load that
// sizes its context and the library that lists it all get that one inspection instead of parsing
// and hashing the header again (a parse and a hash of the first MiB each: ~0.5 s on a large model).
// node-llama-cpp's description of the header (what a fit estimate reads) is kept the same way. A file
// replaced or rewritten is a new version and is inspected afresh; a refusal is not kept.
import { realpath, stat } from 'node:fs/promises';
import type { GgufFileInfo } from 'node-llama-cpp';
import { inspectGguf, readGgufInfo, type GgufInspection, type InspectGgufOptions } from './gguf';

/** Versions kept of each fact; the oldest goes first (a library of a few hundred models fits). */
const KEEP = 512;

const inspections = new Map<string, Promise<GgufInspection>>();
const infos = new Map<string, Promise<GgufFileInfo>>();

/** What identifies one version of a file, or null when it cannot be read (the work itself words that). */
async function versionKey(path: string, variant: unknown): Promise<string | null> {
  try {
    const real = await realpath(path);
    const st = await stat(real);
    return JSON.stringify([real, st.size, st.mtimeMs, st.ino, variant]);
  } catch {
    return null;
  }
}

/** `work` once per version of the file at `path`, kept in `cache`; a refusal is not kept. */
async function oncePerVersion<T>(cache: Map<string, Promise<T>>, path: string, variant: unknown, work: () => Promise<T>): Promise<T> {
  const key = await versionKey(path, variant);
  if (key === null) return work();
  let pending = cache.get(key);
  if (!pending) {
    pending = work();
    cache.set(key, pending);
    if (cache.size > KEEP) cache.delete(cache.keys().next().value!);
    // A refusal is not kept: the file may be fixed under the same name and time stamp.
    pending.catch(() => cache.delete(key));
  }
  return pending;
}

/** inspectGguf, once per version of the file; the inspection names the path as given. */
export async function inspectGgufOnce(path: string, opts: InspectGgufOptions = {}): Promise<GgufInspection> {
  const inspection = await oncePerVersion(inspections, path, opts.checkData !== false, () => inspectGguf(path, opts));
  return inspection.path === path ? inspection : { ...inspection, path };
}

/**
 * readGgufInfo, once per version of the file: a fit estimate (models.fit, asked for each model a
 * picker shows) read and parsed the whole header twice on every call, a second or more for a
 * model with a large vocabulary, and several on a busy machine. Callers only read it.
 */
export function readGgufInfoOnce(path: string): Promise<GgufFileInfo> {
  return oncePerVersion(infos, path, 'info', () => readGgufInfo(path));
}

/** A loaded model's identity in cache keys: the path as given and its header hash. */
export function llamaBackendId(inspection: Pick<GgufInspection, 'path' | 'headerHash'>): string {
  return `${inspection.path}#${inspection.headerHash.slice(0, 12)}`;
}
