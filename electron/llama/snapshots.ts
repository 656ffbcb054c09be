// Shared-prefix snapshots: the KV state of a sequence holding exactly a shared prefix (the
// evaluator's instruction and examples), saved to a file once and loaded into other sequences
// instead of decoding the prefix again. node-llama-cpp 3.21.1 has no sequence-to-sequence copy
// (the internal `_copyStateFromOtherSequence` arrived later), so the state goes through its
// public saveStateToFile/loadStateFromFile (~1 ms for 300 tokens of a tiny model).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ownedTempDir } from '../processes';

/** Each snapshot is a file holding the prefix's KV cache (tens of MB for a 7B model and a long prefix). */
const MAX_SNAPSHOTS = 6;

export interface PrefixSnapshot {
  readonly file: string;
  /** Tokens it holds. */
  readonly length: number;
  /** Resolves true once the file is written, false when it never will be. */
  readonly ready: Promise<boolean>;
  /** Whether `ready` has resolved. */
  readonly settled: boolean;
}

interface Entry extends PrefixSnapshot {
  settled: boolean;
}

/** The snapshots of one backend, by key (the prefix's tokens), the oldest evicted past MAX_SNAPSHOTS. */
export class PrefixSnapshots {
  private readonly entries = new Map<string, Entry>();
  private dir: string | undefined;
  private counter = 0;

  get(key: string): PrefixSnapshot | undefined {
    return this.entries.get(key);
  }

  /**
   * Starts the snapshot of a `length`-token prefix under `key`; the caller writes `file` and calls
   * finish(true), or finish(false) to drop the entry (later requests decode the prefix themselves).
   */
  begin(key: string, length: number): { file: string; finish(ok: boolean): void } {
    // Named with this pid: a SIGKILLed process's snapshots are swept by the next one (processes.ts).
    this.dir ??= ownedTempDir('tatra-prefix-');
    const file = join(this.dir, `prefix-${++this.counter}.bin`);
    let resolve!: (ok: boolean) => void;
    const entry: Entry = { file, length, ready: new Promise<boolean>((r) => (resolve = r)), settled: false };
    this.entries.set(key, entry);
    this.evict();
    return {
      file,
      finish: (ok) => {
        if (entry.settled) return;
        entry.settled = true;
        if (!ok && this.entries.get(key) === entry) this.entries.delete(key);
        resolve(ok);
      },
    };
  }

  /** Removes every file. */
  dispose(): void {
    this.entries.clear();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  private evict(): void {
    while (this.entries.size > MAX_SNAPSHOTS) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldestKey);
      void oldest.ready.then(() => rmSync(oldest.file, { force: true }));
    }
  }
}
