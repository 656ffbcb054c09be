// GGUF key/value pairs, written and read back as raw bytes: enough for tools/synthetic-gguf.ts to
// write a model's metadata and to lift the tokenizer out of llama.cpp's vocab files, keeping every
// value's exact type (int32 token types, float32 scores, ...) by copying bytes.

/** GGUF's value types (gguf_type in ggml's gguf.h). */
export const ValueType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;

// ---------------------------------------------------------------------------------------------
// Encoding

export class ByteWriter {
  private chunks: Buffer[] = [];
  length = 0;

  raw(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.raw(b);
  }
  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.raw(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.raw(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.raw(b);
  }
  pad(alignment: number): void {
    const rest = this.length % alignment;
    if (rest !== 0) this.raw(Buffer.alloc(alignment - rest));
  }
  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}

export function kvString(w: ByteWriter, key: string, value: string): void {
  w.str(key);
  w.u32(ValueType.STRING);
  w.str(value);
}
export function kvU32(w: ByteWriter, key: string, value: number): void {
  w.str(key);
  w.u32(ValueType.UINT32);
  w.u32(value);
}
export function kvF32(w: ByteWriter, key: string, value: number): void {
  w.str(key);
  w.u32(ValueType.FLOAT32);
  w.f32(value);
}
export function kvStrings(w: ByteWriter, key: string, values: readonly string[]): void {
  w.str(key);
  w.u32(ValueType.ARRAY);
  w.u32(ValueType.STRING);
  w.u64(values.length);
  for (const v of values) w.str(v);
}
export function kvI32s(w: ByteWriter, key: string, values: readonly number[]): void {
  w.str(key);
  w.u32(ValueType.ARRAY);
  w.u32(ValueType.INT32);
  w.u64(values.length);
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeInt32LE(v, i * 4));
  w.raw(b);
}

// ---------------------------------------------------------------------------------------------
// Decoding

export interface RawKv {
  key: string;
  bytes: Buffer;
  arrayLength?: number;
}

const scalarSizes: Partial<Record<number, number>> = {
  [ValueType.UINT8]: 1,
  [ValueType.INT8]: 1,
  [ValueType.UINT16]: 2,
  [ValueType.INT16]: 2,
  [ValueType.UINT32]: 4,
  [ValueType.INT32]: 4,
  [ValueType.FLOAT32]: 4,
  [ValueType.BOOL]: 1,
  [ValueType.UINT64]: 8,
  [ValueType.INT64]: 8,
  [ValueType.FLOAT64]: 8,
};

export function readRawKvs(buf: Buffer): RawKv[] {
  if (buf.toString('latin1', 0, 4) !== 'GGUF') throw new Error('vocab file is not GGUF');
  const version = buf.readUInt32LE(4);
  if (version !== 3) throw new Error(`vocab file is GGUF v${version}, expected v3`);
  const kvCount = Number(buf.readBigUInt64LE(16));
  let pos = 24;
  const readStr = (): string => {
    const n = Number(buf.readBigUInt64LE(pos));
    const s = buf.toString('utf8', pos + 8, pos + 8 + n);
    pos += 8 + n;
    return s;
  };
  const skipValue = (type: number): void => {
    if (type === ValueType.STRING) {
      pos += 8 + Number(buf.readBigUInt64LE(pos));
    } else if (type === ValueType.ARRAY) {
      const itemType = buf.readUInt32LE(pos);
      const n = Number(buf.readBigUInt64LE(pos + 4));
      pos += 12;
      const size = scalarSizes[itemType];
      if (size !== undefined) pos += size * n;
      else for (let i = 0; i < n; i++) skipValue(itemType);
    } else {
      const size = scalarSizes[type];
      if (size === undefined) throw new Error(`unknown GGUF value type ${type}`);
      pos += size;
    }
  };
  const out: RawKv[] = [];
  for (let i = 0; i < kvCount; i++) {
    const start = pos;
    const key = readStr();
    const type = buf.readUInt32LE(pos);
    pos += 4;
    const arrayLength = type === ValueType.ARRAY ? Number(buf.readBigUInt64LE(pos + 4)) : undefined;
    skipValue(type);
    out.push({ key, bytes: buf.subarray(start, pos), arrayLength });
  }
  return out;
}

/** Where a raw key/value's value starts: after the key's length and bytes. */
function valueStart(kv: RawKv): number {
  return 8 + Number(kv.bytes.readBigUInt64LE(0));
}

export function readStrings(kv: RawKv): string[] {
  const b = kv.bytes;
  let pos = valueStart(kv) + 4;
  if (b.readUInt32LE(pos) !== ValueType.STRING) throw new Error(`${kv.key} is not an array of strings`);
  const n = Number(b.readBigUInt64LE(pos + 4));
  pos += 12;
  const out: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const len = Number(b.readBigUInt64LE(pos));
    out[i] = b.toString('utf8', pos + 8, pos + 8 + len);
    pos += 8 + len;
  }
  return out;
}

export function readInt32s(kv: RawKv): number[] {
  const b = kv.bytes;
  const pos = valueStart(kv) + 4;
  if (b.readUInt32LE(pos) !== ValueType.INT32) throw new Error(`${kv.key} is not an array of int32`);
  const n = Number(b.readBigUInt64LE(pos + 4));
  return Array.from({ length: n }, (_, i) => b.readInt32LE(pos + 12 + i * 4));
}

export function readU32(kv: RawKv): number {
  const pos = valueStart(kv);
  if (kv.bytes.readUInt32LE(pos) !== ValueType.UINT32) throw new Error(`${kv.key} is not a uint32`);
  return kv.bytes.readUInt32LE(pos + 4);
}

export function rawKv(key: string, write: (w: ByteWriter) => void): RawKv {
  const w = new ByteWriter();
  write(w);
  return { key, bytes: w.toBuffer() };
}
