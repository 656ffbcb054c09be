// Starts one `tatra serve` for the whole run: built CLI and renderer (built here when missing or
// older than their sources, test/helpers/build.ts), a fresh data folder, the tiny synthetic model,
// threads 1, port 0. Its URL (token included) and the rest reach the tests through environment
// variables read by e2e/fixtures.ts. llama-server is built here when missing (e2e/remote.spec.ts
// drives it), so that no test pays for it in its timeout.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../test/helpers/build';
import { ensureLlamaServer } from '../test/helpers/llama-server';
import { ensureSyntheticModel } from '../tools/synthetic-gguf';
import { startServe } from './serve';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync('/usr/bin/chromium')) {
    throw new Error('Debian Chromium is missing at /usr/bin/chromium: apt-get install -y chromium');
  }
  await Promise.all([ensureBuilt('node'), ensureBuilt('renderer')]);
  mkdirSync(join(root, 'e2e', 'artifacts'), { recursive: true });

  // Not fatal: the spec that starts llama-server then fails with the build's own error.
  const llamaServer = ensureLlamaServer().catch((e: unknown) => process.stderr.write(`e2e global-setup: ${e instanceof Error ? e.message : String(e)}\n`));
  const [model] = await Promise.all([ensureSyntheticModel('tiny'), llamaServer]);
  const dataDir = mkdtempSync(join(tmpdir(), 'tatra-e2e-'));
  // Its own empty models folder (downloads land there too): the first-run spec meets the app as a
  // fresh install does, whatever GGUFs the checkout's models/ holds.
  const modelsDir = join(dataDir, 'models-folder');
  mkdirSync(modelsDir, { recursive: true });
  const served = await startServe({ dataDir, port: 0, env: { TATRA_MODELS_DIR: modelsDir }, echo: Boolean(process.env.TATRA_E2E_VERBOSE) });
  const { child, url } = served;
  const parsed = new URL(url);
  process.env.TATRA_E2E_URL = url;
  process.env.TATRA_E2E_ORIGIN = parsed.origin;
  process.env.TATRA_E2E_TOKEN = parsed.searchParams.get('token') ?? '';
  process.env.TATRA_E2E_MODEL = model;
  process.env.TATRA_E2E_DATA_DIR = dataDir;
  process.env.TATRA_E2E_MODELS_DIR = modelsDir;

  return async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000))]);
    rmSync(dataDir, { recursive: true, force: true });
    // Stopping cleanly is part of the contract of `tatra serve`: dispose the host, exit 0.
    if (code === 'timeout') {
      child.kill('SIGKILL');
      throw new Error(`tatra serve did not exit within 15 s of SIGTERM; stderr: ${served.stderr()}`);
    }
    if (code !== 0) throw new Error(`tatra serve exited with ${code} on SIGTERM; stderr: ${served.stderr()}`);
  };
}
