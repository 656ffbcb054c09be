// Native samplers reused from a pool (electron/llama/samplers.ts) on real inference: a held
// model's evaluations stop creating native samplers once the pool holds as many as run at once,
// and a reused sampler samples exactly as a new one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerateRequest } from '../../electron/engine/backend';
import type { LlamaBackend } from '../../electron/llama/backend';
import { loadLlamaBackend } from '../../electron/llama/load-backend';
import { disposeLlamaRuntime } from '../../electron/llama/runtime';
import { samplerPoolStats } from '../../electron/llama/samplers';
import { tinyModelPath } from '../helpers/models';

const SEQUENCES = 4;
const prefix = 'Decide whether the review is positive or negative.\n\n' + Array.from({ length: 8 }, (_, i) => `Review: film ${i} was ${i % 2 ? 'dull' : 'fine'}\nLabel: ${i % 2 ? 'negative' : 'positive'}\n`).join('\n');

/** What one classified input asks of a backend: labels for the input and its paraphrases, and sampled paraphrases. */
function round(n: number): GenerateRequest[] {
  return [
    ...Array.from({ length: 12 }, (_, i): GenerateRequest => ({
      prompt: { system: 'sys', user: `${prefix}\nReview: review ${n}-${i}\nLabel:` },
      sharedUserPrefixLength: prefix.length,
      grammar: 'root ::= " " ("positive" | "negative")',
      maxTokens: 4,
    })),
    ...Array.from({ length: 3 }, (_, i): GenerateRequest => ({ prompt: { system: 'sys', user: `paraphrase review ${n}-${i}` }, maxTokens: 16, temperature: 0.9, seed: n * 10 + i })),
  ];
}

let backend: LlamaBackend;

beforeAll(async () => {
  backend = await loadLlamaBackend({ modelPath: await tinyModelPath(), threads: 1, sequences: SEQUENCES, contextSize: 2048 });
});

afterAll(async () => {
  await backend?.dispose();
  await disposeLlamaRuntime();
});

describe('native sampler pool', () => {
  it('a held backend creates no more native samplers than run at once, however many requests it answers', async () => {
    const before = samplerPoolStats(backend.llama)!;
    expect(before).not.toBeNull();
    for (let n = 0; n < 6; n++) await backend.generate(round(n));
    const after = samplerPoolStats(backend.llama)!;
    // node-llama-cpp builds a sampler per evaluation (each generation, prompt piece and ballast
    // token): hundreds here. At most two per sequence are alive at once (one ending while the next
    // starts), so that is all the pool ever creates for them (counted from `before`: the runtime
    // may have served another test file on this worker).
    expect(after.reused - before.reused).toBeGreaterThan(100);
    expect(after.created - before.created).toBeLessThanOrEqual(2 * SEQUENCES);
    // Each one created is kept: idle in the pool or in use, none dropped.
    expect(after.idle + after.inUse - (before.idle + before.inUse)).toBe(after.created - before.created);
  });

  it('a reused sampler samples as a new one: the same seed gives the same text, run after run', async () => {
    const request: GenerateRequest = { prompt: { system: 'Write.', user: 'Tell me a story.' }, maxTokens: 24, temperature: 1.1, topP: 1, seed: 5 };
    const texts: string[] = [];
    // Each run gets a pooled sampler whose last user may have drawn with this very seed.
    for (let i = 0; i < 4; i++) texts.push((await backend.generate([request]))[0]!.text);
    expect(new Set(texts).size).toBe(1);
    const other = (await backend.generate([{ ...request, seed: 6 }]))[0]!.text;
    expect(other).not.toBe(texts[0]);
    expect((await backend.generate([request]))[0]!.text).toBe(texts[0]);
  });
});
