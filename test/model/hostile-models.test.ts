// A folder of hostile model files, listed by the page (a real `tatra serve`: startServer over an
// ApiHost, models.addFolder over HTTP) and by the CLI (`tatra models list FOLDER`): both answer
// (a FIFO named x.gguf blocked every listing before), give every unusable file the same one-line
// reason in words (no engine words: 'Cannot mix BigInt', 'Invalid type or block size', NaN), and
// the CLI's table reaches the terminal without a control character from a file's name.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../electron/api/host';
import { startServer, type RunningServer } from '../../electron/server/server';
import { ggufMutants } from '../helpers/gguf-mutants';
import { storiesModelPath, tinyModelPath } from '../helpers/models';
import { repoRoot, TATRA } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-hostile-models-'));
const folder = join(dir, 'models');
let host: ApiHost;
let server: RunningServer;

/** File name → what it is; the mutants are the cases, made from a real GGUF. */
const MUTANTS: Record<string, string> = {
  'tokens-2e40.gguf': `"tokenizer.ggml.tokens" array length ${1n << 40n}`,
  'alignment-7.gguf': 'general.alignment 7',
  'alignment-0.gguf': 'general.alignment 0',
  'type-9999.gguf': 'tensor "token_embd.weight" type 9999',
  'dim-2e62.gguf': `tensor "token_embd.weight" dimension 0 = ${1n << 62n}`,
  'dim-2e31.gguf': `tensor "token_embd.weight" dimension 1 = ${1n << 31n}`,
};
const EVIL_NAME = 'evil \x1b]0;pwned\x07\x1b[2J.gguf';

beforeAll(async () => {
  mkdirSync(folder);
  const base = readFileSync(storiesModelPath() ?? (await tinyModelPath()));
  writeFileSync(join(folder, 'good.gguf'), base);
  const mutants = ggufMutants(base);
  for (const [name, id] of Object.entries(MUTANTS)) writeFileSync(join(folder, name), mutants.find((m) => m.id === id)!.make());
  execFileSync('mkfifo', [join(folder, 'pipe.gguf')]);
  mkdirSync(join(folder, 'folder.gguf'));
  writeFileSync(join(folder, EVIL_NAME), 'not a model\n');
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test' });
  server = await startServer({ host, port: 0, staticDir: join(dir, 'web'), log: () => undefined });
});
afterAll(async () => {
  await server?.close();
  await host?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

interface Listing {
  models: Array<{ path: string }>;
  invalid: Array<{ path: string; reason: string; code: string }>;
}

const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);

it('the page and the CLI list a folder of hostile files alike: every bad file one reason in words', async () => {
  const res = await fetch(`${server.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': server.token, Origin: server.origin },
    body: JSON.stringify({ method: 'models.addFolder', input: { path: folder } }),
  });
  const answer = (await res.json()) as { ok: boolean; value: Listing };
  expect(answer.ok).toBe(true);
  const page = answer.value;
  const inFolder = (p: { path: string }) => p.path.startsWith(folder);
  expect(page.models.filter(inFolder).map((m) => m.path)).toEqual([join(folder, 'good.gguf')]);
  const pageInvalid = page.invalid.filter(inFolder).sort(byPath);
  expect(pageInvalid.map((i) => i.path).sort()).toEqual([...Object.keys(MUTANTS), 'pipe.gguf', 'folder.gguf', EVIL_NAME].map((n) => join(folder, n)).sort());
  for (const i of pageInvalid) {
    expect(i.reason, i.path).not.toContain('\n');
    expect(i.reason, i.path).not.toMatch(/BigInt|NaN|Invalid type or block size|Cannot read|undefined|RangeError|TypeError/);
  }
  const reason = (name: string) => pageInvalid.find((i) => i.path === join(folder, name))!.reason;
  expect(reason('pipe.gguf')).toMatch(/named pipe, not a regular file/);
  expect(reason('alignment-7.gguf')).toMatch(/general\.alignment is 7, not a power of two/);
  expect(reason('tokens-2e40.gguf')).toMatch(/claims 1099511627776 elements/);

  // The CLI: the same entries and reasons, as JSON; as a table, nothing from a name reaches the terminal raw.
  const json = spawnSync(process.execPath, [TATRA, 'models', 'list', folder, '--json'], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, TATRA_THREADS: '1' } });
  expect(json.status, json.stderr).toBe(0);
  const cli = JSON.parse(json.stdout) as Listing;
  expect(cli.models.map((m) => m.path)).toEqual([join(folder, 'good.gguf')]);
  expect(cli.invalid.sort(byPath)).toEqual(pageInvalid);
  const table = spawnSync(process.execPath, [TATRA, 'models', 'list', folder], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, TATRA_THREADS: '1' } });
  expect(table.status, table.stderr).toBe(0);
  expect(table.stdout).toContain(`${pageInvalid.length} unusable files:`);
  // eslint-disable-next-line no-control-regex
  expect(table.stdout + table.stderr).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
});
