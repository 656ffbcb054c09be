// The first load of a model file happens in a child (electron/llama/trial-load.ts), whose script
// lives in the user's cache folder. A cache folder emptied while the app runs (a user clearing
// ~/.cache) must not turn every new model into "llama.cpp refused it": the next trial writes its
// script again. Real trial loads of the tiny model, in a cache folder of the test's own.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { vouchForModel } from '../../electron/llama/trial-load';
import { tinyModelPath } from '../helpers/models';

const dir = mkdtempSync(join(tmpdir(), 'tatra-trial-load-'));
const previous = process.env.TATRA_CACHE_DIR;
afterEach(() => {
  if (previous === undefined) delete process.env.TATRA_CACHE_DIR;
  else process.env.TATRA_CACHE_DIR = previous;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a cache folder emptied while the app runs: the next new model is still tried, its script written again', async () => {
  const cache = join(dir, 'cache');
  process.env.TATRA_CACHE_DIR = cache;
  // Two versions of the model (copies: a new file is a new version, tried afresh).
  const first = join(dir, 'first.gguf');
  const second = join(dir, 'second.gguf');
  copyFileSync(await tinyModelPath(), first);
  copyFileSync(first, second);
  await vouchForModel(first);
  rmSync(cache, { recursive: true, force: true });
  // Before, the script's path was remembered from the first trial: "Cannot find module …/trial-load-….mjs".
  await vouchForModel(second);
  expect(readFileSync(join(cache, 'vouched-models.json'), 'utf8')).toContain(second);
});
