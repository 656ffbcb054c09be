// Classifying with held models, one way for every face (hold/classify.ts): `tatra classify` on
// remote models only never starts llama.cpp (nor reads the local thread default that starting it
// needs: a bad $TATRA_THREADS fails only a run that loads a local model), and `tatra api`'s
// services keep what they release loaded like the app's, where a command's unload it at once.
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiServices } from '../../electron/cli/commands/api';
import { openCliServices, type CliServices } from '../../electron/cli/session';
import { withHeldModels } from '../../electron/hold';
import { startInstantServer, type InstantServer } from '../helpers/instant-server';
import { tinyModelPath } from '../helpers/models';
import { CLI_ENV, TATRA, lastJson, repoRoot } from '../helpers/tatra-cli';
import { parseModelSpec } from '../../electron/common/model-spec';

let dir: string;
let server: InstantServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-held-'));
  server = await startInstantServer();
});
afterAll(async () => {
  server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** `tatra classify` with a $TATRA_THREADS llama.cpp could not start with. */
function classifyWithBadThreads(generator: string, evaluator: string) {
  const args = ['classify', 'A warm and funny film.', '--task', 'sst2', '--generator', generator, '--evaluator', evaluator, '-n', '1', '-k', '1', '-r', '1', '--json', '--data-dir', join(dir, 'data')];
  return promisify(execFile)(process.execPath, [TATRA, ...args], { cwd: repoRoot, env: { ...CLI_ENV, TATRA_THREADS: 'many' } }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe('tatra classify', () => {
  it('on remote models only never starts llama.cpp', async () => {
    const remote = `openai+${server.origin}/v1#m`;
    const run = await classifyWithBadThreads(remote, remote);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(['negative', 'positive']).toContain(lastJson<{ label: string }>(run.stdout).label);
    expect((await server.stats()).calls).toBeGreaterThan(0);
  });

  it('with a local model starts it, and says what stops it in one line', async () => {
    const run = await classifyWithBadThreads(`openai+${server.origin}/v1#m`, await tinyModelPath());
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe('tatra: TATRA_THREADS must be a whole number of at least 1, got "many"');
  });
});

describe('tatra api', () => {
  /** Holds a copy of the tiny model and lets go of it, deletes the file, then asks for it again. */
  async function askAgainAfterDelete(services: CliServices, name: string): Promise<string> {
    const path = join(dir, `${name}.gguf`);
    const model = parseModelSpec(path);
    await copyFile(await tinyModelPath(), path);
    try {
      await withHeldModels(services.pool, { generator: model, evaluator: model }, async (g) => void expect(g.contextSize).toBeGreaterThan(0));
      await rm(path);
      // Still loaded: held again without the file. Unloaded: loading it again finds no file.
      return await withHeldModels(services.pool, { generator: model, evaluator: model }, async () => 'held again').catch((e: { code?: string }) => e.code ?? 'failed');
    } finally {
      await services.close();
    }
  }

  it('keeps the models it releases loaded, where a command unloads them at once', async () => {
    expect(await askAgainAfterDelete(openApiServices({ dataDir: join(dir, 'api'), threads: 1 }), 'api')).toBe('held again');
    expect(await askAgainAfterDelete(openCliServices({ dataDir: join(dir, 'cli'), threads: 1 }), 'cli')).toBe('gguf_missing');
  });
});
