// Describing a GGUF for the library, and the check a download must pass before it is renamed into
// place: both go through the LLAMA module's inspectGguf (header only, truncation checked), so the
// library, downloads and loading agree on what a usable model is.
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import type { ModelEntry } from '../common/contract/models';
import { UserError, errorMessage } from '../common/errors';
import { inspectGguf } from '../llama';

/** A library entry minus where it came from, plus the header hash. */
export type ModelHeader = Omit<ModelEntry, 'source'> & { headerHash: string };

/** Library reason codes: missing, unreadable, not_gguf, truncated, invalid. */
export function invalidCode(e: unknown): string {
  if (!(e instanceof UserError)) return 'unreadable';
  if (e.code === 'gguf_missing') return 'missing';
  if (e.code === 'gguf_truncated') return 'truncated';
  if (/cannot read|permission denied|folder/i.test(e.message)) return 'unreadable';
  if (/not a GGUF model|empty/i.test(e.message)) return 'not_gguf';
  return 'invalid';
}

/** The error's message without the path (the library shows the path in its own column). */
export function invalidReason(e: unknown, path: string): string {
  const m = errorMessage(e).split('\n')[0] ?? '';
  return m.split(`: ${path}`).join('').split(path).join('the file');
}

/**
 * Reads and checks the header of `path` (UserError with a one-line reason for a missing,
 * unreadable, non-GGUF or truncated file).
 */
export async function inspectModelFile(path: string, opts: { checkData?: boolean } = {}): Promise<ModelHeader> {
  await checkHeaderFields(path);
  const g = await inspectGguf(path, opts);
  return {
    path,
    fileName: path.split(/[\\/]/).pop() ?? path,
    name: g.name,
    architecture: g.architecture,
    parameters: g.parameterCount > 0 ? g.parameterCount : null,
    quantization: g.quantization,
    sizeBytes: g.fileSize,
    contextLength: g.contextLength,
    hasChatTemplate: g.hasChatTemplate,
    layers: g.layers,
    headerHash: g.headerHash,
  };
}

/** Throws UserError unless `path` is a complete GGUF model. */
export async function validateModelFile(path: string): Promise<void> {
  await checkHeaderFields(path);
  await inspectGguf(path);
}

/**
 * The fixed GGUF header fields, checked before node-llama-cpp parses the file: its reader does not
 * return (measured: still running after 15 s) on a file that has the magic but garbage after it,
 * e.g. a damaged download, which would hang the whole library listing. Files that fail the magic
 * or are missing are left to inspectGguf, which words those errors.
 */
export async function checkHeaderFields(path: string): Promise<void> {
  let head: Buffer;
  let size: number;
  try {
    const fh = await open(path, 'r');
    try {
      size = (await fh.stat()).size;
      head = Buffer.alloc(24);
      await fh.read(head, 0, 24, 0);
    } finally {
      await fh.close();
    }
  } catch {
    return;
  }
  if (size < 4 || head.toString('latin1', 0, 4) !== 'GGUF') return;
  const name = basename(path);
  if (size < 24) throw new UserError(`truncated GGUF model: ${name} (only ${size} bytes, shorter than the GGUF header)`, 'gguf_truncated');
  const version = head.readUInt32LE(4);
  if (version !== 2 && version !== 3) throw new UserError(`not a usable GGUF model: ${name} (unsupported or damaged GGUF version ${version})`, 'gguf_invalid');
  const tensors = head.readBigUInt64LE(8);
  const kvs = head.readBigUInt64LE(16);
  // Every tensor info and key/value takes well over 8 bytes; counts beyond that are garbage.
  if (tensors > BigInt(size) / 8n || kvs > BigInt(size) / 8n) {
    throw new UserError(`not a usable GGUF model: ${name} (damaged header: ${tensors} tensors and ${kvs} keys in ${size} bytes)`, 'gguf_invalid');
  }
}
