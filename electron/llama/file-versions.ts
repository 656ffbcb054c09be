// What one version of a file on disk is, and facts about it worked out once and kept: whether a
// model loads without taking the process down (trial-load.ts), the hash of all its bytes
// (content-hash.ts). A version is the file's device, inode, size and modification and change
// times: any write, rename over or replacement changes one of them (the change time cannot be
// set back). Kept in memory and in the user's cache folder, so each is worked out once per
// version, not on every run; a cache that cannot be written keeps them in memory only.
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { userCacheDir } from '../paths';

/** The version of the file at `path` (symbolic links followed). */
export async function fileVersionKey(path: string): Promise<string> {
  const s = await stat(path, { bigint: true });
  return `${resolve(path)}\u0000${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/** Facts about file versions, in memory and in `<userCacheDir>/<name>`; the newest `keep` are kept. */
export class FileVersionCache<T> {
  private readonly entries = new Map<string, T>();
  private loaded: Promise<void> | null = null;

  constructor(
    private readonly name: string,
    private readonly valid: (v: unknown) => v is T,
    private readonly keep = 1000,
  ) {}

  private file(): string {
    return join(userCacheDir(), this.name);
  }

  private load(): Promise<void> {
    this.loaded ??= readFile(this.file(), 'utf8').then(
      (text) => {
        const list = JSON.parse(text) as unknown;
        if (!Array.isArray(list)) return;
        for (const e of list) if (Array.isArray(e) && typeof e[0] === 'string' && this.valid(e[1]) && !this.entries.has(e[0])) this.entries.set(e[0], e[1]);
      },
      () => undefined, // none yet, or unreadable: worked out again
    );
    return this.loaded.catch(() => undefined);
  }

  async get(key: string): Promise<T | undefined> {
    await this.load();
    return this.entries.get(key);
  }

  async set(key: string, value: T): Promise<void> {
    await this.load();
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.keep) this.entries.delete(this.entries.keys().next().value!);
    try {
      await mkdir(dirname(this.file()), { recursive: true });
      const tmp = `${this.file()}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify([...this.entries]));
      await rename(tmp, this.file());
    } catch {
      /* a read-only home: kept in memory */
    }
  }
}
