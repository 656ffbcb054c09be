// vitest globalSetup of the `model` project: builds the Node faces (so CLI tests can spawn
// `node bin/tatra.js`), writes the synthetic models and builds llama-server when it is missing
// (minutes, once: scripts/setup.sh leaves it to the tests), before any test worker starts, so no
// test pays for them inside its own timeout.
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureSyntheticModel } from '../../tools/synthetic-gguf';
import { ensureLlamaServer } from '../helpers/llama-server';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function setup(): Promise<void> {
  const started = Date.now();
  const build = promisify(execFile)(process.execPath, ['scripts/build-node.mjs'], { cwd: repoRoot }).then(
    () => undefined,
    (e: unknown) => {
      // Not fatal: tests that need no CLI should still run; CLI tests then fail on the missing bundle.
      const detail = e instanceof Error ? ((e as { stderr?: string }).stderr || e.message) : String(e);
      process.stderr.write(`global-setup: node scripts/build-node.mjs failed; CLI tests will fail:\n${detail}\n`);
    },
  );
  // Not fatal either: the tests that start llama-server then fail with the build's own error.
  const server = ensureLlamaServer().then(
    () => undefined,
    (e: unknown) => process.stderr.write(`global-setup: ${e instanceof Error ? e.message : String(e)}\n`),
  );
  await Promise.all([build, server, ensureSyntheticModel('tiny'), ensureSyntheticModel('tiny-b')]);
  process.stderr.write(`global-setup: build and synthetic models ready in ${Date.now() - started} ms\n`);
}
