// Validates and describes a GGUF file before anything tries to load it. The header is read by our
// own bounded reader (gguf-header.ts: only regular files, every count, length, dimension, type and
// offset checked against the file's size), so a file from the internet can neither crash nor
// freeze the process that looks at it, and every refusal is one line naming the file.
// node-llama-cpp's own reader (which fit estimates need for GgufInsights) is reached only through
// readGgufInfo, after that reader has vouched for the file (docs/architecture.md, "node-llama-cpp").
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import type { GgufFileInfo } from 'node-llama-cpp';
import { nodeLlamaCpp } from './module';
import { UserError } from '../common/errors';
import { readGgufHeader, type GgufErrorCode, type GgufValue } from './gguf-header';

export type { GgufErrorCode };

export interface GgufInspection {
  /** The path as given. */
  path: string;
  fileSize: number;
  /** general.architecture, e.g. "qwen2", "llama". */
  architecture: string;
  /** general.name, else the file name without .gguf. */
  name: string;
  /** Sum of the element counts of all tensors. */
  parameterCount: number;
  /** general.file_type as a name ("Q8_0", "Q4_K_M", "F16"), null when the file does not say. */
  quantization: string | null;
  /** Trained context length (`<arch>.context_length`), null when absent. */
  contextLength: number | null;
  embeddingLength: number | null;
  layers: number | null;
  /** Whether the file carries tokenizer.chat_template. */
  hasChatTemplate: boolean;
  /**
   * sha256 (hex) of the first MiB, the last 64 KiB and the file size: identifies a file's content
   * in milliseconds without reading gigabytes (the metadata, name and quantisation live in the first MiB).
   */
  headerHash: string;
}

export interface InspectGgufOptions {
  /**
   * Check that the file holds all its tensor data (default true). False accepts a header-only
   * file, for estimates that need only the header.
   */
  checkData?: boolean;
}

let supported: ReadonlySet<string> | null = null;

/**
 * The architectures the bundled llama.cpp can load: node-llama-cpp generates GgufArchitectureType
 * from the llama.cpp it ships. Read at run time (it is a const enum in the typings, which
 * isolatedModules cannot inline), once.
 */
async function supportedArchitectures(): Promise<ReadonlySet<string>> {
  const types = ((await nodeLlamaCpp()) as unknown as { GgufArchitectureType: Record<string, string> }).GgufArchitectureType;
  supported ??= new Set(Object.values(types));
  return supported;
}

const HEAD_BYTES = 1024 * 1024;
const TAIL_BYTES = 64 * 1024;

// Large arrays nobody here needs; skipping them keeps node-llama-cpp's reading of a 150k-token vocabulary cheap.
const ignoredKeys = ['tokenizer.ggml.tokens', 'tokenizer.ggml.merges', 'tokenizer.ggml.token_type', 'tokenizer.ggml.scores'];

function num(v: GgufValue | undefined): number | null {
  return typeof v === 'number' ? v : typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : null;
}

/**
 * Validates and describes a GGUF model without loading it. Throws UserError with code
 * `gguf_missing` (no such path), `gguf_invalid` (not a regular file, empty, not GGUF, a damaged
 * or implausible header, no architecture), `gguf_unsupported` (an architecture or tensor type
 * this llama.cpp cannot run) or `gguf_truncated` (the tensor data is cut short), each one line
 * naming the file.
 */
export async function inspectGguf(path: string, opts: InspectGgufOptions = {}): Promise<GgufInspection> {
  const header = await readGgufHeader(path, { requireData: opts.checkData !== false });
  const meta = header.metadata;
  const architecture = meta.get('general.architecture');
  if (typeof architecture !== 'string' || architecture.trim() === '')
    throw new UserError(`not a usable GGUF model: ${path} (its metadata names no general.architecture)`, 'gguf_invalid');

  if (opts.checkData !== false && !(await supportedArchitectures()).has(architecture)) {
    // Loading it would fail with a bare "Failed to load model" after reading the whole file.
    throw new UserError(
      `unsupported model architecture "${shownName(architecture)}": ${path} (the llama.cpp built into this TATRA Studio, through node-llama-cpp, cannot run it; use a model of a supported architecture such as llama, qwen2, qwen3, gemma3 or phi3)`,
      'gguf_unsupported',
    );
  }

  let parameterCount = 0;
  for (const t of header.tensors) parameterCount += t.dims.reduce<number>((a, d) => a * Number(d), 1);

  const fileType = num(meta.get('general.file_type'));
  const fileTypeName = fileType === null ? undefined : ((await nodeLlamaCpp()).GgufFileType as unknown as Record<number, string | undefined>)[fileType];
  const generalName = meta.get('general.name');
  const template = meta.get('tokenizer.chat_template');

  return {
    path,
    fileSize: header.fileSize,
    architecture,
    name: typeof generalName === 'string' && generalName.trim() !== '' ? shownName(generalName) : basename(path).replace(/\.gguf$/i, ''),
    parameterCount,
    quantization: fileTypeName ? fileTypeName.replace(/^(MOSTLY|ALL)_/, '') : null,
    contextLength: num(meta.get(`${architecture}.context_length`)),
    embeddingLength: num(meta.get(`${architecture}.embedding_length`)),
    layers: num(meta.get(`${architecture}.block_count`)),
    hasChatTemplate: (typeof template === 'string' && template.trim() !== '') || (typeof template === 'object' && 'tooLong' in template),
    headerHash: await hashFile(path, header.fileSize),
  };
}

/** A name from the file, kept to a length a list can show. */
function shownName(s: string): string {
  return s.length > 200 ? `${s.slice(0, 199)}…` : s;
}

/**
 * node-llama-cpp's description of a GGUF header (what GgufInsights and fit estimates need), read
 * only after our bounded reader has vouched for the file: node-llama-cpp's reader allocates what
 * a header claims and mixes BigInt and number on odd values. A header-only file is fine here.
 */
export async function readGgufInfo(path: string): Promise<GgufFileInfo> {
  await readGgufHeader(path, { requireData: false });
  const { readGgufFileInfo } = await nodeLlamaCpp();
  try {
    return await readGgufFileInfo(path, { sourceType: 'filesystem', ignoreKeys: ignoredKeys, logWarnings: false });
  } catch {
    throw new UserError(`corrupt GGUF model: ${path} (its metadata cannot be read)`, 'gguf_invalid');
  }
}

async function hashFile(path: string, size: number): Promise<string> {
  const hash = createHash('sha256');
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(Math.min(HEAD_BYTES, size));
    await fh.read(head, 0, head.length, 0);
    hash.update(head);
    if (size > HEAD_BYTES) {
      const tailLength = Math.min(TAIL_BYTES, size - HEAD_BYTES);
      const tail = Buffer.alloc(tailLength);
      await fh.read(tail, 0, tailLength, size - tailLength);
      hash.update(tail);
    }
  } finally {
    await fh.close();
  }
  hash.update(`size:${size}`);
  return hash.digest('hex');
}
