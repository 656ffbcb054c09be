// Validates a GGUF file before anything tries to load it. node-llama-cpp reads a truncated file's
// header without complaint and then fails to load it with a bare "Failed to load model", and a
// text file named .gguf gives an unexported error class; both must reach the user as one clear
// line naming the file (docs/architecture.md, "node-llama-cpp").
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { getLlamaRuntime } from './runtime';
import * as nodeLlamaCpp from 'node-llama-cpp';
import { GgufFileType, GgufInsights, readGgufFileInfo, type GgufFileInfo } from 'node-llama-cpp';
import { UserError, errorMessage } from '../common/errors';

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

/** Machine-readable reasons carried by the UserError an invalid file raises. */
export type GgufErrorCode = 'gguf_missing' | 'gguf_invalid' | 'gguf_truncated' | 'gguf_unsupported';

/**
 * The architectures the bundled llama.cpp can load: node-llama-cpp generates GgufArchitectureType
 * from the llama.cpp it ships. Read at run time (it is a const enum in the typings, which
 * isolatedModules cannot inline).
 */
const SUPPORTED_ARCHITECTURES: ReadonlySet<string> = new Set(
  Object.values((nodeLlamaCpp as unknown as { GgufArchitectureType: Record<string, string> }).GgufArchitectureType),
);

const HEAD_BYTES = 1024 * 1024;
const TAIL_BYTES = 64 * 1024;

// Large arrays nobody here needs; skipping them keeps an inspection of a 150k-token vocabulary cheap.
const ignoredKeys = ['tokenizer.ggml.tokens', 'tokenizer.ggml.merges', 'tokenizer.ggml.token_type', 'tokenizer.ggml.scores'];

/**
 * Validates and describes a GGUF model without loading it. Throws UserError with code
 * `gguf_missing` (no such path), `gguf_invalid` (a folder, empty, not GGUF, unreadable header,
 * no architecture), `gguf_unsupported` (an architecture this llama.cpp cannot run) or
 * `gguf_truncated` (the tensor data is cut short), each one line naming the file.
 */
export async function inspectGguf(path: string, opts: InspectGgufOptions = {}): Promise<GgufInspection> {
  const { info, fileSize } = await readValidHeader(path);
  const metadata = info.metadata as unknown as Record<string, Record<string, unknown> | undefined>;
  const architecture = metadata.general?.architecture;
  if (typeof architecture !== 'string' || architecture === '')
    throw new UserError(`not a usable GGUF model: ${path} (its metadata names no general.architecture)`, 'gguf_invalid');

  if (opts.checkData !== false && !SUPPORTED_ARCHITECTURES.has(architecture)) {
    // Loading it would fail with a bare "Failed to load model" after reading the whole file.
    throw new UserError(
      `unsupported model architecture "${architecture}": ${path} (the llama.cpp built into this TATRA Studio, through node-llama-cpp, cannot run it; use a model of a supported architecture such as llama, qwen2, qwen3, gemma3 or phi3)`,
      'gguf_unsupported',
    );
  }

  const tensors = info.fullTensorInfo ?? info.tensorInfo ?? [];
  if (opts.checkData !== false && tensors.length > 0 && (info.splicedParts ?? 1) === 1) {
    let dataStart = Infinity;
    for (const t of tensors) dataStart = Math.min(dataStart, Number(t.fileOffset));
    // Given our Llama, node-llama-cpp does not load a logger-less binding of its own, whose
    // llama.cpp warnings would land on stdout (and break `--json` output).
    const insights = await GgufInsights.from(info, await getLlamaRuntime());
    const needed = dataStart + insights.modelSize;
    if (fileSize < needed)
      throw new UserError(
        `truncated GGUF model: ${path} (${fileSize} bytes, but its tensors need ${needed}; an interrupted download?)`,
        'gguf_truncated',
      );
  }

  let parameterCount = 0;
  for (const t of tensors) parameterCount += t.dimensions.reduce<number>((a, d) => a * Number(d), 1);

  const arch = metadata[architecture] ?? {};
  const num = (v: unknown): number | null => (typeof v === 'number' || typeof v === 'bigint' ? Number(v) : null);
  const fileType = num(metadata.general?.file_type);
  const fileTypeName = fileType === null ? undefined : (GgufFileType as unknown as Record<number, string | undefined>)[fileType];
  const generalName = metadata.general?.name;
  const template = metadata.tokenizer?.chat_template;

  return {
    path,
    fileSize,
    architecture,
    name: typeof generalName === 'string' && generalName.trim() !== '' ? generalName : basename(path).replace(/\.gguf$/i, ''),
    parameterCount,
    quantization: fileTypeName ? fileTypeName.replace(/^(MOSTLY|ALL)_/, '') : null,
    contextLength: num(arch.context_length),
    embeddingLength: num(arch.embedding_length),
    layers: num(arch.block_count),
    hasChatTemplate: typeof template === 'string' && template.trim() !== '',
    headerHash: await hashFile(path, fileSize),
  };
}

/**
 * Sanity of the fixed header (version, tensor and key counts) before node-llama-cpp parses it:
 * given garbage counts its reader does not fail, it loops for a very long time.
 */
function checkHeaderCounts(path: string, head: Buffer, size: number): void {
  if (size < 24) throw new UserError(`truncated GGUF model: ${path} (only ${size} bytes, shorter than the GGUF header)`, 'gguf_truncated');
  const version = head.readUInt32LE(4);
  if (version !== 2 && version !== 3) throw new UserError(`corrupt GGUF model: ${path} (unsupported or damaged GGUF version ${version})`, 'gguf_invalid');
  const tensors = head.readBigUInt64LE(8);
  const kvs = head.readBigUInt64LE(16);
  // Every tensor info and key/value takes well over 8 bytes; counts beyond that are garbage.
  if (tensors > BigInt(size) / 8n || kvs > BigInt(size) / 8n)
    throw new UserError(`corrupt GGUF model: ${path} (damaged header: ${tensors} tensors and ${kvs} keys in ${size} bytes)`, 'gguf_invalid');
}

/**
 * For callers that parse a header themselves (the fit estimate): throws for a damaged fixed
 * header; stays silent for a missing or non-GGUF file, which inspectGguf words better.
 */
export async function checkGgufHeaderCounts(path: string): Promise<void> {
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
  checkHeaderCounts(path, head, size);
}

async function readValidHeader(path: string): Promise<{ info: GgufFileInfo; fileSize: number }> {
  let size: number;
  try {
    const s = await stat(path);
    if (s.isDirectory()) throw new UserError(`not a GGUF model: ${path} (it is a folder, not a file)`, 'gguf_invalid');
    size = s.size;
  } catch (e) {
    if (e instanceof UserError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new UserError(`model file not found: ${path}`, 'gguf_missing');
    throw new UserError(`cannot read model file: ${path} (${errorMessage(e)})`, 'gguf_invalid');
  }
  if (size === 0) throw new UserError(`not a GGUF model: ${path} (the file is empty)`, 'gguf_invalid');

  let magic: Buffer;
  try {
    const fh = await open(path, 'r');
    try {
      magic = Buffer.alloc(24);
      await fh.read(magic, 0, 24, 0);
    } finally {
      await fh.close();
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : errorMessage(e);
    throw new UserError(`cannot read model file: ${path} (${why})`, 'gguf_invalid');
  }
  if (size < 4 || magic.toString('latin1', 0, 4) !== 'GGUF')
    throw new UserError(`not a GGUF model: ${path} (the file does not start with "GGUF")`, 'gguf_invalid');
  checkHeaderCounts(path, magic, size);

  let info: GgufFileInfo;
  try {
    info = await readGgufFileInfo(path, { sourceType: 'filesystem', ignoreKeys: ignoredKeys, logWarnings: false });
  } catch (e) {
    throw new UserError(`corrupt or truncated GGUF model: ${path} (its header cannot be read: ${errorMessage(e)})`, 'gguf_invalid');
  }
  // The reader pads reads past the end of the file with zeros instead of failing, so a file cut
  // inside its header parses into nonsense; the header's own length tells.
  const headerEnd = info.metadataSize + (info.tensorInfoSize ?? 0);
  if ((info.splicedParts ?? 1) === 1 && size < headerEnd)
    throw new UserError(`truncated GGUF model: ${path} (${size} bytes, but its header alone needs ${headerEnd}; an interrupted download?)`, 'gguf_truncated');
  return { info, fileSize: size };
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
