// Crash safety on the remote path: `tatra eval` through openai+http://… against an OpenAI-compatible
// server (test/helpers/instant-openai-server.ts, its own process) is SIGKILLed with rows in flight,
// `tatra jobs resume` finishes it, and every row is in the job exactly once: the resumed session
// evaluates each row not committed before the kill r times (evaluations are never cached) and no
// row that was. Rows are committed one transaction each and generator outputs are written in
// batches: a kill loses rows in flight and a few cache entries, never half a row. No model here
// (the server answers in the engine's formats); it sits with the model tests for the built CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { JobSummary } from '../../electron/common/contract/jobs';
import { committedRows, resumeProblems, startInstantServer } from '../helpers/instant-server';
import { writeReviewsJsonl } from '../helpers/reviews';
import { CLI_ENV as env, TATRA as tatra, lastJson as json, queryJobDb, repoRoot, tatraCli as cli, whenJobDb } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-remote-resume-'));
const server = await startInstantServer({ kind: 'vllm' });
afterAll(() => {
  server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const DONE_COUNT = "SELECT COUNT(*) AS n FROM job_rows WHERE status = 'done'";

it('a remote job SIGKILLed with rows in flight and resumed: every row exactly once', async () => {
  const dataDir = join(dir, 'job');
  const R = 2;
  // 40 rows in the paper's JSONL format, written here: the test needs no ../shared.
  const data = join(dir, 'reviews.jsonl');
  writeReviewsJsonl(data, 40);
  const args = ['eval', '--task', 'sst2', '--data', data, '--limit', '40', '--model', `openai+${server.origin}/v1#m`];
  args.push('-n', '3', '-k', '4', '-r', String(R), '--seed', '1', '--concurrency', '8', '--data-dir', dataDir, '--json');
  // The job makes 4 example calls and 2 + 2·4 calls per row (404 in all); after 150 the server
  // stops answering, so the job cannot end before the kill and rows stay in flight.
  await server.hold(150);
  const child = spawn(process.execPath, [tatra, ...args], { cwd: repoRoot, env, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    // The server answers this once it holds a request; the job cannot end before that.
    await Promise.race([server.heldAtLeast(1), exited.then(() => Promise.reject(new Error('tatra eval ended before the server held a request')))]);
    // What was answered before the hold is committed (or lost to the kill, which is the point).
    const [{ n: committed } = { n: 0 }] = await whenJobDb<{ n: number }>(dataDir, DONE_COUNT, ([r]) => (r?.n ?? 0) >= 5, exited);
    expect(committed).toBeGreaterThanOrEqual(5);
    child.kill('SIGKILL');
    await exited;
  } finally {
    child.kill('SIGKILL');
  }
  const before = committedRows(dataDir);
  expect(before.size).toBeGreaterThanOrEqual(5);
  expect(before.size).toBeLessThan(40);

  await server.reset();
  await server.release();
  const [jobId] = queryJobDb<{ id: string }>(dataDir, 'SELECT id FROM jobs').map((j) => j.id);
  const { job } = json<{ job: JobSummary }>((await cli(['jobs', 'resume', jobId!, '--data-dir', dataDir, '--json'])).stdout);
  expect(job).toMatchObject({ status: 'done', rowsTotal: 40, rowsDone: 40 });
  expect(queryJobDb(dataDir, "SELECT idx FROM job_rows WHERE status != 'done'")).toEqual([]);
  expect(resumeProblems(dataDir, before, await server.originals(), R)).toEqual([]);
});
