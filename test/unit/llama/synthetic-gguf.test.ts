// The synthetic model writer: deterministic bytes, the real Qwen2 tokenizer (whole, or cut for the
// tiny shapes) and chat template.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSyntheticModel, shapeSpecs, writeSyntheticGguf } from '../../../tools/synthetic-gguf';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-synth-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha = async (p: string) => createHash('sha256').update(await readFile(p)).digest('hex');

describe('synthetic GGUF writer', () => {
  it('writes the same bytes twice (seeded weights)', async () => {
    await writeSyntheticGguf('tiny', join(dir, 'a.gguf'));
    await writeSyntheticGguf('tiny', join(dir, 'b.gguf'));
    expect(await sha(join(dir, 'a.gguf'))).toBe(await sha(join(dir, 'b.gguf')));
  }, 120_000);

  it('carries the qwen2 hyper-parameters, the real tokenizer and the Qwen2.5 template', async () => {
    const path = await ensureSyntheticModel('tiny-b', { dir });
    const info = await readGgufFileInfo(path, { logWarnings: false });
    const md = info.metadata as unknown as Record<string, Record<string, unknown>>;
    expect(md.general!.architecture).toBe('qwen2');
    expect(md.qwen2!.block_count).toBe(shapeSpecs['tiny-b'].layers);
    expect(md.qwen2!.embedding_length).toBe(96);
    expect(md.tokenizer!.ggml).toMatchObject({ model: 'gpt2', pre: 'qwen2' });
    // Qwen2's tokenizer cut to its first 16,384 tokens, its 293 control and added tokens kept (their
    // ids moved down with them), and the merges among the tokens kept.
    const ggml = md.tokenizer!.ggml as { tokens: string[]; token_type: number[]; merges: string[]; eos_token_id: number };
    expect(ggml.tokens.length).toBe(16_384 + 293);
    expect(ggml.tokens.slice(16_384, 16_387)).toEqual(['<|endoftext|>', '<|im_start|>', '<|im_end|>']);
    expect(ggml.eos_token_id).toBe(16_384);
    expect(ggml.token_type.slice(0, 16_384).every((t) => t === 1)).toBe(true);
    expect(ggml.merges.length).toBeGreaterThan(16_000);
    const kept = new Set(ggml.tokens);
    expect(ggml.merges.every((m) => { const [a, b] = m.split(' '); return kept.has(a!) && kept.has(b!) && kept.has(a! + b!); })).toBe(true);
    expect(info.tensorInfo!.find((t) => t.name === 'token_embd.weight')!.dimensions.map(Number)).toEqual([96, 16_384 + 293]);
    expect(md.tokenizer!.chat_template).toMatch(/<\|im_start\|>/);
    const names = info.tensorInfo!.map((t) => t.name);
    expect(names).toContain('blk.2.attn_q.bias');
    expect(names).toContain('output.weight'); // tiny-b has an untied output; tiny does not
    expect(names).not.toContain('blk.3.attn_q.weight');
  }, 120_000);

  it('tiny-full carries the whole tokenizer', async () => {
    const info = await readGgufFileInfo(await ensureSyntheticModel('tiny-full', { dir }), { logWarnings: false });
    const ggml = (info.metadata as unknown as { tokenizer: { ggml: { tokens: string[]; merges: string[]; eos_token_id: number } } }).tokenizer.ggml;
    expect(ggml.tokens.length).toBe(151_936);
    expect(ggml.merges.length).toBeGreaterThan(150_000);
    expect(ggml.eos_token_id).toBe(151_643);
  }, 120_000);

  it('rejects an unknown shape', async () => {
    await expect(writeSyntheticGguf('huge' as never, join(dir, 'x.gguf'))).rejects.toThrow(/unknown synthetic shape "huge"/);
  });
});
