// Comparisons and sweeps are experiments on one runner, and a killed one of either kind resumes
// through the same code path: `tatra compare` (two generators × one evaluator) and `tatra sweep`
// (n = 0, 1) on synthetic GGUFs, each a two-job grid, are killed with SIGKILL in a child process
// once the first job is done and the second has rows committed; `list` shows it interrupted,
// `resume ID` finishes it, and every cell ran as exactly one job, every row of it classified once
// (the rows committed before the kill are kept as they were, not classified again). And both
// kinds are cancelled and exported from the CLI alike. The commands after the kill run in this
// process (tatraInProcess); a refused export and the last resume, through the built CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ComparisonResult } from '../../electron/common/contract/comparisons';
import type { SweepResult } from '../../electron/common/contract/sweeps';
import { tinyModelBPath, tinyModelPath } from '../helpers/models';
import { writeReviewsCsv } from '../helpers/reviews';
import { CLI_ENV as env, TATRA as tatra, lastJson as json, queryJobDb, repoRoot, tatraCli, tatraInProcess as cli, whenJobDb } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-compare-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 4;

interface DoneRow {
  job_id: string;
  idx: number;
  finished: string;
  prediction: string | null;
}

const DONE_ROWS = "SELECT job_id, idx, finished, prediction FROM job_rows WHERE status = 'done' ORDER BY job_id, idx";

function doneRows(dataDir: string): DoneRow[] {
  return queryJobDb<DoneRow>(dataDir, DONE_ROWS);
}

/** What each kind's `show`/`resume --json` says of its cells: the job and its status. */
interface Cell {
  jobId: string | null;
  status: string;
  rowsDone: number;
}
interface Kind {
  kind: 'compare' | 'sweep';
  start(a: string, b: string, data: string): string[];
  cells(shown: unknown): Cell[];
  status(shown: unknown): string;
}
const mapping = ['--text-col', 'review', '--label-col', 'sentiment', '--label-map', 'pos=positive,neg=negative'];
const kinds: Kind[] = [
  {
    kind: 'compare',
    start: (a, b, data) => ['compare', '--task', 'sst2', '--data', data, ...mapping, '--generators', `${a},${b}`, '--evaluators', a, '-n', '1', '-k', '2', '-r', '1', '--concurrency', '1'],
    cells: (shown) => (shown as ComparisonResult).pairs,
    status: (shown) => (shown as ComparisonResult).status,
  },
  {
    kind: 'sweep',
    start: (a, _b, data) => ['sweep', '--task', 'sst2', '--data', data, ...mapping, '--model', a, '-n', '0,1', '-k', '2', '-r', '1', '--seeds', '1', '--concurrency', '1'],
    cells: (shown) => (shown as SweepResult).jobs,
    status: (shown) => (shown as SweepResult).status,
  },
];

it.each(kinds)('a SIGKILLed $kind resumes with every job and every row exactly once', async ({ kind, start, cells, status }) => {
  const [a, b] = [await tinyModelPath(), await tinyModelBPath()];
  const data = join(dir, `${kind}-reviews.csv`);
  writeReviewsCsv(data, ROWS);
  const dataDir = join(dir, kind);
  const args = [...start(a, b, data), '--threads', '1', '--data-dir', dataDir];

  const child = spawn(process.execPath, [tatra, ...args], { cwd: repoRoot, env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, signal) => res(signal)));
  // No time limit of its own: read as the child writes its database, until the first job is done
  // and the second has a row in (or the experiment ended by itself, which the expectation below
  // reports).
  await whenJobDb<DoneRow>(dataDir, DONE_ROWS, (rows) => rows.length >= ROWS + 1, exited);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const atKill = doneRows(dataDir);
  expect(atKill.length).toBeGreaterThan(ROWS);
  expect(atKill.length).toBeLessThan(2 * ROWS);

  const [listed] = json<{ id: string; status: string; progress: unknown }[]>((await cli([kind, 'list', '--json', '--data-dir', dataDir])).stdout);
  expect(listed).toMatchObject({ status: 'interrupted', progress: { jobsDone: 1, jobsTotal: 2 } });
  const before = json<unknown>((await cli([kind, 'show', listed!.id.slice(0, 6), '--json', '--data-dir', dataDir])).stdout);
  expect(cells(before).map((c) => c.status)).toEqual(['done', 'paused']);

  const resumed = json<{ progress: unknown }>((await cli([kind, 'resume', listed!.id, '--threads', '1', '--json', '--data-dir', dataDir])).stdout);
  expect(status(resumed)).toBe('done');
  expect(cells(resumed).map((c) => [c.status, c.rowsDone])).toEqual([
    ['done', ROWS],
    ['done', ROWS],
  ]);
  // Each cell is one job, the one it had before the kill; no job was made twice.
  expect(cells(resumed).map((c) => c.jobId)).toEqual(cells(before).map((c) => c.jobId));
  expect(queryJobDb<{ n: number }>(dataDir, 'SELECT COUNT(*) AS n FROM jobs')[0]!.n).toBe(2);
  expect(queryJobDb<{ n: number }>(dataDir, 'SELECT COUNT(*) AS n FROM experiment_jobs')[0]!.n).toBe(2);
  // Each row once: every row of both jobs is done, and those committed before the kill are untouched.
  const after = doneRows(dataDir);
  expect(after).toHaveLength(2 * ROWS);
  for (const row of atKill) expect(after).toContainEqual(row);
  expect(resumed.progress).toMatchObject({ jobsDone: 2, jobsTotal: 2, rowsDone: 2 * ROWS, rowsTotal: 2 * ROWS });

  // Done is done: a second resume changes nothing.
  const again = json<unknown>((await cli([kind, 'resume', listed!.id, '--json', '--data-dir', dataDir])).stdout);
  expect(cells(again).map((c) => c.jobId)).toEqual(cells(resumed).map((c) => c.jobId));
  expect(doneRows(dataDir)).toEqual(after);
}, 1_200_000);

it.each(kinds)('a stopped $kind is cancelled and exported from the CLI, as the other kind is', async ({ kind, start, cells, status }) => {
  const [a, b] = [await tinyModelPath(), await tinyModelBPath()];
  const data = join(dir, `${kind}-stopped.csv`);
  writeReviewsCsv(data, ROWS);
  const dataDir = join(dir, `${kind}-stopped`);
  // A budget of one call stops it before its first job sends anything: paused, nothing done.
  const started = json<{ id: string; status: string; stoppedBy: string | null }>((await cli([...start(a, b, data), '--threads', '1', '--json', '--budget', 'calls=1', '--data-dir', dataDir])).stdout);
  expect(started).toMatchObject({ status: 'paused', stoppedBy: 'budget' });

  const cancelled = json<unknown>((await cli([kind, 'cancel', started.id.slice(0, 6), '--json', '--data-dir', dataDir])).stdout);
  expect(status(cancelled)).toBe('cancelled');
  expect(cells(cancelled).every((c) => c.status === 'cancelled')).toBe(true);

  const out = join(dir, `${kind}-export`);
  const exported = json<unknown>((await cli([kind, 'export', started.id, '--out', out, '--json', '--data-dir', dataDir])).stdout);
  const lines = readFileSync(join(out, `${started.id}.csv`), 'utf8').trimEnd().split('\r\n');
  // A header and one line per point (a sweep's, 2 n × 1 k × 1 r) or per pair (a comparison's, 2 × 1).
  expect(lines).toHaveLength(3);
  expect(JSON.parse(readFileSync(join(out, `${started.id}.json`), 'utf8'))).toEqual(exported);
  await expect(tatraCli([kind, 'export', started.id, '--data-dir', dataDir])).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/--out <dir>/) });

  // Cancelled is not done: a resume with a budget that covers it runs it to the end.
  const resumed = json<unknown>((await tatraCli([kind, 'resume', started.id, '--threads', '1', '--json', '--budget', 'calls=100000', '--data-dir', dataDir])).stdout);
  expect(status(resumed)).toBe('done');
}, 1_200_000);
