// Mutants of a real GGUF for the hostile-file tests: the file is parsed into its fields (with their
// byte offsets), then each mutant either edits bytes in place (counts, lengths, types, dimensions,
// offsets), cuts the file (at every field), or rebuilds it from edited fields (alignment, the
// architecture, hyperparameters, arrays emptied). Test code only: it trusts its input, which is a
// good model.

export interface KvField {
  key: string;
  /** Offsets of the key's length, its type, and its value (for arrays: the element type). */
  at: { keyLength: number; type: number; value: number; end: number };
  type: number;
  /** For arrays: element type and length (at value and value+4). */
  array?: { type: number; length: number };
  /** For strings: the value. */
  text?: string;
  /** The value's raw bytes (after the type field). */
  raw: Buffer;
}

export interface TensorField {
  name: string;
  at: { nameLength: number; nDims: number; dims: number; type: number; offset: number; end: number };
  dims: bigint[];
  type: number;
  offset: bigint;
}

export interface ParsedGguf {
  buf: Buffer;
  version: number;
  kvs: KvField[];
  tensors: TensorField[];
  alignment: number;
  headerEnd: number;
  dataOffset: number;
}

const SCALAR: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

export function parseGguf(buf: Buffer): ParsedGguf {
  let p = 24;
  const version = buf.readUInt32LE(4);
  const nTensors = Number(buf.readBigUInt64LE(8));
  const nKv = Number(buf.readBigUInt64LE(16));
  const str = () => {
    const len = Number(buf.readBigUInt64LE(p));
    const s = buf.toString('utf8', p + 8, p + 8 + len);
    p += 8 + len;
    return s;
  };
  const kvs: KvField[] = [];
  for (let i = 0; i < nKv; i++) {
    const keyLength = p;
    const key = str();
    const typeAt = p;
    const type = buf.readUInt32LE(p);
    p += 4;
    const value = p;
    const kv: KvField = { key, at: { keyLength, type: typeAt, value, end: 0 }, type, raw: Buffer.alloc(0) };
    if (type === 8) kv.text = str();
    else if (type === 9) {
      const et = buf.readUInt32LE(p);
      const n = Number(buf.readBigUInt64LE(p + 4));
      p += 12;
      kv.array = { type: et, length: n };
      if (et === 8) for (let j = 0; j < n; j++) str();
      else p += n * SCALAR[et]!;
    } else p += SCALAR[type]!;
    kv.at.end = p;
    kv.raw = buf.subarray(value, p);
    kvs.push(kv);
  }
  const alignKv = kvs.find((k) => k.key === 'general.alignment');
  const alignment = alignKv ? alignKv.raw.readUInt32LE(0) : 32;
  const tensors: TensorField[] = [];
  for (let i = 0; i < nTensors; i++) {
    const nameLength = p;
    const name = str();
    const nDimsAt = p;
    const nDims = buf.readUInt32LE(p);
    p += 4;
    const dimsAt = p;
    const dims: bigint[] = [];
    for (let d = 0; d < nDims; d++) {
      dims.push(buf.readBigInt64LE(p));
      p += 8;
    }
    const typeAt = p;
    const type = buf.readUInt32LE(p);
    p += 4;
    const offsetAt = p;
    const offset = buf.readBigUInt64LE(p);
    p += 8;
    tensors.push({ name, at: { nameLength, nDims: nDimsAt, dims: dimsAt, type: typeAt, offset: offsetAt, end: p }, dims, type, offset });
  }
  const headerEnd = p;
  const dataOffset = Math.ceil(p / alignment) * alignment;
  return { buf, version, kvs, tensors, alignment, headerEnd, dataOffset };
}

/** A key/value for rebuilding: the value's bytes after the type field. */
export interface KvSpec {
  key: string;
  type: number;
  raw: Buffer;
}

export const kvString = (key: string, text: string): KvSpec => ({ key, type: 8, raw: lengthPrefixed(Buffer.from(text, 'utf8')) });
export const kvU32 = (key: string, v: number): KvSpec => ({ key, type: 4, raw: u32(v) });
export const kvU64 = (key: string, v: bigint): KvSpec => ({ key, type: 10, raw: u64(v) });
export const kvI32 = (key: string, v: number): KvSpec => ({ key, type: 5, raw: i32(v) });

export function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
}
export function i32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v);
  return b;
}
export function u64(v: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, v));
  return b;
}
function lengthPrefixed(b: Buffer): Buffer {
  return Buffer.concat([u64(BigInt(b.length)), b]);
}

/**
 * Writes a GGUF from `kvs` and the parsed file's tensors and data, laying the data out again for
 * `alignment` (tensor offsets recomputed, each tensor padded), so the result is valid whenever the
 * edited fields are.
 */
export function rebuildGguf(g: ParsedGguf, kvs: KvSpec[], alignment = g.alignment): Buffer {
  const parts: Buffer[] = [Buffer.from('GGUF', 'latin1'), u32(g.version), u64(BigInt(g.tensors.length)), u64(BigInt(kvs.length))];
  for (const kv of kvs) parts.push(lengthPrefixed(Buffer.from(kv.key, 'utf8')), u32(kv.type), kv.raw);
  const dataParts: Buffer[] = [];
  let offset = 0n;
  const a = BigInt(Math.max(1, alignment));
  const sizes = g.tensors.map((t, i) => {
    const next = g.tensors[i + 1];
    const start = g.dataOffset + Number(t.offset);
    const end = next ? g.dataOffset + Number(next.offset) : g.buf.length;
    return { start, end };
  });
  for (const [i, t] of g.tensors.entries()) {
    parts.push(lengthPrefixed(Buffer.from(t.name, 'utf8')), u32(t.dims.length), ...t.dims.map((d) => u64(d)), u32(t.type), u64(offset));
    const { start, end } = sizes[i]!;
    const data = g.buf.subarray(start, end);
    dataParts.push(data);
    const padded = ((BigInt(data.length) + a - 1n) / a) * a;
    if (padded > BigInt(data.length)) dataParts.push(Buffer.alloc(Number(padded - BigInt(data.length))));
    offset += padded;
  }
  let header = Buffer.concat(parts);
  const pad = Number(((BigInt(header.length) + a - 1n) / a) * a) - header.length;
  header = Buffer.concat([header, Buffer.alloc(pad)]);
  return Buffer.concat([header, ...dataParts]);
}

export function specsOf(g: ParsedGguf): KvSpec[] {
  return g.kvs.map((k) => ({ key: k.key, type: k.type, raw: Buffer.from(k.raw) }));
}

export interface Mutant {
  id: string;
  make(): Buffer;
}

function edit(buf: Buffer, at: number, bytes: Buffer): Buffer {
  const out = Buffer.from(buf);
  bytes.copy(out, at);
  return out;
}

const HUGE = [1n << 31n, 1n << 32n, 1n << 40n, 1n << 53n, 1n << 62n, (1n << 63n) - 1n, (1n << 64n) - 1n];

/** Every mutant of `buf` (a valid GGUF), several hundred, each with an id saying what it does. */
export function ggufMutants(buf: Buffer): Mutant[] {
  const g = parseGguf(buf);
  const out: Mutant[] = [];
  const add = (id: string, make: () => Buffer) => out.push({ id, make });

  // Truncations at every field boundary, inside the data, and one byte short.
  const cuts = new Set<number>([0, 1, 3, 4, 8, 16, 23, 24]);
  for (const k of g.kvs) for (const o of [k.at.keyLength, k.at.keyLength + 8, k.at.type, k.at.value, k.at.value + 4, Math.floor((k.at.value + k.at.end) / 2), k.at.end - 1]) cuts.add(o);
  for (const t of g.tensors) for (const o of [t.at.nameLength, t.at.nDims, t.at.dims, t.at.type, t.at.offset, t.at.end - 1]) cuts.add(o);
  for (const o of [g.headerEnd, g.dataOffset, g.dataOffset + 1, Math.floor((g.dataOffset + buf.length) / 2), buf.length - 1]) cuts.add(o);
  for (const n of [...cuts].filter((c) => c >= 0 && c < buf.length).sort((a, b) => a - b)) add(`cut at byte ${n}`, () => buf.subarray(0, n));

  // The fixed header: magic, version, counts.
  add('magic GGML', () => edit(buf, 0, Buffer.from('GGML', 'latin1')));
  for (const v of [0, 1, 2, 4, 0x03000000, 0xffffffff]) add(`version ${v}`, () => edit(buf, 4, u32(v)));
  for (const [field, at, n] of [['tensor count', 8, g.tensors.length], ['key count', 16, g.kvs.length]] as const) {
    for (const v of [0n, BigInt(n - 1), BigInt(n + 1), (1n << 24n) + 1n, ...HUGE]) add(`${field} ${v}`, () => edit(buf, at, u64(v)));
  }

  // Metadata: key lengths, value types, string lengths, array element types and lengths.
  for (const k of g.kvs) {
    const keyLen = BigInt(Buffer.byteLength(k.key));
    for (const v of [0n, keyLen - 1n, keyLen + 1n, 65_536n, 1n << 40n, (1n << 64n) - 1n]) add(`key "${k.key}" length ${v}`, () => edit(buf, k.at.keyLength, u64(v)));
    for (const t of [9, 13, 9999, 0xffffffff, k.type === 8 ? 4 : 8, k.type === 10 ? 4 : 10, 0]) if (t !== k.type) add(`key "${k.key}" type ${t}`, () => edit(buf, k.at.type, u32(t)));
    if (k.type === 8) {
      const len = BigInt(Buffer.byteLength(k.text ?? ''));
      for (const v of [0n, len + 1n, len > 0n ? len - 1n : 2n, 1n << 20n, ...HUGE]) add(`"${k.key}" string length ${v}`, () => edit(buf, k.at.value, u64(v)));
    }
    if (k.array) {
      for (const t of [9, 13, 255, 0xffffffff, k.array.type === 8 ? 0 : 8, k.array.type === 6 ? 12 : 6]) add(`"${k.key}" element type ${t}`, () => edit(buf, k.at.value, u32(t)));
      const n = BigInt(k.array.length);
      for (const v of [0n, n - 1n, n + 1n, (1n << 26n) + 1n, ...HUGE]) add(`"${k.key}" array length ${v}`, () => edit(buf, k.at.value + 4, u64(v)));
    }
  }

  // Tensor infos: name lengths, dimension counts, each dimension, types, offsets.
  const sample = g.tensors.filter((_, i) => i < 3 || i === g.tensors.length - 1);
  for (const t of sample) {
    for (const v of [0n, 64n, 1n << 40n, (1n << 64n) - 1n]) add(`tensor "${t.name}" name length ${v}`, () => edit(buf, t.at.nameLength, u64(v)));
    for (const v of [0, 3, 5, 1 << 31, 0xffffffff]) if (v !== t.dims.length) add(`tensor "${t.name}" ${v} dimensions`, () => edit(buf, t.at.nDims, u32(v)));
    for (let d = 0; d < t.dims.length; d++) {
      for (const v of [0n, t.dims[d]! + 1n, t.dims[d]! * 2n, 7n, ...HUGE]) add(`tensor "${t.name}" dimension ${d} = ${v}`, () => edit(buf, t.at.dims + 8 * d, u64(v)));
    }
    for (const v of [1, 2, 4, 5, 8, 12, 14, 30, 31, 36, 39, 43, 9999, 0xffffffff]) if (v !== t.type) add(`tensor "${t.name}" type ${v}`, () => edit(buf, t.at.type, u32(v)));
    for (const v of [t.offset + 1n, t.offset + 32n, t.offset + 4096n, 1n << 62n, (1n << 64n) - 1n]) add(`tensor "${t.name}" offset ${v}`, () => edit(buf, t.at.offset, u64(v)));
  }

  // Rebuilt files: general.alignment of every kind, the architecture, hyperparameters, arrays.
  const base = () => specsOf(g).filter((k) => k.key !== 'general.alignment');
  for (const a of [0, 1, 3, 7, 8, 64, 4096, 1 << 31, 0xffffffff]) add(`general.alignment ${a}`, () => rebuildGguf(g, [...base(), kvU32('general.alignment', a)], a === 0 || (a & (a - 1)) !== 0 || a > 1 << 16 ? 32 : a));
  add('general.alignment as u64', () => rebuildGguf(g, [...base(), kvU64('general.alignment', 32n)]));
  add('general.alignment as i32 -32', () => rebuildGguf(g, [...base(), kvI32('general.alignment', -32)]));
  add('general.alignment as a string', () => rebuildGguf(g, [...base(), kvString('general.alignment', '32')]));
  const arch = g.kvs.find((k) => k.key === 'general.architecture')?.text ?? 'llama';
  const replace = (key: string, spec: KvSpec | null) => () => rebuildGguf(g, [...specsOf(g).filter((k) => k.key !== key), ...(spec ? [spec] : [])]);
  for (const a of ['', ' ', 'gpt2', 'bert', 'qwen2', 'mamba', 'nonexistent', 'LLAMA', `${arch}\u0000`, `${arch}\x1b[2J`, 'x'.repeat(100_000)]) add(`general.architecture "${a.slice(0, 20)}"${a.length > 20 ? ` (${a.length} chars)` : ''}`, replace('general.architecture', kvString('general.architecture', a)));
  add('general.architecture missing', replace('general.architecture', null));
  add('general.architecture as u32', replace('general.architecture', kvU32('general.architecture', 1)));
  add('general.name of 2 MiB', replace('general.name', kvString('general.name', 'n'.repeat(2 * 1024 * 1024))));
  add('general.name with escapes', replace('general.name', kvString('general.name', 'evil \x1b]0;pwned\x07\x1b[2J\u202e')));
  for (const [key, values] of [
    [`${arch}.attention.head_count`, [0, 1, 3, 1 << 31, 0xffffffff]],
    [`${arch}.attention.head_count_kv`, [0, 3, 64]],
    [`${arch}.block_count`, [0, 1, 1000, 0xffffffff]],
    [`${arch}.embedding_length`, [0, 7, 128]],
    [`${arch}.feed_forward_length`, [0, 1]],
    [`${arch}.context_length`, [0, 1, 0xffffffff]],
    [`${arch}.rope.dimension_count`, [0, 7, 4096]],
    ['tokenizer.ggml.bos_token_id', [600, 0xffffffff]],
    ['tokenizer.ggml.eos_token_id', [600, 0xffffffff]],
  ] as const) {
    for (const v of values) add(`${key} = ${v}`, replace(key, kvU32(key, v)));
    add(`${key} missing`, replace(key, null));
  }
  for (const model of ['', 'nonexistent', 'gpt2', 'bert']) add(`tokenizer.ggml.model "${model}"`, replace('tokenizer.ggml.model', kvString('tokenizer.ggml.model', model)));
  for (const k of g.kvs.filter((kv) => kv.array)) {
    add(`"${k.key}" emptied`, replace(k.key, { key: k.key, type: 9, raw: Buffer.concat([u32(k.array!.type), u64(0n)]) }));
    add(`"${k.key}" missing`, replace(k.key, null));
  }
  return out;
}
