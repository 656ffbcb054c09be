// A person's decisions never wait on a running job (docs/method.md §17): `tatra eval` runs a job in
// its own process against an OpenAI-compatible server (test/helpers/instant-openai-server.ts, its
// own process), and this process reviews the same job database meanwhile, as the app does while
// the CLI runs a job. First with the job stopped mid-run (the server holds its answers, so the job
// is running with calls in flight and cannot end): every decision, an undo and an import of
// decisions commit while the job's status is still 'running'; a job that kept a write transaction
// open across its model calls would make each of them wait out the database's busy timeout and
// fail with SQLITE_BUSY. Then, the job released, decisions go on as its rows finish. The job still finishes every row, and every decision is there. No model here (the
// server answers in the engine's formats); it sits with the model tests for the built CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { JobReview, openJobStore } from '../../electron/jobs';
import { startInstantServer } from '../helpers/instant-server';
import { writeReviewsJsonl } from '../helpers/reviews';
import { CLI_ENV as env, TATRA as tatra, queryJobDb, repoRoot, whenJobDb } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-review-running-'));
const server = await startInstantServer({ kind: 'vllm' });
afterAll(() => {
  server.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ROWS = 40;
const doneRows = (dataDir: string) => queryJobDb<{ idx: number }>(dataDir, "SELECT idx FROM job_rows WHERE status = 'done' ORDER BY idx").map((r) => r.idx);
const jobStatus = (dataDir: string) => queryJobDb<{ status: string }>(dataDir, 'SELECT status FROM jobs')[0]?.status;

it("a person's decisions, undo and import commit while a job runs in another process, and the job loses nothing", async () => {
  const dataDir = join(dir, 'data');
  const data = join(dir, 'reviews.jsonl');
  writeReviewsJsonl(data, ROWS);
  // The server stops answering after 40 calls (the job needs over 100): the job is running, with
  // rows committed and calls in flight, and cannot end.
  await server.hold(40);
  const args = ['eval', '--task', 'sst2', '--data', data, '--limit', String(ROWS), '--model', `openai+${server.origin}/v1#m`];
  args.push('-n', '1', '-k', '2', '-r', '1', '--seed', '1', '--concurrency', '4', '--data-dir', dataDir, '--json');
  const child = spawn(process.execPath, [tatra, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let store: ReturnType<typeof openJobStore> | undefined;
  try {
    await Promise.race([server.heldAtLeast(1), exited.then(() => Promise.reject(new Error(`tatra eval ended before the server held a request: ${stderr}`)))]);
    await whenJobDb<{ n: number }>(dataDir, "SELECT COUNT(*) AS n FROM job_rows WHERE status = 'done'", ([r]) => (r?.n ?? 0) >= 3, exited);
    store = openJobStore(dataDir);
    const review = new JobReview(store);
    const [{ id: jobId } = { id: '' }] = queryJobDb<{ id: string }>(dataDir, 'SELECT id FROM jobs');
    expect(jobStatus(dataDir)).toBe('running');

    // 1. The job held mid-run: decisions, an undo and an import each commit now.
    const held = doneRows(dataDir);
    const first = held.map((index, i) => review.decide(jobId, { index, label: i % 2 === 0 ? 'positive' : 'negative', queue: 'uncertain' }));
    expect(first.map((d) => d.decision.index)).toEqual(held);
    const undone = review.undo(jobId, first[0]!.decision.logId);
    expect(undone.index).toBe(held[0]);
    const importFile = join(dir, 'decisions.csv');
    writeFileSync(importFile, `index,label\n${held.map((i) => `${i},negative`).join('\n')}\n`);
    const imported = await review.importFile(jobId, importFile);
    expect(imported.recorded).toBeGreaterThan(0);
    expect(jobStatus(dataDir), 'every decision committed while the job was running').toBe('running');
    expect(await server.stats().then((s) => s.held)).toBeGreaterThan(0);

    // 2. The job released: decisions go on as its rows finish.
    await server.release();
    const later: number[] = [];
    for (let seen = held.length; ; ) {
      const rows = await whenJobDb<{ n: number }>(dataDir, "SELECT COUNT(*) AS n FROM job_rows WHERE status = 'done'", ([r]) => (r?.n ?? 0) > seen || jobStatus(dataDir) !== 'running', exited);
      const now = doneRows(dataDir);
      for (const index of now.filter((i) => !held.includes(i) && !later.includes(i))) {
        review.decide(jobId, { index, label: 'positive', queue: 'uncertain' });
        later.push(index);
      }
      seen = rows[0]?.n ?? seen;
      if (jobStatus(dataDir) !== 'running' || seen >= ROWS) break;
    }
    expect(await exited, stderr).toBe(0);

    // The job finished every row; every decision is there as last made.
    expect(jobStatus(dataDir)).toBe('done');
    expect(doneRows(dataDir)).toHaveLength(ROWS);
    const decided = new Map(queryJobDb<{ idx: number; label: string }>(dataDir, 'SELECT idx, label FROM review_decisions').map((d) => [d.idx, d.label]));
    for (const i of held) expect(decided.get(i), `row ${i}`).toBe('negative');
    for (const i of later) expect(decided.get(i), `row ${i}`).toBe('positive');
    expect(later.length).toBeGreaterThan(0);
  } finally {
    store?.close();
    child.kill('SIGKILL');
  }
});
