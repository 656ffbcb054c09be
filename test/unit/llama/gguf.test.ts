// inspectGguf on files the test writes: every bad file is one clear line with a code, and a good
// synthetic model is described correctly.
import { copyFile, mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { inspectGguf } from '../../../electron/llama/gguf';
import { ByteWriter, ValueType } from '../../../tools/gguf-kv';
import { ensureSyntheticModel } from '../../../tools/synthetic-gguf';
import { tinyModelPath } from '../../helpers/models';
import { ownedTempDir } from '../../../electron/processes';

let dir: string;
let tiny: string;

beforeAll(async () => {
  dir = ownedTempDir('tatra-gguf-');
  tiny = await tinyModelPath();
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A GGUF v3 header with no tensors and one metadata key, up to the key's value (its type and value follow). */
function oneKeyHeader(name: string): Buffer {
  const w = new ByteWriter();
  w.raw(Buffer.from('GGUF', 'latin1'));
  w.u32(3);
  w.u64(0);
  w.u64(1);
  w.str(name);
  return w.toBuffer();
}

async function failure(path: string): Promise<UserError> {
  try {
    await inspectGguf(path);
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    const err = e as UserError;
    expect(err.message).not.toContain('\n');
    expect(err.message).toContain(path);
    return err;
  }
  throw new Error(`inspectGguf accepted ${path}`);
}

describe('inspectGguf rejects bad files with one clear line', () => {
  it('a text file named .gguf', async () => {
    const path = join(dir, 'notes.gguf');
    await writeFile(path, 'these are my notes, not a model\n');
    const e = await failure(path);
    expect(e.code).toBe('gguf_invalid');
    expect(e.message).toBe(`not a GGUF model: ${path} (the file does not start with "GGUF")`);
  });

  it('an empty file', async () => {
    const path = join(dir, 'empty.gguf');
    await writeFile(path, '');
    const e = await failure(path);
    expect(e.code).toBe('gguf_invalid');
    expect(e.message).toMatch(/empty/);
  });

  it('a missing path', async () => {
    const path = join(dir, 'nope', 'missing.gguf');
    const e = await failure(path);
    expect(e.code).toBe('gguf_missing');
    expect(e.message).toBe(`model file not found: ${path}`);
  });

  it('a directory', async () => {
    const path = join(dir, 'folder.gguf');
    await mkdir(path);
    const e = await failure(path);
    expect(e.code).toBe('gguf_invalid');
    expect(e.message).toMatch(/folder/);
  });

  it('a synthetic model cut in its tensor data', async () => {
    const path = join(dir, 'truncated.gguf');
    await copyFile(tiny, path);
    const size = (await stat(path)).size;
    const fh = await open(path, 'r+');
    await fh.truncate(Math.floor(size * 0.8));
    await fh.close();
    const e = await failure(path);
    expect(e.code).toBe('gguf_truncated');
    expect(e.message).toMatch(/^truncated GGUF model: .*truncated\.gguf \(\d+ bytes, but its tensors need \d+/);
  });

  it('a synthetic model cut inside its header', async () => {
    const path = join(dir, 'header-cut.gguf');
    await copyFile(tiny, path);
    const fh = await open(path, 'r+');
    await fh.truncate(100_000); // inside the tokenizer arrays
    await fh.close();
    const e = await failure(path);
    expect(e.code).toBe('gguf_truncated');
    expect(e.message).toMatch(/^truncated GGUF model: .*header-cut\.gguf \(100000 bytes: the file ends inside its header, in tokenizer\.ggml\.tokens; an interrupted download\?\)$/);
  });

  it('garbage after the magic', async () => {
    const path = join(dir, 'garbage.gguf');
    const bytes = Buffer.alloc(300);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 17) & 0xff;
    bytes.write('GGUF', 0, 'latin1');
    await writeFile(path, bytes);
    const e = await failure(path);
    expect(['gguf_invalid', 'gguf_truncated']).toContain(e.code);
    expect(e.message).toMatch(/corrupt|truncated/);
  });

  it('a vocabulary whose element far down claims more than the file holds: named by its place, as a cut file or as damage', async () => {
    // A GGUF v3 of one key, a string array: 1,000 good elements, then one whose length is `bad`.
    const write = async (name: string, bad: bigint) => {
      const good = Buffer.alloc(1000 * 10);
      for (let i = 0; i < 1000; i++) {
        good.writeBigUInt64LE(2n, i * 10);
        good.write('ab', i * 10 + 8, 'latin1');
      }
      const array = new ByteWriter();
      array.u32(ValueType.ARRAY);
      array.u32(ValueType.STRING);
      array.u64(1001);
      const last = Buffer.alloc(8 + 16);
      last.writeBigUInt64LE(bad, 0);
      const path = join(dir, name);
      await writeFile(path, Buffer.concat([oneKeyHeader('tokenizer.ggml.tokens'), array.toBuffer(), good, last]));
      return failure(path);
    };
    const cut = await write('vocab-cut.gguf', 100n);
    expect(cut.code).toBe('gguf_truncated');
    expect(cut.message).toMatch(/the file ends inside its header, in element 1001 of tokenizer\.ggml\.tokens; an interrupted download\?\)$/);
    const huge = await write('vocab-huge.gguf', 1n << 40n);
    expect(huge.code).toBe('gguf_invalid');
    expect(huge.message).toMatch(/element 1001 of tokenizer\.ggml\.tokens claims 1099511627776 bytes, more than the file holds/);
  });

  it('a GGUF without general.architecture', async () => {
    // A minimal valid GGUF v3: no tensors, one key that is not the architecture.
    const value = new ByteWriter();
    value.u32(ValueType.STRING);
    value.str('x');
    const b = Buffer.concat([oneKeyHeader('general.name'), value.toBuffer()]);
    const path = join(dir, 'no-arch.gguf');
    await writeFile(path, b);
    const e = await failure(path);
    expect(e.code).toBe('gguf_invalid');
    expect(e.message).toMatch(/general\.architecture/);
  });
});

describe('inspectGguf on good files', () => {
  it('describes the tiny synthetic model', async () => {
    const info = await inspectGguf(tiny);
    expect(info.architecture).toBe('qwen2');
    expect(info.hasChatTemplate).toBe(true);
    expect(info.name).toBe('TATRA synthetic tiny');
    expect(info.quantization).toBe('Q8_0');
    expect(info.contextLength).toBe(8192);
    expect(info.embeddingLength).toBe(64);
    expect(info.layers).toBe(2);
    expect(info.fileSize).toBe((await stat(tiny)).size);
    // token_embd 64 x 16,677 (16,384 ordinary tokens and 293 special ones) plus 2 blocks of
    // attention and feed-forward weights.
    expect(info.parameterCount).toBeGreaterThan(64 * 16_677);
    expect(info.parameterCount).toBeLessThan(64 * 16_677 + 200_000);
    expect(info.headerHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives different models different hashes, and the same file the same hash', async () => {
    const a = await inspectGguf(tiny);
    const b = await inspectGguf(await ensureSyntheticModel('tiny-b'));
    expect(a.headerHash).not.toBe(b.headerHash);
    expect((await inspectGguf(tiny)).headerHash).toBe(a.headerHash);
  });

  it('accepts a header-only file only when data is not checked', async () => {
    const path = await ensureSyntheticModel('qwen2.5-7b', { dir, headerOnly: true });
    expect((await stat(path)).size).toBeLessThan(20 * 1024 * 1024);
    await expect(inspectGguf(path)).rejects.toMatchObject({ code: 'gguf_truncated' });
    const info = await inspectGguf(path, { checkData: false });
    expect(info.layers).toBe(28);
    expect(info.embeddingLength).toBe(3584);
    // 7.6B in the real model; ours has the tokenizer's 151,936-row embedding and untied output.
    expect(info.parameterCount).toBeGreaterThan(7.5e9);
    expect(info.parameterCount).toBeLessThan(7.7e9);
  });
});

describe('a damaged fixed header', () => {
  it('is refused instead of hanging the header reader', async () => {
    // Inside the file's folder, which afterAll removes (this one was left behind).
    const folder = await mkdtemp(join(dir, 'damaged-'));
    const short = join(folder, 'short.gguf');
    await writeFile(short, 'GGUF but not really');
    const counts = join(folder, 'counts.gguf');
    const head = Buffer.alloc(64, 0x61);
    head.write('GGUF', 0, 'latin1');
    head.writeUInt32LE(3, 4);
    head.writeBigUInt64LE(0xffffffffffffn, 8);
    head.writeBigUInt64LE(2n, 16);
    await writeFile(counts, head);
    await expect(inspectGguf(short)).rejects.toThrow(/truncated GGUF model: .*short\.gguf/);
    await expect(inspectGguf(counts)).rejects.toThrow(/damaged header/);
  });
});
