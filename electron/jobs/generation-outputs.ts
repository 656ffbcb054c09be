// The generator-output cache in the job database (table generation_cache): outputs kept in memory
// for a moment and written together, read back by key, and the paraphrase outputs remembered so a
// finished row's runs can refer into them (run-texts.ts) instead of holding their text again.
// JobStore (store.ts) is built on it; SqliteGenerationCache is the engine's GenerationCache over it.
import type { RowRun } from './types';
import { isDiskFull } from '../common/env-errors';
import { packText, storedCacheKey, unpackText } from './stored-text';
import { referRuns } from './run-texts';
import { paraphraseOrigin, paraphraseOriginOfKey } from '../engine/cache';
import { StoreFile } from './store-file';

/** Generator outputs are written at most this long after they are made, or when this many wait. */
const CACHE_FLUSH_MS = 100;
const CACHE_FLUSH_ENTRIES = 256;
/**
 * Paraphrase outputs remembered (by the row and run they serve) for finished rows to refer to:
 * enough for every run of thousands of rows in flight; past it the oldest are forgotten, and a
 * row whose output was forgotten holds its paraphrases itself.
 */
const PARAPHRASE_SOURCES = 50_000;

export class GenerationOutputs extends StoreFile {
  private readonly pendingCache = new Map<string, string>();
  private cacheTimer: NodeJS.Timeout | undefined;
  /** paraphraseOrigin → the cache keys of the paraphrase outputs read or written for it, oldest first. */
  private readonly paraphraseSources = new Map<string, Set<string>>();

  /**
   * A row's runs as stored: each run's paraphrases as spans of the cached output they were parsed
   * from where that output is known and on disk (run-texts.ts), else as they are; whichever of
   * the two forms is smaller once compressed (text a model repeats compresses to little).
   */
  protected packRuns(jobId: string, index: number, runs: RowRun[]): string | Buffer {
    const plain = packText(JSON.stringify(runs));
    const input = (this.statement(`SELECT input FROM job_rows WHERE job_id = ? AND idx = ?`).get(jobId, index) as { input: string } | undefined)?.input;
    if (input === undefined) return plain;
    const read = this.statement(`SELECT value FROM generation_cache WHERE key = ?`);
    const { runs: stored, referred } = referRuns(
      runs,
      (run) => [...(this.paraphraseSources.get(paraphraseOrigin(run.seed, input)) ?? [])].map(storedCacheKey),
      (entry) => unpackText((read.get(entry) as { value: string | Buffer } | undefined)?.value),
    );
    if (referred === 0) return plain;
    const packed = packText(JSON.stringify(stored));
    return packed.length < plain.length ? packed : plain;
  }

  /** Remembers that `key`'s output is at hand for the row and run its key names (packRuns). */
  private noteParaphraseSource(key: string): void {
    const origin = paraphraseOriginOfKey(key);
    if (origin === null) return;
    const keys = this.paraphraseSources.get(origin) ?? new Set<string>();
    keys.add(key);
    // Re-inserted: the newest at the end, where eviction comes last.
    this.paraphraseSources.delete(origin);
    this.paraphraseSources.set(origin, keys);
    if (this.paraphraseSources.size > PARAPHRASE_SOURCES) this.paraphraseSources.delete(this.paraphraseSources.keys().next().value!);
  }

  cacheGet(key: string): string | undefined {
    const pending = this.pendingCache.get(key);
    if (pending !== undefined) {
      this.noteParaphraseSource(key);
      return pending;
    }
    const r = this.statement(`SELECT value FROM generation_cache WHERE key = ?`).get(storedCacheKey(key)) as { value: string | Buffer } | undefined;
    const value = unpackText(r?.value) ?? undefined;
    if (value !== undefined) this.noteParaphraseSource(key);
    return value;
  }

  /**
   * Keeps a generator output, written within CACHE_FLUSH_MS together with the others of that
   * moment: one transaction each cost more than the rest of a remote call (a remote job writes
   * one per paraphrase call). What a crash loses is regenerated, never a result.
   */
  cacheSet(key: string, value: string): void {
    this.pendingCache.set(key, value);
    this.noteParaphraseSource(key);
    if (this.pendingCache.size >= CACHE_FLUSH_ENTRIES) this.flushCache();
    else if (!this.cacheTimer) {
      this.cacheTimer = setTimeout(() => this.flushCache(), CACHE_FLUSH_MS);
      this.cacheTimer.unref();
    }
  }

  /** Writes the generator outputs kept so far, in one transaction. */
  flushCache(): void {
    clearTimeout(this.cacheTimer);
    this.cacheTimer = undefined;
    if (this.pendingCache.size === 0 || !this.db.open) return;
    const entries = [...this.pendingCache];
    this.pendingCache.clear();
    const created = Math.floor(Date.now() / 1000);
    // Written once, never changed or deleted: finished rows may refer into an entry (run-texts.ts).
    // Of two processes writing one key (a remote generator may answer differently) the first stays.
    const insert = this.statement(`INSERT OR IGNORE INTO generation_cache (key, value, created) VALUES (?, ?, ?)`);
    try {
      this.db.transaction(() => {
        for (const [key, value] of entries) insert.run(storedCacheKey(key), packText(value), created);
      }).immediate();
    } catch (e) {
      // A full disk shows where results are written; here it costs regenerating these outputs.
      if (!isDiskFull(e)) throw e;
    }
  }
}

/**
 * The engine's GenerationCache (get/set by `generationCacheKey`) on the job database: generator
 * outputs survive restarts, so a re-run with another evaluator does not regenerate them.
 */
export class SqliteGenerationCache {
  hits = 0;
  misses = 0;
  writes = 0;

  constructor(private readonly store: GenerationOutputs) {}

  get(key: string): Promise<string | undefined> {
    const v = this.store.cacheGet(key);
    if (v === undefined) this.misses++;
    else this.hits++;
    return Promise.resolve(v);
  }

  set(key: string, value: string): Promise<void> {
    this.writes++;
    this.store.cacheSet(key, value);
    return Promise.resolve();
  }
}
