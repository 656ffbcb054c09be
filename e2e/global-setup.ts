// What every worker needs before its first test, made once for the run: the built CLI and
// renderer (built here when missing or older than their sources, test/helpers/build.ts; `npm test`
// has built them already, so this only checks their dates), the synthetic models the specs load,
// and llama-server (e2e/remote.spec.ts drives it), so that no test pays for them in its timeout.
// Each worker starts its own `tatra serve` (e2e/fixtures.ts); the model's path reaches it through
// TATRA_E2E_MODEL.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../test/helpers/build';
import { ensureLlamaServer } from '../test/helpers/llama-server';
import { ensureSyntheticModel } from '../tools/synthetic-gguf';
import { chromiumPath, FULL_CHROMIUM, HEADLESS_SHELL } from './browser';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export default async function globalSetup(): Promise<void> {
  const browser = chromiumPath();
  if (!existsSync(browser)) throw new Error(`no Chromium at ${browser}: apt-get install -y chromium chromium-headless-shell`);
  if (browser === FULL_CHROMIUM && !process.env.TATRA_E2E_HEADED && !process.env.TATRA_CHROMIUM) {
    process.stderr.write(`e2e: the full browser runs headless (slower): apt-get install -y chromium-headless-shell puts Debian's headless shell at ${HEADLESS_SHELL}\n`);
  }
  mkdirSync(join(root, 'e2e', 'artifacts'), { recursive: true });
  // Not fatal: the spec that starts llama-server then fails with the build's own error.
  const llamaServer = ensureLlamaServer().catch((e: unknown) => process.stderr.write(`e2e global-setup: ${e instanceof Error ? e.message : String(e)}\n`));
  // tiny-b is the second model of models.spec.ts's 2×2 comparison.
  const [model] = await Promise.all([ensureSyntheticModel('tiny'), ensureSyntheticModel('tiny-b'), ensureBuilt('node'), ensureBuilt('renderer'), llamaServer]);
  process.env.TATRA_E2E_MODEL = model;
}
