// Long text in the job database, compressed: a finished row's runs (every run's examples,
// paraphrases and votes) and a generator output in the cache are most of what a job stores, and
// they are repetitive text. Text of STORE_PLAIN_BELOW characters or more is kept as a Brotli BLOB;
// shorter text stays TEXT, and a TEXT value (every row written before compression) reads as it is,
// so old and new rows live side by side in one column (SQLite types values, not columns).
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

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
