// The GGUF header read by a bounded reader of our own, before any other code (node-llama-cpp's
// reader, llama.cpp's loader, our hashing) touches a model file. A file from the internet can
// claim anything: 2^40 array elements (node-llama-cpp allocates them and V8 aborts the process),
// a tensor of 2^62 elements, a ggml type 9999, general.alignment 0 or 7, counts that make a
// reader loop for hours; a FIFO named x.gguf blocks any reader that opens it. Here:
// - only regular files are read (opened without blocking, checked with fstat);
// - every count, length, dimension, type and offset is checked against the file's size and the
//   rules llama.cpp's gguf.cpp applies, before anything is allocated or skipped over;
// - reads are bounded (a window of at most 1 MiB at a time, a header of at most MAX_HEADER_BYTES),
//   so a listing answers in bounded time whatever the folder holds;
// - every refusal is one UserError in a person's words, naming the file.
import type { FileHandle } from 'node:fs/promises';
import { formatBytes } from '../common/bytes';
import { UserError } from '../common/errors';
import { NotRegularFile, openRegularFile } from '../regular-file';

/** A refusal's machine-readable reason (the library's columns, the API's codes). */
export type GgufErrorCode = 'gguf_missing' | 'gguf_invalid' | 'gguf_truncated' | 'gguf_unsupported';

/** GGUF value types (gguf.h). */
const enum T {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
}
const SCALAR_SIZE: Record<number, number> = { [T.U8]: 1, [T.I8]: 1, [T.U16]: 2, [T.I16]: 2, [T.U32]: 4, [T.I32]: 4, [T.F32]: 4, [T.BOOL]: 1, [T.U64]: 8, [T.I64]: 8, [T.F64]: 8 };

/**
 * ggml tensor types this llama.cpp reads: [block size, bytes per block] (ggml.c type_traits).
 * Gaps are types whose support was removed (Q4_2, Q4_3, the repacked Q4_0_x_y and IQ4_NL_x_y).
 */
const GGML_TYPES: ReadonlyMap<number, readonly [number, number]> = new Map<number, readonly [number, number]>([
  [0, [1, 4]], // F32
  [1, [1, 2]], // F16
  [2, [32, 18]], // Q4_0
  [3, [32, 20]], // Q4_1
  [6, [32, 22]], // Q5_0
  [7, [32, 24]], // Q5_1
  [8, [32, 34]], // Q8_0
  [9, [32, 36]], // Q8_1
  [10, [256, 84]], // Q2_K
  [11, [256, 110]], // Q3_K
  [12, [256, 144]], // Q4_K
  [13, [256, 176]], // Q5_K
  [14, [256, 210]], // Q6_K
  [15, [256, 292]], // Q8_K
  [16, [256, 66]], // IQ2_XXS
  [17, [256, 74]], // IQ2_XS
  [18, [256, 98]], // IQ3_XXS
  [19, [256, 50]], // IQ1_S
  [20, [32, 18]], // IQ4_NL
  [21, [256, 110]], // IQ3_S
  [22, [256, 82]], // IQ2_S
  [23, [256, 136]], // IQ4_XS
  [24, [1, 1]], // I8
  [25, [1, 2]], // I16
  [26, [1, 4]], // I32
  [27, [1, 8]], // I64
  [28, [1, 8]], // F64
  [29, [256, 56]], // IQ1_M
  [30, [1, 2]], // BF16
  [34, [256, 54]], // TQ1_0
  [35, [256, 66]], // TQ2_0
  [39, [32, 17]], // MXFP4
  [40, [64, 36]], // NVFP4
  [41, [128, 18]], // Q1_0
  [42, [64, 18]], // Q2_0
]);

const GGML_MAX_DIMS = 4;
/** llama.cpp's GGML_MAX_NAME: a tensor name must be shorter. */
const GGML_MAX_NAME = 64;
const DEFAULT_ALIGNMENT = 32;
/** ggml's TENSOR_ALIGNMENT. */
const MIN_ALIGNMENT = 32;
/** GGUF keys are at most 65,535 bytes (the format's own limit). */
const MAX_KEY_BYTES = 65_535;
/**
 * Metadata plus tensor infos: real models need a few MiB (a 262k-token vocabulary with scores is
 * about 10 MiB). A header claiming more is refused rather than read for minutes.
 */
export const MAX_HEADER_BYTES = 256 * 1024 * 1024;
/** Strings decoded into the result (general.name, a chat template); longer ones are only checked. */
const MAX_DECODED_STRING = 1024 * 1024;
const WINDOW = 1024 * 1024;
/** Array elements beyond any model's (the largest vocabularies and merge lists have a few hundred thousand). */
const MAX_ARRAY = 1n << 26n;
/** More tensors or metadata entries than any model has (the largest have tens of thousands). */
const MAX_COUNT = 1n << 24n;
/** Elements of one tensor, and bytes of all tensors, that JavaScript numbers still count exactly. */
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export type GgufScalar = number | bigint | boolean | string;

/** A metadata value as read: a scalar or string, or for arrays their element type and length only. */
export type GgufValue = GgufScalar | { array: number; length: number } | { tooLong: number };

export interface GgufTensorHeader {
  name: string;
  dims: bigint[];
  type: number;
  /** Offset in the data section. */
  offset: bigint;
  /** Bytes of data (ggml_nbytes). */
  bytes: bigint;
}

export interface GgufHeader {
  fileSize: number;
  version: number;
  /** Metadata in file order; a Map, since keys come from the file. */
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorHeader[];
  alignment: number;
  /** Where the data section starts. */
  dataOffset: number;
  /** Bytes the tensors need from dataOffset on (padded as llama.cpp counts them). */
  dataBytes: bigint;
}


/** A refusal in the reader; turned into one UserError naming the file. */
class Refusal extends Error {
  constructor(
    readonly code: GgufErrorCode,
    readonly reason: string,
    /** How the message starts, when not the code's default. */
    readonly what?: string,
  ) {
    super(reason);
  }
}

const corrupt = (reason: string) => new Refusal('gguf_invalid', reason);
const truncated = (reason: string) => new Refusal('gguf_truncated', reason);

/** Reads forward through the file in windows of at most WINDOW bytes; never past its end. */
class BoundedReader {
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  pos = 0;

  constructor(
    private readonly fh: FileHandle,
    readonly size: number,
  ) {}

  get remaining(): number {
    return this.size - this.pos;
  }

  /** The file ends before `what` does. */
  cut(what: string): Refusal {
    return truncated(`${this.size} bytes: the file ends inside its header, in ${what}`);
  }

  /** Makes `n` bytes from pos available in the window (n ≤ WINDOW). */
  private async ensure(n: number, what: string): Promise<Buffer> {
    if (n > this.remaining) throw this.cut(what);
    if (this.pos > MAX_HEADER_BYTES) throw corrupt(`its header goes on past ${formatBytes(MAX_HEADER_BYTES)}, far beyond any real model's`);
    const off = this.pos - this.bufStart;
    if (off >= 0 && off + n <= this.buf.length) return this.buf.subarray(off, off + n);
    const len = Math.min(Math.max(n, WINDOW), this.remaining);
    const buf = Buffer.alloc(len);
    const { bytesRead } = await this.fh.read(buf, 0, len, this.pos);
    if (bytesRead < n) throw this.cut(what);
    this.buf = buf.subarray(0, bytesRead);
    this.bufStart = this.pos;
    return this.buf.subarray(0, n);
  }

  async u32(what: string): Promise<number> {
    const b = await this.ensure(4, what);
    this.pos += 4;
    return b.readUInt32LE(0);
  }

  async u64(what: string): Promise<bigint> {
    const b = await this.ensure(8, what);
    this.pos += 8;
    return b.readBigUInt64LE(0);
  }

  async i64(what: string): Promise<bigint> {
    const b = await this.ensure(8, what);
    this.pos += 8;
    return b.readBigInt64LE(0);
  }

  async scalar(type: number, what: string): Promise<GgufScalar> {
    const size = SCALAR_SIZE[type]!;
    const b = await this.ensure(size, what);
    this.pos += size;
    switch (type) {
      case T.U8:
        return b.readUInt8(0);
      case T.I8:
        return b.readInt8(0);
      case T.U16:
        return b.readUInt16LE(0);
      case T.I16:
        return b.readInt16LE(0);
      case T.U32:
        return b.readUInt32LE(0);
      case T.I32:
        return b.readInt32LE(0);
      case T.F32:
        return b.readFloatLE(0);
      case T.BOOL:
        return b.readUInt8(0) !== 0;
      case T.U64:
        return b.readBigUInt64LE(0);
      case T.I64:
        return b.readBigInt64LE(0);
      default:
        return b.readDoubleLE(0);
    }
  }

  /** A string's length, checked against what is left of the file before anything is read. */
  async stringLength(what: string, max = Number.MAX_SAFE_INTEGER): Promise<number> {
    const len = await this.u64(`the length of ${what}`);
    if (len > BigInt(max)) throw corrupt(`${what} is ${len} bytes long (at most ${max} allowed)`);
    // A length the rest of a real header could have is a cut file; beyond that, damage.
    if (len > BigInt(this.remaining)) throw len <= BigInt(MAX_HEADER_BYTES) ? this.cut(what) : corrupt(`${what} claims ${len} bytes, more than the file holds`);
    return Number(len);
  }

  async string(what: string, max = Number.MAX_SAFE_INTEGER): Promise<string | { tooLong: number }> {
    const len = await this.stringLength(what, max);
    if (len > MAX_DECODED_STRING) {
      await this.skip(len, what);
      return { tooLong: len };
    }
    let out = '';
    for (let done = 0; done < len; ) {
      const n = Math.min(WINDOW, len - done);
      out += (await this.ensure(n, what)).toString('utf8');
      this.pos += n;
      done += n;
    }
    return out;
  }

  /**
   * Skips `n` strings (an array's elements: a vocabulary, its merges), checking each as
   * stringLength and skip do. A length the window holds and that passes every check is taken in
   * place, without a promise or a message per element (a 152k-token vocabulary and its merges are
   * 300k strings, read on every model load); anything else goes the checked way, which words any
   * refusal with `what(i)`.
   */
  async skipStrings(n: number, what: (i: number) => string, skipped: string): Promise<void> {
    for (let i = 0; i < n; i++) {
      const off = this.pos - this.bufStart;
      if (off >= 0 && off + 8 <= this.buf.length && this.buf.readUInt32LE(off + 4) === 0) {
        const len = this.buf.readUInt32LE(off);
        const end = this.pos + 8 + len;
        if (end <= this.size && end <= MAX_HEADER_BYTES) {
          this.pos = end;
          continue;
        }
      }
      await this.skip(await this.stringLength(what(i)), skipped);
    }
  }

  async skip(n: number, what: string): Promise<void> {
    if (n > this.remaining) throw this.cut(what);
    this.pos += n;
    if (this.pos > MAX_HEADER_BYTES) throw corrupt(`its header goes on past ${formatBytes(MAX_HEADER_BYTES)}, far beyond any real model's`);
  }
}

/** Opens `path` for reading only if it is a regular file, without ever blocking on a FIFO or a device. */
async function openRegular(path: string): Promise<{ fh: FileHandle; size: number }> {
  try {
    return await openRegularFile(path);
  } catch (e) {
    if (e instanceof NotRegularFile) {
      if (e.what === 'a folder') throw new UserError(`not a GGUF model: ${path} (it is a folder, not a file)`, 'gguf_invalid');
      throw new UserError(`not a GGUF model: ${path} (it is ${e.what}, not a regular file)`, 'gguf_invalid');
    }
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new UserError(`model file not found: ${path}`, 'gguf_missing');
    if (code === 'EACCES' || code === 'EPERM') throw new UserError(`cannot read model file: ${path} (permission denied)`, 'gguf_invalid');
    throw new UserError(`cannot read model file: ${path} (${code ?? 'unreadable'})`, 'gguf_invalid');
  }
}

/** ggml_nbytes of a tensor (row size × the other dimensions), or null when its type is unknown. */
function tensorBytes(dims: readonly bigint[], type: number): bigint | null {
  const t = GGML_TYPES.get(type);
  if (!t) return null;
  const [block, size] = t;
  let rows = 1n;
  for (let i = 1; i < dims.length; i++) rows *= dims[i]!;
  return ((dims[0] ?? 1n) / BigInt(block)) * BigInt(size) * rows;
}

const pad = (n: bigint, a: bigint) => ((n + a - 1n) / a) * a;

/**
 * Reads and checks the whole header of `path`. Throws one UserError (codes GgufErrorCode) for a
 * missing or unreadable file, anything but a regular file, a file that is not GGUF, a damaged or
 * implausible header, or tensor data the file does not hold.
 */
export async function readGgufHeader(path: string, opts: { requireData?: boolean } = {}): Promise<GgufHeader> {
  const { fh, size } = await openRegular(path);
  try {
    if (size === 0) throw new UserError(`not a GGUF model: ${path} (the file is empty)`, 'gguf_invalid');
    return await walk(new BoundedReader(fh, size), opts.requireData !== false);
  } catch (e) {
    if (e instanceof Refusal) throw refusal(path, e);
    throw e;
  } finally {
    await fh.close();
  }
}

function refusal(path: string, r: Refusal): UserError {
  const what = r.what ?? (r.code === 'gguf_truncated' ? 'truncated GGUF model' : r.code === 'gguf_unsupported' ? 'unsupported GGUF model' : 'corrupt GGUF model');
  const hint = r.code === 'gguf_truncated' ? '; an interrupted download?' : '';
  return new UserError(`${what}: ${path} (${r.reason}${hint})`, r.code);
}

async function walk(r: BoundedReader, requireData: boolean): Promise<GgufHeader> {
  if (r.size < 4) throw new Refusal('gguf_invalid', `only ${r.size} bytes, shorter than any GGUF header`, 'not a GGUF model');
  const magic = await r.u32('the magic');
  if (magic !== 0x46554747) throw new Refusal('gguf_invalid', 'the file does not start with "GGUF"', 'not a GGUF model');
  if (r.size < 24) throw truncated(`only ${r.size} bytes, shorter than the GGUF header`);
  const version = await r.u32('the version');
  if (version === 1) throw new Refusal('gguf_unsupported', 'GGUF version 1 is no longer supported; convert it again with a recent llama.cpp');
  if (version !== 2 && version !== 3) throw corrupt(`unknown or damaged GGUF version ${version}`);
  const tensorCount = await r.u64('the tensor count');
  const kvCount = await r.u64('the metadata count');
  // No model has millions of tensors or keys: such counts are damage, refused before a loop runs
  // that long. Plausible counts the rest of the file cannot hold (each tensor info takes at least
  // 8+1+4+8+4+8 bytes, each key/value 8+1+4+1) mean the file was cut.
  if (tensorCount > MAX_COUNT) throw corrupt(`damaged header: it claims ${tensorCount} tensors`);
  if (kvCount > MAX_COUNT) throw corrupt(`damaged header: it claims ${kvCount} metadata entries`);
  if (tensorCount * 33n + kvCount * 14n > BigInt(r.remaining)) throw r.cut(`the ${tensorCount} tensors and ${kvCount} metadata entries it announces`);

  const metadata = new Map<string, GgufValue>();
  const types = new Map<string, number>();
  for (let i = 0; i < Number(kvCount); i++) {
    const key = (await r.string(`metadata key ${i + 1}`, MAX_KEY_BYTES)) as string;
    if (key === '') throw corrupt(`metadata key ${i + 1} is empty`);
    if (metadata.has(key)) throw corrupt(`metadata key "${shown(key)}" appears twice`);
    const type = await r.u32(`the type of ${shown(key)}`);
    types.set(key, type);
    metadata.set(key, await value(r, key, type));
  }

  const alignmentValue = metadata.get('general.alignment');
  let alignment = DEFAULT_ALIGNMENT;
  if (alignmentValue !== undefined) {
    if (typeof alignmentValue !== 'number' || types.get('general.alignment') !== T.U32) throw corrupt('general.alignment is not a 32-bit unsigned number');
    alignment = alignmentValue;
    if (alignment === 0 || (alignment & (alignment - 1)) !== 0) throw corrupt(`general.alignment is ${alignment}, not a power of two`);
    // llama.cpp maps the file and uses the tensors where they lie: ggml asserts (and aborts the
    // process) on data not aligned to 32 bytes.
    if (alignment < MIN_ALIGNMENT) throw corrupt(`general.alignment is ${alignment}; llama.cpp needs its tensors aligned to at least ${MIN_ALIGNMENT} bytes`);
  }

  const tensors: GgufTensorHeader[] = [];
  const names = new Set<string>();
  for (let i = 0; i < Number(tensorCount); i++) {
    const name = (await r.string(`the name of tensor ${i + 1}`, GGML_MAX_NAME * 4)) as string;
    if (Buffer.byteLength(name) >= GGML_MAX_NAME) throw corrupt(`tensor ${i + 1}'s name is ${Buffer.byteLength(name)} bytes long (under ${GGML_MAX_NAME} allowed)`);
    if (names.has(name)) throw corrupt(`tensor "${shown(name)}" appears twice`);
    names.add(name);
    const nDims = await r.u32(`the dimensions of tensor ${shown(name)}`);
    if (nDims > GGML_MAX_DIMS) throw corrupt(`tensor "${shown(name)}" claims ${nDims} dimensions (at most ${GGML_MAX_DIMS})`);
    const dims: bigint[] = [];
    for (let d = 0; d < nDims; d++) {
      const n = await r.i64(`the dimensions of tensor ${shown(name)}`);
      if (n < 0n) throw corrupt(`tensor "${shown(name)}" has a negative dimension`);
      dims.push(n);
    }
    while (dims.length < GGML_MAX_DIMS) dims.push(1n);
    let elements = 1n;
    for (const n of dims) elements *= n;
    if (elements > MAX_SAFE) throw corrupt(`tensor "${shown(name)}" claims ${elements} values, more than any model holds`);
    const type = await r.u32(`the type of tensor ${shown(name)}`);
    const ggml = GGML_TYPES.get(type);
    if (!ggml) throw new Refusal('gguf_unsupported', `tensor "${shown(name)}" has tensor type ${type}, which this llama.cpp cannot read`);
    // llama.cpp computes with norms and other one-dimensional tensors only in F32 (its converter
    // always writes them so); another type passes its loader and aborts the process at the first
    // token (ggml's binary ops: "unsupported types").
    if (type !== 0 && (nDims <= 1 || name.endsWith('_norm.weight'))) throw corrupt(`tensor "${shown(name)}" is a norm or a one-dimensional tensor stored as type ${type}; llama.cpp computes those only in F32`);
    if (dims[0]! % BigInt(ggml[0]) !== 0n) throw corrupt(`tensor "${shown(name)}" has rows of ${dims[0]} values, not a whole number of its type's blocks of ${ggml[0]}`);
    const offset = await r.u64(`the offset of tensor ${shown(name)}`);
    const bytes = tensorBytes(dims, type)!;
    tensors.push({ name, dims: dims.slice(0, Math.max(1, nDims)), type, offset, bytes });
  }

  // The data section starts at the next multiple of the alignment; tensors follow one another in
  // order, each padded to the alignment (what llama.cpp requires).
  const dataOffset = tensors.length > 0 ? Number(pad(BigInt(r.pos), BigInt(alignment))) : r.pos;
  let expected = 0n;
  for (const t of tensors) {
    if (t.offset !== expected) throw corrupt(`tensor "${shown(t.name)}" starts at ${t.offset} in the data, where ${expected} was expected`);
    expected += pad(t.bytes, BigInt(alignment));
    if (expected > MAX_SAFE) throw corrupt(`its tensors claim ${expected} bytes of data, more than any model holds`);
  }
  // The last tensor needs its bytes, not its padding.
  const last = tensors.at(-1);
  const needed = last ? BigInt(dataOffset) + last.offset + last.bytes : BigInt(dataOffset);
  if (requireData && needed > BigInt(r.size)) throw truncated(`${r.size} bytes, but its tensors need ${needed}`);
  return { fileSize: r.size, version, metadata, tensors, alignment, dataOffset, dataBytes: expected };
}

async function value(r: BoundedReader, k: string, type: number): Promise<GgufValue> {
  const what = `the value of ${shown(k)}`;
  if (type === T.STRING) return r.string(what);
  if (type === T.ARRAY) {
    const element = await r.u32(`the element type of ${shown(k)}`);
    const length = await r.u64(`the length of ${shown(k)}`);
    if (element === T.ARRAY) throw corrupt(`${shown(k)} is an array of arrays, which GGUF readers do not support`);
    if (element !== T.STRING && SCALAR_SIZE[element] === undefined) throw corrupt(`${shown(k)} has an unknown element type ${element}`);
    const min = element === T.STRING ? 8n : BigInt(SCALAR_SIZE[element]!);
    if (length > MAX_ARRAY) throw corrupt(`${shown(k)} claims ${length} elements, more than any model has`);
    if (length * min > BigInt(r.remaining)) throw r.cut(shown(k));
    const n = Number(length);
    if (element === T.STRING) await r.skipStrings(n, (i) => `element ${i + 1} of ${shown(k)}`, what);
    else await r.skip(n * SCALAR_SIZE[element]!, what);
    return { array: element, length: n };
  }
  if (SCALAR_SIZE[type] === undefined) throw corrupt(`${shown(k)} has an unknown value type ${type}`);
  return r.scalar(type, what);
}

/** A key or name from the file, shortened for a message (escapes are the terminal's job). */
function shown(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
