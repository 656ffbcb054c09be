// Describing a GGUF for the library, and the check a download must pass before it is renamed into
// place: both go through the llama layer's GGUF inspection (header only, truncation checked), so the
// library, downloads and loading agree on what a usable model is.
import type { ModelEntry } from '../common/contract/models';
import { UserError, errorMessage } from '../common/errors';
import { inspectGgufOnce } from '../llama';

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
  const g = await inspectGgufOnce(path, opts);
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
  await inspectGgufOnce(path);
}
