// Writes GGUF v3 files of a chosen qwen2 shape with random (seeded, so deterministic) weights, the
// real Qwen2 tokenizer and the real Qwen2.5 chat template. Tests and benchmarks need models that
// load and run through node-llama-cpp exactly like downloaded ones, without downloading anything:
// the tokenizer and template come from the llama.cpp source that node-llama-cpp's npm package
// carries (llama/gitRelease.bundle). The weights are noise, so the text is gibberish; grammars
// still force well-formed output, which is what the plumbing tests need.
//
// The Qwen2.5 shapes carry the whole tokenizer (151,936 tokens), so they cost what the real models
// cost. The two tiny shapes the tests run carry its first 16,384 tokens and merges and every
// special token (docs/architecture.md §9): the same byte-level BPE, pre-tokenizer and chat
// template, but a grammar pass over the vocabulary, the output layer and the load cost a tenth.
//
//   npx tsx tools/synthetic-gguf.ts <shape> [--out file] [--header-only]
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ByteWriter, kvF32, kvI32s, kvString, kvStrings, kvU32, rawKv, readInt32s, readRawKvs, readStrings, readU32, type RawKv } from './gguf-kv';

const execFileAsync = promisify(execFile);

export type SyntheticShape = 'tiny' | 'tiny-b' | 'tiny-full' | 'qwen2.5-0.5b' | 'qwen2.5-1.5b' | 'qwen2.5-7b';

export const syntheticShapes: readonly SyntheticShape[] = ['tiny', 'tiny-b', 'tiny-full', 'qwen2.5-0.5b', 'qwen2.5-1.5b', 'qwen2.5-7b'];

export interface ShapeSpec {
  layers: number;
  embedding: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  contextLength: number;
  /** Untied output projection; Qwen2.5 0.5B and 1.5B tie it to the token embedding, 7B does not. */
  separateOutput: boolean;
  /** How many of the tokenizer's ordinary tokens to keep (`'all'`: the real vocabulary). */
  vocabulary: number | 'all';
  /** Part of the cached file's name: bump it when the bytes the shape produces change. */
  version: number;
}

/**
 * The tiny shapes keep every matrix row a multiple of 32 (a Q8_0 block). `tiny-full` is `tiny` with
 * the whole tokenizer (16 MB): a test that needs a file of some size (downloads, resumes) or the real
 * vocabulary's cost uses it. The Qwen2.5 shapes use the published hyper-parameters; the vocabulary
 * size is the tokenizer's (151,936 tokens), which is the real one for 0.5B and 1.5B; the real 7B pads
 * its embedding to 152,064 rows.
 */
export const shapeSpecs: Record<SyntheticShape, ShapeSpec> = {
  tiny: { layers: 2, embedding: 64, heads: 4, kvHeads: 2, feedForward: 128, contextLength: 8192, separateOutput: false, vocabulary: 16_384, version: 2 },
  'tiny-b': { layers: 3, embedding: 96, heads: 4, kvHeads: 2, feedForward: 192, contextLength: 8192, separateOutput: true, vocabulary: 16_384, version: 2 },
  'tiny-full': { layers: 2, embedding: 64, heads: 4, kvHeads: 2, feedForward: 128, contextLength: 8192, separateOutput: false, vocabulary: 'all', version: 1 },
  'qwen2.5-0.5b': { layers: 24, embedding: 896, heads: 14, kvHeads: 2, feedForward: 4864, contextLength: 32768, separateOutput: false, vocabulary: 'all', version: 1 },
  'qwen2.5-1.5b': { layers: 28, embedding: 1536, heads: 12, kvHeads: 2, feedForward: 8960, contextLength: 32768, separateOutput: false, vocabulary: 'all', version: 1 },
  'qwen2.5-7b': { layers: 28, embedding: 3584, heads: 28, kvHeads: 4, feedForward: 18944, contextLength: 32768, separateOutput: true, vocabulary: 'all', version: 1 },
};

const ALIGNMENT = 32;
const VOCAB_PATH = 'models/ggml-vocab-qwen2.gguf';
const TEMPLATE_PATH = 'models/templates/Qwen-Qwen2.5-7B-Instruct.jinja';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export function defaultSyntheticDir(): string {
  return join(repoRoot, '.cache', 'models');
}

// ---------------------------------------------------------------------------------------------
// The tokenizer

/** llama.cpp's LLAMA_TOKEN_TYPE_NORMAL; the control and added tokens have other types. */
const TOKEN_TYPE_NORMAL = 1;

/**
 * The tokenizer cut to its first `ordinary` tokens plus every token that is not an ordinary one
 * (Qwen2's control and added tokens, at the end of its list), with the merges whose parts and
 * result are all kept. Byte-level BPE keeps its 256 byte tokens first, so every text still
 * tokenizes, in more pieces; the special tokens keep their text, so the chat template is unchanged.
 */
function cutTokenizer(kvs: readonly RawKv[], ordinary: number): { tokenizerKvs: RawKv[]; vocabSize: number } {
  const find = (key: string): RawKv => {
    const kv = kvs.find((k) => k.key === key);
    if (!kv) throw new Error(`the vocab file has no ${key}`);
    return kv;
  };
  const tokens = readStrings(find('tokenizer.ggml.tokens'));
  const types = readInt32s(find('tokenizer.ggml.token_type'));
  const kept = tokens.flatMap((_, id) => (id < ordinary || types[id] !== TOKEN_TYPE_NORMAL ? [id] : []));
  const newId = new Map(kept.map((id, i) => [id, i]));
  const keptText = new Set(kept.slice(0, ordinary).map((id) => tokens[id]!));
  const merges = readStrings(find('tokenizer.ggml.merges')).filter((m) => {
    const [a, b] = m.split(' ');
    return a !== undefined && b !== undefined && keptText.has(a) && keptText.has(b) && keptText.has(a + b);
  });
  const tokenizerKvs = kvs.map((kv): RawKv => {
    switch (kv.key) {
      case 'tokenizer.ggml.tokens':
        return rawKv(kv.key, (w) => kvStrings(w, kv.key, kept.map((id) => tokens[id]!)));
      case 'tokenizer.ggml.token_type':
        return rawKv(kv.key, (w) => kvI32s(w, kv.key, kept.map((id) => types[id]!)));
      case 'tokenizer.ggml.merges':
        return rawKv(kv.key, (w) => kvStrings(w, kv.key, merges));
      default: {
        if (!kv.key.endsWith('_token_id')) return kv;
        const id = newId.get(readU32(kv));
        if (id === undefined) throw new Error(`${kv.key} names a token the cut vocabulary drops`);
        return rawKv(kv.key, (w) => kvU32(w, kv.key, id));
      }
    }
  });
  return { tokenizerKvs, vocabSize: kept.length };
}

// ---------------------------------------------------------------------------------------------
// The llama.cpp source

async function gitShow(gitDir: string, path: string): Promise<Buffer> {
  const { stdout } = await execFileAsync('git', ['--git-dir', gitDir, 'show', `HEAD:${path}`], {
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** Clones node-llama-cpp's llama.cpp bundle once into .cache/llama.cpp-src (no checkout). */
async function llamaCppGitDir(): Promise<string> {
  const target = join(repoRoot, '.cache', 'llama.cpp-src');
  const gitDir = join(target, '.git');
  if (existsSync(gitDir)) return gitDir;
  const bundle = join(repoRoot, 'node_modules', 'node-llama-cpp', 'llama', 'gitRelease.bundle');
  if (!existsSync(bundle)) throw new Error(`cannot find the llama.cpp source bundle at ${bundle}`);
  await mkdir(dirname(target), { recursive: true });
  // Clone beside the target and rename, so a concurrent process never sees a half-made clone.
  const tmp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await execFileAsync('git', ['clone', '-q', '--no-checkout', bundle, tmp]);
  try {
    await rename(tmp, target);
  } catch {
    await rm(tmp, { recursive: true, force: true }); // another process won the race
  }
  return gitDir;
}

let sourcesPromise: Promise<{ tokenizerKvs: RawKv[]; vocabSize: number; template: string }> | undefined;

function loadSources(): Promise<{ tokenizerKvs: RawKv[]; vocabSize: number; template: string }> {
  sourcesPromise ??= (async () => {
    // $TATRA_LLAMA_CPP_SRC: a checked-out llama.cpp tree (the GPU pack carries one; no git there).
    const checkout = process.env.TATRA_LLAMA_CPP_SRC;
    const gitDir = checkout ? '' : await llamaCppGitDir();
    const read = (path: string): Promise<Buffer> => (checkout ? readFile(join(checkout, path)) : gitShow(gitDir, path));
    const [vocab, template] = await Promise.all([read(VOCAB_PATH), read(TEMPLATE_PATH)]);
    const kvs = readRawKvs(vocab);
    // The template is set from the .jinja file below; a copy in the vocab file would be a duplicate key.
    const tokenizerKvs = kvs.filter((kv) => kv.key.startsWith('tokenizer.') && kv.key !== 'tokenizer.chat_template');
    const tokens = tokenizerKvs.find((kv) => kv.key === 'tokenizer.ggml.tokens');
    if (!tokens?.arrayLength) throw new Error('the vocab file has no tokenizer.ggml.tokens');
    return { tokenizerKvs, vocabSize: tokens.arrayLength, template: template.toString('utf8') };
  })();
  return sourcesPromise;
}

// ---------------------------------------------------------------------------------------------
// Tensors

const enum GgmlType {
  F32 = 0,
  Q8_0 = 8,
}

/** general.file_type: LLAMA_FTYPE_MOSTLY_Q8_0. */
const FILE_TYPE_MOSTLY_Q8_0 = 7;

interface TensorPlan {
  name: string;
  /** ggml order: dims[0] is the row length (the input dimension of a matrix). */
  dims: number[];
  type: GgmlType;
  /** Standard deviation of the random values; `fill` overrides (norm weights are 1). */
  std: number;
  fill?: number;
}

function planTensors(spec: ShapeSpec, vocabSize: number): TensorPlan[] {
  const e = spec.embedding;
  const headDim = e / spec.heads;
  const kv = headDim * spec.kvHeads;
  const ff = spec.feedForward;
  // Weights scaled by 1/sqrt(fan-in) keep activations around unit size through every layer, so
  // logits stay finite; the embedding is kept small so the tied output does not saturate.
  const mat = (name: string, rowLength: number, rows: number): TensorPlan => ({
    name,
    dims: [rowLength, rows],
    type: GgmlType.Q8_0,
    std: 1 / Math.sqrt(rowLength),
  });
  const vec = (name: string, n: number, std: number, fill?: number): TensorPlan => ({ name, dims: [n], type: GgmlType.F32, std, fill });
  const tensors: TensorPlan[] = [{ name: 'token_embd.weight', dims: [e, vocabSize], type: GgmlType.Q8_0, std: 0.5 }];
  for (let i = 0; i < spec.layers; i++) {
    const b = `blk.${i}`;
    tensors.push(
      vec(`${b}.attn_norm.weight`, e, 0, 1),
      mat(`${b}.attn_q.weight`, e, e),
      vec(`${b}.attn_q.bias`, e, 0.02),
      mat(`${b}.attn_k.weight`, e, kv),
      vec(`${b}.attn_k.bias`, kv, 0.02),
      mat(`${b}.attn_v.weight`, e, kv),
      vec(`${b}.attn_v.bias`, kv, 0.02),
      mat(`${b}.attn_output.weight`, e, e),
      vec(`${b}.ffn_norm.weight`, e, 0, 1),
      mat(`${b}.ffn_gate.weight`, e, ff),
      mat(`${b}.ffn_up.weight`, e, ff),
      mat(`${b}.ffn_down.weight`, ff, e),
    );
  }
  tensors.push(vec('output_norm.weight', e, 0, 1));
  if (spec.separateOutput) tensors.push({ ...mat('output.weight', e, vocabSize), std: 0.5 });
  return tensors;
}

function tensorBytes(t: TensorPlan): number {
  const elements = t.dims.reduce((a, b) => a * b, 1);
  if (t.type === GgmlType.F32) return elements * 4;
  if (t.dims[0]! % 32 !== 0) throw new Error(`${t.name}: row length ${t.dims[0]} is not a multiple of 32`);
  return (elements / 32) * 34;
}

function alignUp(n: number, a: number): number {
  return Math.ceil(n / a) * a;
}

/** xorshift128: fast, seedable, and the same on every platform. */
class Prng {
  private s: Uint32Array;
  constructor(seed: number) {
    this.s = new Uint32Array([seed ^ 0x9e3779b9, 0x243f6a88, 0xb7e15162, (seed * 2654435761) >>> 0 || 1]);
    for (let i = 0; i < 16; i++) this.next();
  }
  next(): number {
    const s = this.s;
    let t = s[3]!;
    const x = s[0]!;
    s[3] = s[2]!;
    s[2] = s[1]!;
    s[1] = x;
    t ^= t << 11;
    t ^= t >>> 8;
    s[0] = t ^ x ^ (x >>> 19);
    return s[0]!;
  }
}

function toHalf(value: number): number {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp <= 0) return sign; // our scales never underflow; flush to zero
  if (exp >= 31) return sign | 0x7c00;
  return sign | (exp << 10) | (mant >>> 13);
}

function tensorSeed(shape: SyntheticShape, name: string): number {
  let h = 2166136261;
  for (const c of `${shape}/${name}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

const CHUNK_BLOCKS = 64 * 1024; // 2.2 MB of Q8_0 per write

async function writeTensorData(fh: FileHandle, shape: SyntheticShape, t: TensorPlan): Promise<number> {
  const rng = new Prng(tensorSeed(shape, t.name));
  const elements = t.dims.reduce((a, b) => a * b, 1);
  let written = 0;
  if (t.type === GgmlType.F32) {
    const buf = Buffer.alloc(elements * 4);
    // Uniform in [-a, a] has standard deviation a/sqrt(3).
    const a = t.std * Math.sqrt(3);
    for (let i = 0; i < elements; i++) {
      const v = t.fill ?? ((rng.next() / 0xffffffff) * 2 - 1) * a;
      buf.writeFloatLE(v, i * 4);
    }
    await fh.write(buf);
    written = buf.length;
  } else {
    // Q8_0 block: an f16 scale, then 32 int8 quants. Random bytes are the quants directly, so
    // nothing is quantised: value = int8 * scale, uniform in about [-127, 127] * scale.
    const scale = toHalf((t.std * Math.sqrt(3)) / 127);
    let blocks = elements / 32;
    while (blocks > 0) {
      const n = Math.min(blocks, CHUNK_BLOCKS);
      const buf = Buffer.allocUnsafe(n * 34);
      const words = new Uint32Array(buf.buffer, buf.byteOffset, Math.floor(buf.length / 4));
      for (let i = 0; i < words.length; i++) words[i] = rng.next();
      for (let i = words.length * 4; i < buf.length; i++) buf[i] = rng.next() & 0xff;
      for (let b = 0; b < n; b++) buf.writeUInt16LE(scale, b * 34);
      await fh.write(buf);
      written += buf.length;
      blocks -= n;
    }
  }
  return written;
}

// ---------------------------------------------------------------------------------------------

export interface WriteSyntheticOptions {
  /** Header and tensor infos only, no tensor data: a few MB even for the 7B shape. */
  headerOnly?: boolean;
}

/** Writes a synthetic model to `outPath` (directly; `ensureSyntheticModel` adds caching and atomicity). */
export async function writeSyntheticGguf(shape: SyntheticShape, outPath: string, opts: WriteSyntheticOptions = {}): Promise<void> {
  const spec = shapeSpecs[shape];
  if (!spec) throw new Error(`unknown synthetic shape "${String(shape)}" (known: ${syntheticShapes.join(', ')})`);
  const sources = await loadSources();
  const { tokenizerKvs, vocabSize } = spec.vocabulary === 'all' ? sources : cutTokenizer(sources.tokenizerKvs, spec.vocabulary);
  const { template } = sources;
  const tensors = planTensors(spec, vocabSize);

  const w = new ByteWriter();
  w.raw(Buffer.from('GGUF', 'latin1'));
  w.u32(3);
  w.u64(tensors.length);
  const ownKvs = 13;
  w.u64(ownKvs + tokenizerKvs.length);
  kvString(w, 'general.architecture', 'qwen2');
  kvString(w, 'general.name', `TATRA synthetic ${shape}`);
  kvU32(w, 'general.file_type', FILE_TYPE_MOSTLY_Q8_0);
  kvU32(w, 'general.alignment', ALIGNMENT);
  kvU32(w, 'qwen2.context_length', spec.contextLength);
  kvU32(w, 'qwen2.embedding_length', spec.embedding);
  kvU32(w, 'qwen2.block_count', spec.layers);
  kvU32(w, 'qwen2.feed_forward_length', spec.feedForward);
  kvU32(w, 'qwen2.attention.head_count', spec.heads);
  kvU32(w, 'qwen2.attention.head_count_kv', spec.kvHeads);
  kvF32(w, 'qwen2.rope.freq_base', 1_000_000);
  kvF32(w, 'qwen2.attention.layer_norm_rms_epsilon', 1e-6);
  kvString(w, 'tokenizer.chat_template', template);
  for (const kv of tokenizerKvs) w.raw(kv.bytes);

  let offset = 0;
  for (const t of tensors) {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(t.type);
    w.u64(offset);
    offset = alignUp(offset + tensorBytes(t), ALIGNMENT);
  }
  w.pad(ALIGNMENT);

  await mkdir(dirname(outPath), { recursive: true });
  const fh = await open(outPath, 'w');
  try {
    await fh.write(w.toBuffer());
    if (!opts.headerOnly) {
      for (const t of tensors) {
        const n = await writeTensorData(fh, shape, t);
        const pad = alignUp(n, ALIGNMENT) - n;
        if (pad > 0) await fh.write(Buffer.alloc(pad));
      }
    }
  } finally {
    await fh.close();
  }
}

export interface EnsureSyntheticOptions {
  /** Cache folder; default `.cache/models/` in the repository. */
  dir?: string;
  headerOnly?: boolean;
}

/**
 * Path of a synthetic model of `shape`, written once and cached. Written to a temporary file and
 * renamed, so concurrent test processes never see half a file (the content is deterministic, so
 * whichever rename lands last changes nothing).
 */
export async function ensureSyntheticModel(shape: SyntheticShape, opts: EnsureSyntheticOptions = {}): Promise<string> {
  const dir = opts.dir ?? defaultSyntheticDir();
  const spec = shapeSpecs[shape];
  if (!spec) throw new Error(`unknown synthetic shape "${String(shape)}" (known: ${syntheticShapes.join(', ')})`);
  const file = join(dir, `synthetic-${shape}-v${spec.version}${opts.headerOnly ? '-header' : ''}.gguf`);
  try {
    if ((await stat(file)).size > 0) return file;
  } catch {
    // not there yet
  }
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeSyntheticGguf(shape, tmp, { headerOnly: opts.headerOnly });
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  return file;
}

async function cli(argv: string[]): Promise<void> {
  const args = [...argv];
  const headerOnly = args.includes('--header-only');
  const outIndex = args.indexOf('--out');
  const out = outIndex >= 0 ? args[outIndex + 1] : undefined;
  const shape = args.find((a, i) => !a.startsWith('--') && (outIndex < 0 || i !== outIndex + 1));
  if (!shape || !(syntheticShapes as readonly string[]).includes(shape) || (outIndex >= 0 && !out)) {
    process.stderr.write(`usage: tsx tools/synthetic-gguf.ts <${syntheticShapes.join('|')}> [--out file] [--header-only]\n`);
    process.exitCode = 2;
    return;
  }
  const started = Date.now();
  let path: string;
  if (out) {
    path = resolve(out);
    const tmp = `${path}.tmp-${process.pid}`;
    await writeSyntheticGguf(shape as SyntheticShape, tmp, { headerOnly });
    await rename(tmp, path);
  } else {
    path = await ensureSyntheticModel(shape as SyntheticShape, { headerOnly });
  }
  const size = (await stat(path)).size;
  process.stdout.write(`${path} (${(size / 1024 / 1024).toFixed(1)} MB, ${Date.now() - started} ms)\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv.slice(2)).catch((e: unknown) => {
    process.stderr.write(`synthetic-gguf: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
