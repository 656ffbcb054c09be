// Paths of the models tests run on. The synthetic ones are written by test/model/global-setup.ts
// (and on demand here, so a unit test run alone still finds them); stories260K is a real model
// that lives outside the project and may be absent.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSyntheticModel } from '../../tools/synthetic-gguf';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The `tiny` synthetic qwen2 model (2 layers, n_embd 64, the Qwen2.5 chat template, Qwen2's tokenizer
 * cut to its first 16,384 tokens and its special tokens: 1.7 MB).
 */
export function tinyModelPath(): Promise<string> {
  return ensureSyntheticModel('tiny');
}

/** The `tiny-b` synthetic qwen2 model (3 layers, n_embd 96): a second, different model for pairing tests. */
export function tinyModelBPath(): Promise<string> {
  return ensureSyntheticModel('tiny-b');
}

/**
 * The `tiny-full` synthetic model: `tiny` with Qwen2's whole tokenizer (151,936 tokens, 16 MB), for
 * tests that need a valid GGUF of some size (downloads cut and resumed) or the whole vocabulary.
 */
export function tinyFullModelPath(): Promise<string> {
  return ensureSyntheticModel('tiny-full');
}

/** ../shared/models/stories260K.gguf (a real 260K-parameter llama without a chat template), or null when absent. */
export function storiesModelPath(): string | null {
  const path = resolve(repoRoot, '..', 'shared', 'models', 'stories260K.gguf');
  return existsSync(path) ? path : null;
}
