// What one version of a file on disk is, and facts about it worked out once and kept: whether a
// model loads without taking the process down (trial-load.ts), the hash of all its bytes
// (content-hash.ts). A version is the file's device, inode, size and modification and change
// times: any write, rename over or replacement changes one of them (the change time cannot be
// set back). Kept in memory and in the user's cache folder (state/json-file.ts: several processes
// add to it without losing each other's facts), so each is worked out once per version, not on
// every run; a cache folder that cannot be written keeps them in memory only.
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { userCacheDir } from '../paths';
import { JsonFile } from '../state/json-file';

/** The version of the file at `path` (symbolic links followed). */
export async function fileVersionKey(path: string): Promise<string> {
  const s = await stat(path, { bigint: true });
  return `${resolve(path)}\u0000${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/** Why a cache folder cannot be written to: a read-only or full home, not a fault of ours. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT']);

/** What is known in memory of one cache file: its facts, read from it once. */
interface Memory<T> {
  entries: Map<string, T>;
  loaded: Promise<void> | null;
}

/** Facts about file versions, in memory and in `<userCacheDir>/<name>`; the newest `keep` are kept. */
export class FileVersionCache<T> {
  /**
   * One memory per cache folder. Where the cache folder is is read at each use (a test or a face
   * may set it after this module loads), and what is remembered follows it: facts kept for one
   * folder are neither answered from nor written to another.
   */
  private readonly memories = new Map<string, Memory<T>>();

  constructor(
    private readonly name: string,
    private readonly fact: z.ZodType<T>,
    private readonly keep = 1000,
  ) {}

  private file(path: string): JsonFile<[string, T][]> {
    return new JsonFile(path, {
      schema: z.array(z.tuple([z.string(), this.fact])),
      empty: () => [],
      code: 'cache_invalid',
      hint: '(a cache: what it held is worked out again)',
      indent: 0,
    });
  }

  /** The current cache folder's file and its memory, read from the file once. */
  private async open(): Promise<{ path: string; memory: Memory<T> }> {
    const path = join(userCacheDir(), this.name);
    let memory = this.memories.get(path);
    if (!memory) this.memories.set(path, (memory = { entries: new Map(), loaded: null }));
    const m = memory;
    m.loaded ??= this.file(path)
      .read()
      .then(
        (list) => {
          for (const [key, value] of list) if (!m.entries.has(key)) m.entries.set(key, value);
        },
        (e: unknown) => {
          m.loaded = null; // read again once the file is fixed or deleted
          throw e;
        },
      );
    await m.loaded;
    return { path, memory: m };
  }

  async get(key: string): Promise<T | undefined> {
    return (await this.open()).memory.entries.get(key);
  }

  async set(key: string, value: T): Promise<void> {
    const { path, memory } = await this.open();
    this.add(memory.entries, key, value);
    try {
      await this.file(path).update((list) => [...this.add(new Map(list), key, value)]);
    } catch (e) {
      if (!UNWRITABLE.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
      // A read-only home: kept in memory.
    }
  }

  /** `key` becomes the newest; the oldest beyond `keep` go. */
  private add(map: Map<string, T>, key: string, value: T): Map<string, T> {
    map.delete(key);
    map.set(key, value);
    while (map.size > this.keep) map.delete(map.keys().next().value!);
    return map;
  }
}
