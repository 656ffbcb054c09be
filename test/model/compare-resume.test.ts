// A comparison is one resumable experiment, like a sweep: `tatra compare` on two synthetic GGUFs
// in a child process is killed with SIGKILL once its first pair is done and the second has rows
// committed; `tatra compare list` shows it interrupted, `tatra compare resume ID` finishes it, and
// every pair ran as exactly one job, every row of it classified once (the rows committed before
// the kill are kept as they were, not classified again).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ComparisonRecord, ComparisonSummary } from '../../electron/common/contract/models';
import { tinyModelBPath, tinyModelPath } from '../helpers/models';
import { writeReviewsCsv } from '../helpers/reviews';
import { CLI_ENV as env, TATRA as tatra, lastJson as json, queryJobDb, repoRoot, tatraCli as cli } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-compare-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 4;

interface DoneRow {
  job_id: string;
  idx: number;
  finished: string;
  prediction: string | null;
}

function doneRows(dataDir: string): DoneRow[] {
  return queryJobDb<DoneRow>(dataDir, "SELECT job_id, idx, finished, prediction FROM job_rows WHERE status = 'done' ORDER BY job_id, idx");
}

it('a SIGKILLed comparison resumes with every pair and every row exactly once', async () => {
  const [a, b] = [await tinyModelPath(), await tinyModelBPath()];
  const data = join(dir, 'reviews.csv');
  writeReviewsCsv(data, ROWS);
  const dataDir = join(dir, 'data');
  const args = ['compare', '--task', 'sst2', '--data', data, '--text-col', 'review', '--label-col', 'sentiment', '--label-map', 'pos=positive,neg=negative', '--generators', `${a},${b}`, '--evaluators', a, '-n', '1', '-k', '2', '-r', '1', '--concurrency', '1', '--threads', '1', '--data-dir', dataDir];

  const child = spawn(process.execPath, [tatra, ...args], { cwd: repoRoot, env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, signal) => res(signal)));
  // No time limit of its own: poll until the first pair is done and the second has a row in (or
  // the comparison ended by itself, which the expectation below reports).
  let ended = false;
  void exited.then(() => (ended = true));
  while (!ended && doneRows(dataDir).length < ROWS + 1) await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const atKill = doneRows(dataDir);
  expect(atKill.length).toBeGreaterThan(ROWS);
  expect(atKill.length).toBeLessThan(2 * ROWS);

  const [listed] = json<ComparisonSummary[]>((await cli(['compare', 'list', '--json', '--data-dir', dataDir])).stdout);
  expect(listed).toMatchObject({ status: 'interrupted', progress: { jobsDone: 1, jobsTotal: 2 } });
  const before = json<ComparisonRecord>((await cli(['compare', 'show', listed!.id.slice(0, 6), '--json', '--data-dir', dataDir])).stdout);
  expect(before.pairs.map((p) => p.status)).toEqual(['done', 'paused']);

  const resumed = json<ComparisonRecord>((await cli(['compare', 'resume', listed!.id, '--threads', '1', '--json', '--data-dir', dataDir])).stdout);
  expect(resumed.status).toBe('done');
  expect(resumed.pairs.map((p) => [p.generator, p.evaluator, p.status, p.rowsDone])).toEqual([
    [a, a, 'done', ROWS],
    [b, a, 'done', ROWS],
  ]);
  // Each pair is one job, the one it had before the kill; no job was made twice.
  expect(resumed.pairs.map((p) => p.jobId)).toEqual(before.pairs.map((p) => p.jobId));
  expect(queryJobDb<{ n: number }>(dataDir, 'SELECT COUNT(*) AS n FROM jobs')[0]!.n).toBe(2);
  expect(queryJobDb<{ n: number }>(dataDir, 'SELECT COUNT(*) AS n FROM experiment_jobs')[0]!.n).toBe(2);
  // Each row once: every row of both jobs is done, and those committed before the kill are untouched.
  const after = doneRows(dataDir);
  expect(after).toHaveLength(2 * ROWS);
  for (const row of atKill) expect(after).toContainEqual(row);
  expect(resumed.progress).toMatchObject({ jobsDone: 2, jobsTotal: 2, rowsDone: 2 * ROWS, rowsTotal: 2 * ROWS });

  // Done is done: a second resume changes nothing and says so through the record.
  const again = json<ComparisonRecord>((await cli(['compare', 'resume', listed!.id, '--json', '--data-dir', dataDir])).stdout);
  expect(again.pairs.map((p) => p.jobId)).toEqual(resumed.pairs.map((p) => p.jobId));
  expect(doneRows(dataDir)).toEqual(after);
}, 1_200_000);
