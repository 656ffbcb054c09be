// vitest globalSetup of the `model` project: builds the Node faces when they are missing or stale
// (so CLI tests can spawn `node bin/tatra.js`), writes the synthetic models and builds llama-server
// when it is missing (minutes, once per machine: scripts/setup.sh leaves it to the tests), before
// any test file runs, so no test pays for them inside its own timeout.
import { ensureSyntheticModel } from '../../tools/synthetic-gguf';
import { ensureBuilt } from '../helpers/build';
import { ensureLlamaServer } from '../helpers/llama-server';

export default async function setup(): Promise<void> {
  const started = Date.now();
  // Not fatal: tests that need no CLI should still run; CLI tests then fail on the missing bundle.
  const build = ensureBuilt('node').catch((e: unknown) => process.stderr.write(`global-setup: ${e instanceof Error ? e.message : String(e)}; CLI tests will fail\n`));
  // Not fatal either: the tests that start llama-server then fail with the build's own error.
  const server = ensureLlamaServer().catch((e: unknown) => process.stderr.write(`global-setup: ${e instanceof Error ? e.message : String(e)}\n`));
  await Promise.all([build, server, ensureSyntheticModel('tiny'), ensureSyntheticModel('tiny-b')]);
  process.stderr.write(`global-setup: build and synthetic models ready in ${Date.now() - started} ms\n`);
}
