// Starts one `tatra serve` for the whole run: built CLI and renderer (built here when missing),
// a fresh data folder, the tiny synthetic model, threads 1, port 0. Its URL (token included) and
// the rest reach the tests through environment variables read by e2e/fixtures.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureSyntheticModel } from '../tools/synthetic-gguf';
import { startServe } from './serve';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function build(what: string, args: string[]): void {
  const r = spawnSync(args[0]!, args.slice(1), { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`building ${what} failed (${args.join(' ')})`);
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync('/usr/bin/chromium')) {
    throw new Error('Debian Chromium is missing at /usr/bin/chromium: apt-get install -y chromium');
  }
  if (!existsSync(join(root, 'dist', 'cli.js'))) build('the CLI', ['node', 'scripts/build-node.mjs']);
  if (!existsSync(join(root, 'dist', 'renderer', 'index.html'))) build('the renderer', ['npx', 'vite', 'build']);
  mkdirSync(join(root, 'e2e', 'artifacts'), { recursive: true });

  const model = await ensureSyntheticModel('tiny');
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
