// Long text in the job database, compressed: a finished row's runs (every run's examples,
// paraphrases and votes) and stage counts, and a generator output in the cache, are most of what
// a job stores, and they are repetitive text. Text of STORE_PLAIN_BELOW characters or more is kept as a Brotli BLOB;
// shorter text stays TEXT, and a TEXT value (every row written before compression) reads as it is,
// so old and new rows live side by side in one column (SQLite types values, not columns).
import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type Database from 'better-sqlite3';

/** Below this many characters compression gains too little to be worth it. */
export const STORE_PLAIN_BELOW = 200;

/** What to write for `text`: the text itself when short, else its Brotli compression. */
export function packText(text: string): string | Buffer {
  if (text.length < STORE_PLAIN_BELOW) return text;
  return brotliCompressSync(Buffer.from(text, 'utf8'), {
    params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: text.length },
  });
}

/** The text a column holds, whichever way it was written. */
export function unpackText(value: string | Buffer | Uint8Array | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  return brotliDecompressSync(value).toString('utf8');
}

/**
 * The generation cache's key as stored: the first 16 bytes of the SHA-256 of the key the engine
 * names an output by (engine/cache.ts). That key is about 130 characters of hashes and fields and
 * was, before schema v10, most of the cache's bytes; its 128-bit digest tells entries apart as
 * well (a collision would need some 2^64 entries).
 */
export function storedCacheKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest().subarray(0, 16);
}

/**
 * Compresses, in place, the long text a database holds as TEXT (written before compression): a
 * row's runs and a cached generator output, page by page. Every value reads the same afterwards
 * (`unpackText`). Used by the schema's v9 migration and by `tatra jobs gc`. Returns the values
 * rewritten.
 */
export function compressStoredText(db: Database.Database, batch = 500): number {
  let rewritten = 0;
  const rows = db.prepare(`SELECT job_id, idx, runs_json FROM job_rows WHERE typeof(runs_json) = 'text' AND length(runs_json) >= ? LIMIT ?`);
  const setRow = db.prepare(`UPDATE job_rows SET runs_json = ? WHERE job_id = ? AND idx = ?`);
  const cached = db.prepare(`SELECT key, value FROM generation_cache WHERE typeof(value) = 'text' AND length(value) >= ? LIMIT ?`);
  const setCached = db.prepare(`UPDATE generation_cache SET value = ? WHERE key = ?`);
  for (;;) {
    const page = rows.all(STORE_PLAIN_BELOW, batch) as { job_id: string; idx: number; runs_json: string }[];
    if (page.length === 0) break;
    db.transaction(() => page.forEach((r) => setRow.run(packText(r.runs_json), r.job_id, r.idx)))();
    rewritten += page.length;
  }
  for (;;) {
    const page = cached.all(STORE_PLAIN_BELOW, batch) as { key: string; value: string }[];
    if (page.length === 0) break;
    db.transaction(() => page.forEach((r) => setCached.run(packText(r.value), r.key)))();
    rewritten += page.length;
  }
  return rewritten;
}
