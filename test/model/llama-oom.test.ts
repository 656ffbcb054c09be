// Out of memory is a clear UserError, not "internal: unexpected error": a real load of the tiny
// model with a context far beyond this machine's RAM (node-llama-cpp's InsufficientMemoryError
// when the context is created) names the model, what it needed, what was free and what to change.
import { afterAll, expect, it } from 'vitest';
import { UserError } from '../../electron/common/errors';
import { loadLlamaBackend } from '../../electron/llama/load-backend';
import { disposeLlamaRuntime } from '../../electron/llama/runtime';
import { tinyModelPath } from '../helpers/models';

afterAll(() => disposeLlamaRuntime());

it('a context that cannot fit is one UserError naming the model, the need, what is free and what to change', async () => {
  const tiny = await tinyModelPath();
  // 4M tokens × 64 sequences: at least 64 GiB for this model's context, more than any CI machine's
  // memory, so it is refused before the model loads (a merely too-large context can pass the
  // checks and be allocated).
  const err = await loadLlamaBackend({ modelPath: tiny, threads: 1, contextSize: 4 * 1024 * 1024, sequences: 64 }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UserError);
  const e = err as UserError;
  expect(e.code).toBe('insufficient_memory');
  expect(e.message).toMatch(/^cannot create a 4,194,304 tokens × 64 sequences context for synthetic-tiny-v2\.gguf: not enough memory: it needs at least [\d.]+ GiB \([\d.]+ [KMG]iB weights \+ [\d.]+ GiB for the context\) but only [\d.]+ [MG]iB RAM is free; use a shorter context \(--context-size\), fewer parallel sequences/);
  expect(e.message).not.toMatch(/\n/);
  // The machine is not left holding the model: a normal load right after works.
  const ok = await loadLlamaBackend({ modelPath: tiny, threads: 1, contextSize: 512, sequences: 1 });
  await ok.dispose();
});
