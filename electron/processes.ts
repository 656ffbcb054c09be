// Processes on this machine: whether a pid still lives, and temp folders a process owns. A folder
// is named <prefix><pid>-<random>, so one left behind by a process that was SIGKILLed (or crashed
// before its cleanup ran) can be told from one a live process is using, and swept.
// A leaf like paths.ts: Node only, usable from every main-process layer (llama included).
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether a process with this pid runs here (EPERM: it runs, as another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Folders named before they carried a pid are swept once they are this old (nothing still uses them). */
export const UNOWNED_TEMP_MAX_AGE_MS = 24 * 60 * 60 * 1000;

const swept = new Set<string>();

/**
 * Removes `<prefix>*` folders under `parent` (default the OS temp folder) whose owning process is
 * dead, and pid-less ones older than UNOWNED_TEMP_MAX_AGE_MS. A live process's folder, this
 * process's included, is never touched. Returns the paths removed.
 */
export function sweepStaleTempDirs(prefix: string, opts: { parent?: string; now?: number } = {}): string[] {
  const parent = opts.parent ?? tmpdir();
  const now = opts.now ?? Date.now();
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const path = join(parent, name);
    const owner = /^(\d+)-/.exec(name.slice(prefix.length));
    try {
      if (!statSync(path).isDirectory()) continue;
      const stale = owner ? Number(owner[1]) !== process.pid && !pidAlive(Number(owner[1])) : now - statSync(path).mtimeMs > UNOWNED_TEMP_MAX_AGE_MS;
      if (!stale) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Gone already, or not ours to remove (another user's): leave it.
    }
  }
  return removed;
}

/**
 * A new temp folder `<prefix><pid>-XXXXXX` owned by this process. The first call for a prefix in a
 * process also sweeps that prefix's folders left by dead processes. Remove it when done; if the
 * process is killed first, the next process to make one removes it.
 */
export function ownedTempDir(prefix: string, parent: string = tmpdir()): string {
  const key = `${parent}\0${prefix}`;
  if (!swept.has(key)) {
    swept.add(key);
    sweepStaleTempDirs(prefix, { parent });
  }
  return mkdtempSync(join(parent, `${prefix}${process.pid}-`));
}
