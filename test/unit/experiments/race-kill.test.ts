// A raced comparison SIGKILLed after it dropped a pairing resumes to the race an uninterrupted one
// runs (docs/method.md §16, racing): `tatra compare --race` over three OpenAI-compatible servers of
// known accuracy (test/helpers/judges.ts: a writer for the examples and paraphrases, an evaluator
// right on every row and one wrong on every row, so every row tells them apart whatever the race's
// order of rows, and the drop comes after the same round in every run). The killed run is stopped
// on an event: the strong evaluator holds its call for the tenth row of the round after the drop, the
// child is killed while it waits. Resumed, the weak pair is still dropped after the same rows with
// the same reason, the strong one runs every row, each row is classified once (those committed
// before the kill kept as they were) and no job is made twice. Nothing of the race is stored but
// the rows: the resume replays the drop from them.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ComparisonResult } from '../../../electron/common/contract/comparisons';
import { judgeServer, writeRaceCsv, type Judge } from '../../helpers/judges';
import { CLI_ENV as env, TATRA as tatra, lastJson, queryJobDb, repoRoot, tatraCli as cli } from '../../helpers/tatra-cli';

const ROWS = 100;
const DONE_ROWS = "SELECT job_id, idx, finished, prediction FROM job_rows WHERE status = 'done' ORDER BY job_id, idx";
type DoneRow = { job_id: string; idx: number; finished: string; prediction: string | null };

const dir = mkdtempSync(join(tmpdir(), 'tatra-race-kill-'));
const servers: Judge[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** What a pair says of its race, whatever its job: status, rows run, why and after how many rows it was dropped. */
const raceOf = (r: ComparisonResult) => r.pairs.map((p) => ({ evaluator: p.evaluator, status: p.status, rowsDone: p.rowsDone, dropped: p.dropped }));

it('a raced comparison SIGKILLed after a drop resumes with the same drop, every row once', { timeout: 300_000 }, async () => {
  const [writer, strong, weak] = await Promise.all([judgeServer('writer', 1), judgeServer('judge-strong', 1), judgeServer('judge-weak', 0)]);
  servers.push(writer, strong, weak);
  const csv = join(dir, 'reviews.csv');
  writeRaceCsv(csv, ROWS);
  const args = (dataDir: string) => ['compare', '--race', '--task', 'sst2', '--data', csv, '--text-col', 'text', '--label-col', 'label', '--generators', writer.spec, '--evaluators', `${strong.spec},${weak.spec}`, '-n', '1', '-k', '2', '-r', '1', '--concurrency', '1', '--data-dir', dataDir, '--json'];

  // Uninterrupted: the race the killed one must end as.
  const whole = lastJson<ComparisonResult>((await cli(args(join(dir, 'whole')))).stdout);
  const [strongPair, weakPair] = [whole.pairs.find((p) => p.evaluator === strong.spec)!, whole.pairs.find((p) => p.evaluator === weak.spec)!];
  expect(strongPair).toMatchObject({ status: 'done', rowsDone: ROWS, dropped: null });
  expect(weakPair.status).toBe('dropped');
  const after = weakPair.dropped!.afterRows;
  expect(after).toBeLessThan(ROWS - 20);
  expect(weakPair.rowsDone).toBe(after);
  // The strong evaluator's calls per row (the original and its paraphrase).
  const perRow = strong.calls() / ROWS;
  expect(Number.isInteger(perRow)).toBe(true);

  // Killed while the strong pair waits on its (after + 11)-th row: the round after the drop has begun.
  const dataDir = join(dir, 'killed');
  const held = strong.holdFrom(strong.calls() + (after + 10) * perRow + 1);
  const child = spawn(process.execPath, [tatra, ...args(dataDir)], { cwd: repoRoot, env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, signal) => res(signal)));
  const arrived = await Promise.race([held.then(() => true), exited.then(() => false)]);
  expect(arrived).toBe(true);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  strong.release();
  const atKill = queryJobDb<DoneRow>(dataDir, DONE_ROWS);
  const perJob = (rows: DoneRow[]) => [...rows.reduce((m, r) => m.set(r.job_id, (m.get(r.job_id) ?? 0) + 1), new Map<string, number>()).values()].sort((a, b) => a - b);
  expect(perJob(atKill)).toEqual([after, after + 10]);

  const [listed] = lastJson<{ id: string; status: string }[]>((await cli(['compare', 'list', '--json', '--data-dir', dataDir])).stdout);
  expect(listed!.status).toBe('interrupted');
  const before = lastJson<ComparisonResult>((await cli(['compare', 'show', listed!.id, '--json', '--data-dir', dataDir])).stdout);
  const resumed = lastJson<ComparisonResult>((await cli(['compare', 'resume', listed!.id, '--json', '--data-dir', dataDir])).stdout);
  expect(resumed.status).toBe('done');
  expect(resumed.race).toEqual(whole.race);
  expect(raceOf(resumed)).toEqual(raceOf(whole));
  // Each pair is the job it had before the kill; no job was made twice; every row once, those
  // committed before the kill untouched.
  expect(resumed.pairs.map((p) => p.jobId)).toEqual(before.pairs.map((p) => p.jobId));
  expect(queryJobDb<{ n: number }>(dataDir, 'SELECT COUNT(*) AS n FROM jobs')[0]!.n).toBe(2);
  const end = queryJobDb<DoneRow>(dataDir, DONE_ROWS);
  expect(perJob(end)).toEqual([after, ROWS]);
  for (const row of atKill) expect(end).toContainEqual(row);
});
