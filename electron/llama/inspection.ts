// A GGUF file is inspected once per version of it (its path, size, modification time and inode):
// the job that records a model, the resume that checks it is still the same file, the load that
// sizes its context and the library that lists it all get that one inspection instead of parsing
// and hashing the header again (a parse and a hash of the first MiB each: ~0.5 s on a large model).
// A file replaced or rewritten is a new version and is inspected afresh; a refusal is not kept.
import { realpath, stat } from 'node:fs/promises';
import { inspectGguf, type GgufInspection, type InspectGgufOptions } from './gguf';

/** Versions kept; the oldest goes first (a library of a few hundred models fits). */
const KEEP = 512;

const inspections = new Map<string, Promise<GgufInspection>>();

/** What identifies one version of a file, or null when it cannot be read (inspectGguf words that). */
async function versionKey(path: string, checkData: boolean): Promise<string | null> {
  try {
    const real = await realpath(path);
    const st = await stat(real);
    return JSON.stringify([real, st.size, st.mtimeMs, st.ino, checkData]);
  } catch {
    return null;
  }
}

/** inspectGguf, once per version of the file; the inspection names the path as given. */
export async function inspectGgufOnce(path: string, opts: InspectGgufOptions = {}): Promise<GgufInspection> {
  const key = await versionKey(path, opts.checkData !== false);
  if (key === null) return inspectGguf(path, opts);
  let pending = inspections.get(key);
  if (!pending) {
    pending = inspectGguf(path, opts);
    inspections.set(key, pending);
    if (inspections.size > KEEP) inspections.delete(inspections.keys().next().value!);
    // A refusal is not kept: the file may be fixed under the same name and time stamp.
    pending.catch(() => inspections.delete(key));
  }
  const inspection = await pending;
  return inspection.path === path ? inspection : { ...inspection, path };
}

/** A loaded model's identity in cache keys: the path as given and its header hash. */
export function llamaBackendId(inspection: Pick<GgufInspection, 'path' | 'headerHash'>): string {
  return `${inspection.path}#${inspection.headerHash.slice(0, 12)}`;
}
