// A least-recently-used map bounded by an estimate of its size in bytes, so a service left running
// for weeks holds its caches in a fixed amount of memory whatever it is asked.
import type { GenerationCache } from '../engine/cache';

export class Lru<V> {
  private readonly map = new Map<string, { value: V; bytes: number }>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  set(key: string, value: V): void {
    const bytes = this.sizeOf(value) + key.length;
    if (bytes > this.maxBytes) return;
    this.delete(key);
    this.map.set(key, { value, bytes });
    this.total += bytes;
    for (const [oldest, entry] of this.map) {
      if (this.total <= this.maxBytes) break;
      this.map.delete(oldest);
      this.total -= entry.bytes;
    }
  }

  delete(key: string): void {
    const old = this.map.get(key);
    if (!old) return;
    this.map.delete(key);
    this.total -= old.bytes;
  }

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.total;
  }
}

/** The engine's generator-output cache in a bounded LRU: run-scope examples shared by every input, paraphrases of repeated inputs. */
export class LruGenerationCache implements GenerationCache {
  private readonly lru: Lru<string>;

  constructor(maxBytes: number) {
    // UTF-16 code units, two bytes each: an estimate, not an accounting.
    this.lru = new Lru<string>(maxBytes, (text) => 2 * text.length);
  }

  async get(key: string): Promise<string | undefined> {
    return this.lru.get(key);
  }

  async set(key: string, value: string): Promise<void> {
    this.lru.set(key, value);
  }
}
