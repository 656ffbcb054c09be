// The hash of every byte of a model file: what a job records of its models and compares on resume,
// so that any change of the weights is seen (a file rewritten with the same size, head and tail
// passed the header hash, and a job then mixed two models' answers). Hashing gigabytes takes
// seconds, so it is done once per version of the file (file-versions.ts) and remembered.
import { createHash } from 'node:crypto';
import { openRegularFile } from '../regular-file';
import { z } from 'zod';
import { FileVersionCache, fileVersionKey } from './file-versions';

const hashes = new FileVersionCache('model-hashes.json', z.string().regex(/^[0-9a-f]{64}$/));
const CHUNK = 4 * 1024 * 1024;

/** sha256 (hex) of the whole file at `path`, a regular file (never blocks on a pipe or device). */
export async function modelContentHash(path: string, signal?: AbortSignal): Promise<string> {
  const key = await fileVersionKey(path);
  const known = await hashes.get(key);
  if (known) return known;
  const { fh, size } = await openRegularFile(path);
  const hash = createHash('sha256');
  try {
    const buf = Buffer.alloc(Math.min(CHUNK, Math.max(1, size)));
    for (let pos = 0; ; ) {
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
  } finally {
    await fh.close();
  }
  const hex = hash.digest('hex');
  // Recorded under the version it had before reading: a write meanwhile makes a new version.
  if ((await fileVersionKey(path)) === key) await hashes.set(key, hex);
  return hex;
}
