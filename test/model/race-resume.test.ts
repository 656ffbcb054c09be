// A raced comparison killed mid-race resumes to the race an uninterrupted one runs: `tatra compare
// --race` on ../shared's stories260K and a copy of it (two evaluators that score alike, as in
// race-cli.test.ts) is SIGKILLed once its second round has rows committed; `compare list` shows it
// interrupted, `compare resume` finishes it, each pair is the one job it had, every row of each is
// classified once (those committed before the kill kept as they were), and the race reads as the
// uninterrupted run's (2 rounds of 20 rows, both still in, none dropped). Nothing of the race is
// stored but the rows: the resume replays it from them (docs/method.md §16, racing).
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ComparisonResult } from '../../electron/common/contract/comparisons';
import { CLI_ENV as env, TATRA as tatra, lastJson, queryJobDb, repoRoot, tatraCli as cli, whenJobDb } from '../helpers/tatra-cli';

const data = resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl');
const model = resolve(repoRoot, '..', 'shared', 'models', 'stories260K.gguf');
const dir = mkdtempSync(join(tmpdir(), 'tatra-race-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 40;
const DONE_ROWS = "SELECT job_id, idx, finished, prediction FROM job_rows WHERE status = 'done' ORDER BY job_id, idx";
type DoneRow = { job_id: string; idx: number; finished: string; prediction: string | null };

it.skipIf(!existsSync(data) || !existsSync(model))('a raced comparison SIGKILLed mid-race resumes with every row once and the same race (skipped without ../shared)', { timeout: 600_000 }, async () => {
  const copy = join(dir, 'copy.gguf');
  copyFileSync(model, copy);
  const dataDir = join(dir, 'data');
  const args = ['compare', '--race', '--task', 'sst2', '--data', data, '--generators', model, '--evaluators', `${model},${copy}`, '-n', '0', '-k', '2', '-r', '1', '--limit', String(ROWS), '--concurrency', '1', '--threads', '1', '--data-dir', dataDir];
  const child = spawn(process.execPath, [tatra, ...args], { cwd: repoRoot, env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, signal) => res(signal)));
  // Read as the child commits: the first round (20 rows of each pair) and a row of the second.
  await whenJobDb<DoneRow>(dataDir, DONE_ROWS, (rows) => rows.length > ROWS, exited);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const atKill = queryJobDb<DoneRow>(dataDir, DONE_ROWS);
  expect(atKill.length).toBeGreaterThan(ROWS);
  expect(atKill.length).toBeLessThan(2 * ROWS);

  const [listed] = lastJson<{ id: string; status: string }[]>((await cli(['compare', 'list', '--json', '--data-dir', dataDir])).stdout);
  expect(listed!.status).toBe('interrupted');
  const before = lastJson<ComparisonResult>((await cli(['compare', 'show', listed!.id, '--json', '--data-dir', dataDir])).stdout);

  const resumed = lastJson<ComparisonResult>((await cli(['compare', 'resume', listed!.id, '--threads', '1', '--json', '--data-dir', dataDir])).stdout);
  expect(resumed.status).toBe('done');
  expect(resumed.race).toEqual({ roundRows: 20, rounds: 2, rowsDecided: ROWS, alive: 2, dropped: 0 });
  for (const p of resumed.pairs) expect(p).toMatchObject({ status: 'done', rowsDone: ROWS, rowsTotal: ROWS, dropped: null });
  // Each pair is the job it had before the kill; no job was made twice.
  expect(resumed.pairs.map((p) => p.jobId)).toEqual(before.pairs.map((p) => p.jobId));
  expect(queryJobDb<{ n: number }>(dataDir, 'SELECT COUNT(*) AS n FROM jobs')[0]!.n).toBe(2);
  // Every row once; those committed before the kill untouched.
  const after = queryJobDb<DoneRow>(dataDir, DONE_ROWS);
  expect(after).toHaveLength(2 * ROWS);
  for (const row of atKill) expect(after).toContainEqual(row);
});
