// A data file's bytes as text, read once: strict UTF-8 in chunks (a bad byte is one line naming
// its line number; we never guess an encoding and lose text), a leading BOM dropped, and the
// sha256 fingerprint hashed from the very bytes read.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { UserError } from '../common/errors';

/** Index of the first byte that is not valid UTF-8 in buf[from..], or -1; `incomplete` marks a sequence cut by the buffer end. */
function scanUtf8(buf: Uint8Array, from: number): { bad: number; incompleteAt: number } {
  let i = from;
  const n = buf.length;
  while (i < n) {
    const b = buf[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return { bad: i, incompleteAt: -1 };
    if (i + need >= n) {
      // Not enough bytes left: check what is there, then let the caller carry it over.
      for (let j = i + 1; j < n; j++) if ((buf[j]! & 0xc0) !== 0x80) return { bad: i, incompleteAt: -1 };
      return { bad: -1, incompleteAt: i };
    }
    let cp = b & (need === 1 ? 0x1f : need === 2 ? 0x0f : 0x07);
    for (let j = 1; j <= need; j++) {
      const c = buf[i + j]!;
      if ((c & 0xc0) !== 0x80) return { bad: i, incompleteAt: -1 };
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return { bad: i, incompleteAt: -1 };
    i += need + 1;
  }
  return { bad: -1, incompleteAt: -1 };
}

function countNewlines(buf: Uint8Array, end: number): number {
  let c = 0;
  for (let i = 0; i < end; i++) if (buf[i] === 0x0a) c++;
  return c;
}

export interface TextSource {
  chunks: AsyncGenerator<string>;
  /** Bytes consumed so far (for preview size estimates). */
  bytesRead(): number;
  /** sha256 of the file: of the bytes as they were read, plus (unparsed) whatever reading had not reached. */
  fingerprint(): Promise<string>;
}

/**
 * Decodes a file as strict UTF-8 in chunks, dropping a leading BOM. An invalid byte is a
 * UserError naming its line, counted from the bytes before it.
 */
export function textSource(path: string, signal?: AbortSignal): TextSource {
  let bytes = 0;
  // Hashed as they are read, so the fingerprint is of the very bytes the rows came from (a second
  // read to hash doubled the I/O of an import and could hash a file changed in between).
  const hash = createHash('sha256');
  let readToEnd = false;
  let finishing = false;
  let digest: Promise<string> | null = null;
  const name = basename(path);
  async function* gen(): AsyncGenerator<string> {
    const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
    const stream = createReadStream(path, { highWaterMark: 256 * 1024 });
    let carry: Buffer | null = null;
    let lines = 0;
    try {
      for await (const raw of stream as AsyncIterable<Buffer>) {
        signal?.throwIfAborted();
        // fingerprint() has taken over the hash from `bytes` on (a chunk still in flight when the reader stopped).
        if (finishing) return;
        bytes += raw.length;
        hash.update(raw);
        const buf: Buffer = carry ? Buffer.concat([carry, raw]) : raw;
        carry = null;
        const { bad, incompleteAt } = scanUtf8(buf, 0);
        if (bad >= 0) {
          throw new UserError(`${name}: line ${lines + countNewlines(buf, bad) + 1} is not valid UTF-8 (save the file as UTF-8)`, 'dataset_encoding');
        }
        const end = incompleteAt >= 0 ? incompleteAt : buf.length;
        if (incompleteAt >= 0) carry = Buffer.from(buf.subarray(incompleteAt));
        lines += countNewlines(buf, end);
        const text = decoder.decode(buf.subarray(0, end), { stream: true });
        if (text.length > 0) yield text;
      }
      readToEnd = true;
      if (carry && carry.length > 0) {
        throw new UserError(`${name}: line ${lines + 1} is not valid UTF-8 (the file ends inside a character)`, 'dataset_encoding');
      }
    } finally {
      stream.destroy();
    }
  }
  async function finishHash(): Promise<string> {
    finishing = true;
    // Reading stopped early (a row limit): hash the rest from where it stopped, still once.
    if (!readToEnd) for await (const chunk of createReadStream(path, { start: bytes }) as AsyncIterable<Buffer>) hash.update(chunk);
    return `sha256:${hash.digest('hex')}`;
  }
  const fingerprint = (): Promise<string> => (digest ??= finishHash());
  return { chunks: gen(), bytesRead: () => bytes, fingerprint };
}
