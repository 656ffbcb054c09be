// Crash safety end to end: `tatra eval` in a child process on the tiny synthetic model is killed
// with SIGKILL after some rows are committed, `tatra jobs resume` finishes it, and every row
// equals the row of an uninterrupted job with the same seed.
//
// At the default concurrency: several rows in flight, their requests decoded side by side. The
// lockstep schedule (electron/llama/lockstep.ts) makes every request's output a function of the
// request alone, so which rows happened to share a step, or what a resumed process cached or ran
// before, cannot change a row.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { createApiHost } from '../../electron/api/host';
import type { JobSummary } from '../../electron/common/contract/jobs';
import type { JobRow } from '../../electron/jobs';
import { tinyModelPath } from '../helpers/models';
import { writeReviewsCsv } from '../helpers/reviews';
import { CLI_ENV as env, TATRA as tatra, lastJson as json, queryJobDb, repoRoot, tatraCli as cli, whenJobDb } from '../helpers/tatra-cli';
import { unpackText } from '../../electron/jobs/stored-text';

const dir = mkdtempSync(join(tmpdir(), 'tatra-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rowsOf(dataDir: string, jobId: string): JobRow[] {
  const db = new Database(join(dataDir, 'tatra.db'), { readonly: true });
  try {
    return (db.prepare('SELECT * FROM job_rows WHERE job_id = ? ORDER BY idx').all(jobId) as Record<string, unknown>[]).map((r) => ({
      index: r.idx,
      input: r.input,
      gold: r.gold,
      status: r.status,
      prediction: r.prediction,
      confidence: r.confidence,
      votes: JSON.parse(String(r.votes_json)),
      tieBreak: r.tie_break,
      runs: JSON.parse(unpackText(r.runs_json as string | Buffer)!),
    })) as unknown as JobRow[];
  } finally {
    db.close();
  }
}

const DONE_COUNT = "SELECT COUNT(*) AS n FROM job_rows WHERE status = 'done'";

function doneCount(dataDir: string): number {
  return queryJobDb<{ n: number }>(dataDir, DONE_COUNT)[0]?.n ?? 0;
}

it('three 12-row jobs at the default concurrency, one SIGKILLed part-way and resumed: every row the same', async () => {
  const model = await tinyModelPath();
  const data = join(dir, 'reviews.csv');
  writeReviewsCsv(data, 12, '\r\n');
  const common = ['eval', '--task', 'sst2', '--data', data, '--text-col', 'review', '--label-col', 'sentiment', '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '2', '-k', '4', '-r', '2', '--seed', '11', '--threads', '1', '--json'];

  // Two uninterrupted jobs at once (so each runs under the other's load): the same rows.
  const [refDir, twinDir] = [join(dir, 'ref'), join(dir, 'twin')];
  const [ref, twin] = (await Promise.all([cli([...common, '--data-dir', refDir]), cli([...common, '--data-dir', twinDir])])).map((r) => json<{ job: JobSummary }>(r.stdout));
  expect(ref!.job.status).toBe('done');
  expect(ref!.job.rowsDone).toBe(12);
  const expected = rowsOf(refDir, ref!.job.id);
  expect(rowsOf(twinDir, twin!.job.id)).toEqual(expected);

  // Killed part-way: wait until at least 3 rows are committed, then SIGKILL.
  const killDir = join(dir, 'killed');
  const child = spawn(process.execPath, [tatra, ...common, '--data-dir', killDir], { cwd: repoRoot, env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, signal) => res(signal)));
  // No time limit of its own (a contended machine may take minutes to commit 3 rows): read as the
  // child writes its database, until 3 rows are in or the job ended by itself (then the
  // expectation below fails, saying so).
  const [{ n: committed } = { n: 0 }] = await whenJobDb<{ n: number }>(killDir, DONE_COUNT, ([r]) => (r?.n ?? 0) >= 3, exited);
  expect(committed).toBeGreaterThanOrEqual(3);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const atKill = doneCount(killDir);
  expect(atKill).toBeLessThan(12);

  // The history shows the job as interrupted, with what was committed kept: `jobs list --json`
  // prints the API's summary (the stored record said status running, interrupted true).
  const list = json<JobSummary[]>((await cli(['jobs', 'list', '--json', '--data-dir', killDir])).stdout);
  expect(list).toHaveLength(1);
  expect(list[0]).toMatchObject({ status: 'interrupted', rowsDone: atKill, rowsTotal: 12 });
  expect(list[0]).not.toHaveProperty('interrupted');
  const committedRows = rowsOf(killDir, list[0]!.id).filter((r) => r.status === 'done');

  const resumed = json<{ job: JobSummary }>((await cli(['jobs', 'resume', list[0]!.id, '--threads', '1', '--json', '--data-dir', killDir])).stdout);
  expect(resumed.job).toMatchObject({ status: 'done', rowsDone: 12 });
  const after = rowsOf(killDir, list[0]!.id);
  // Rows committed before the kill were kept as they were...
  for (const r of committedRows) expect(after[r.index]).toEqual(r);
  // ...and the whole job equals the uninterrupted one, row by row (votes, paraphrases, predictions).
  expect(after).toEqual(expected);

  // `tatra jobs list --json` prints exactly what the API's jobs.list returns.
  const printed = json<JobSummary[]>((await cli(['jobs', 'list', '--json', '--data-dir', killDir])).stdout);
  const host = await createApiHost({ dataDir: killDir, threads: 1, mode: 'test' });
  try {
    expect(JSON.parse(JSON.stringify(await host.invoke('jobs.list', {})))).toEqual({ ok: true, value: printed });
    expect(printed[0]).toMatchObject({ status: 'done', rowsDone: 12, rowsTotal: 12 });
  } finally {
    await host.dispose();
  }
}, 1_200_000);
