// `tatra jobs resume` as an adversary uses it, in real processes on a real job database:
// - the GGUF at the job's path swapped for another model: refused with one line; continued only
//   with --accept-model-change, and the change is recorded in the job;
// - two resumes of one job launched together: exactly one runs it, the other is refused, and the
//   loser never touches the job's status;
// - the same for two `tatra sweep resume` of one sweep.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SweepSummary } from '../../electron/common/contract/sweeps';
import type { JobSummary } from '../../electron/common/contract/jobs';
import { tinyModelBPath, tinyModelPath } from '../helpers/models';
import { CLI_ENV as env, TATRA as tatra, lastJson, repoRoot } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-claim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const model = join(dir, 'model.gguf');
const data = join(dir, 'reviews.csv');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Makes a `tatra` process say on its file descriptor 3 when it has opened its job database. */
const announceDbOpen = join(repoRoot, 'test', 'helpers', 'announce-db-open.mjs');

/** Runs `tatra args`; `opened` resolves once it has opened its job database. */
function start(args: string[]): { done: Promise<Ran>; opened: Promise<void> } {
  const child = spawn(process.execPath, ['--import', announceDbOpen, tatra, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const opened = new Promise<void>((resolve) => child.stdio[3]!.once('data', () => resolve()));
  const done = new Promise<Ran>((res) => child.on('close', (code) => res({ code, stdout, stderr })));
  return { done, opened };
}

const cli = (args: string[]) => start(args).done;

/** A finished 3-row job in its own data folder, reset to "paused with every row pending". */
async function pausedJob(dataDir: string): Promise<string> {
  const r = await cli(['eval', '--task', 'sst2', '--data', data, '--text-col', 'review', '--label-col', 'sentiment', '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '2', '-k', '4', '-r', '1', '--seed', '3', '--concurrency', '1', '--threads', '1', '--json', '--data-dir', dataDir]);
  expect(r.code, r.stderr).toBe(0);
  const created = lastJson<{ job: JobSummary }>(r.stdout).job;
  expect(created).toMatchObject({ status: 'done', rowsDone: 3 });
  const id = created.id;
  const db = new Database(join(dataDir, 'tatra.db'));
  db.prepare(`UPDATE job_rows SET status = 'pending', prediction = NULL, correct = NULL, votes_json = NULL, runs_json = NULL WHERE job_id = ?`).run(id);
  db.prepare(`UPDATE jobs SET status = 'paused', owner = NULL WHERE id = ?`).run(id);
  db.close();
  return id;
}

function jobRow(dataDir: string, id: string): { status: string; owner: string | null; generator_json: string; done: number } {
  const db = new Database(join(dataDir, 'tatra.db'), { readonly: true });
  try {
    const j = db.prepare(`SELECT status, owner, generator_json FROM jobs WHERE id = ?`).get(id) as { status: string; owner: string | null; generator_json: string };
    const n = (db.prepare(`SELECT COUNT(*) AS n FROM job_rows WHERE job_id = ? AND status = 'done'`).get(id) as { n: number }).n;
    return { ...j, done: n };
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  copyFileSync(await tinyModelPath(), model);
  writeFileSync(data, 'review,sentiment\n"a warm and funny film",pos\n"dull and far too long",neg\n"an instant classic",pos\n');
});

it('resume refuses a swapped model with one line, and --accept-model-change continues and records the change', async () => {
  const dataDir = join(dir, 'swap');
  const id = await pausedJob(dataDir);
  const before = JSON.parse(jobRow(dataDir, id).generator_json) as { sizeBytes: number; headerHash: string; contentHash?: string };
  copyFileSync(await tinyModelBPath(), model);
  try {
    const refused = await cli(['jobs', 'resume', id, '--threads', '1', '--data-dir', dataDir]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^tatra: job \S+: the generator model .*model\.gguf is not the one the job started with \(size \d+ → \d+ bytes, header hash \w+ → \w+\); resume with --accept-model-change/);
    // Nothing ran, nothing changed.
    expect(jobRow(dataDir, id)).toMatchObject({ status: 'paused', owner: null, done: 0 });

    const accepted = await cli(['jobs', 'resume', id, '--accept-model-change', '--threads', '1', '--json', '--data-dir', dataDir]);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(lastJson<{ job: JobSummary }>(accepted.stdout).job.status).toBe('done');
    const generator = JSON.parse(jobRow(dataDir, id).generator_json) as { sizeBytes: number; replaced?: unknown };
    expect(generator.sizeBytes).not.toBe(before.sizeBytes);
    expect(generator.replaced).toEqual([{ sizeBytes: before.sizeBytes, headerHash: before.headerHash, contentHash: before.contentHash, acceptedAt: expect.any(String) }]);
    expect(before.contentHash).toMatch(/^[0-9a-f]{64}$/);
    const shown = await cli(['jobs', 'show', id, '--data-dir', dataDir]);
    expect(shown.stdout).toContain('the generator file changed once during this job');
  } finally {
    copyFileSync(await tinyModelPath(), model);
  }
});

/**
 * Launches `args` twice at once and returns the one that ran (exit 0) and the one refused (exit
 * 2, stderr one line). SQLite's write lock is held while both processes start, so both read the
 * row before either can write its claim: the widest possible race window, every time.
 */
async function race(dataDir: string, args: string[]): Promise<{ winner: Ran; loser: Ran }> {
  const lock = new Database(join(dataDir, 'tatra.db'));
  lock.exec('BEGIN IMMEDIATE');
  const a = start(args);
  const b = start(args);
  // Both have the database open and wait on the lock (or one has already ended: nothing to wait for).
  await Promise.race([Promise.all([a.opened, b.opened]), a.done, b.done]);
  lock.exec('ROLLBACK');
  lock.close();
  const results = await Promise.all([a.done, b.done]);
  const winners = results.filter((r) => r.code === 0);
  const losers = results.filter((r) => r.code !== 0);
  expect(winners, results.map((r) => r.stderr).join('\n---\n')).toHaveLength(1);
  expect(losers).toHaveLength(1);
  expect(losers[0]!.code).toBe(2);
  return { winner: winners[0]!, loser: losers[0]! };
}

it('two resumes of one job launched together: one runs it, the other is refused and leaves the status alone', async () => {
  const dataDir = join(dir, 'race');
  const id = await pausedJob(dataDir);
  const { winner, loser } = await race(dataDir, ['jobs', 'resume', id, '--threads', '1', '--json', '--data-dir', dataDir]);
  expect(loser.stderr.trim()).toMatch(new RegExp(`^tatra: job ${id} (is running in another process|is already done)$`));
  expect(lastJson<{ job: JobSummary }>(winner.stdout).job).toMatchObject({ status: 'done', rowsDone: 3 });
  expect(jobRow(dataDir, id)).toMatchObject({ status: 'done', owner: null, done: 3 });
});

/** A finished one-job sweep over the 3 rows in its own data folder, reset to "paused with every row pending". */
async function pausedSweep(dataDir: string): Promise<string> {
  const r = await cli(['sweep', '--task', 'sst2', '--data', data, '--text-col', 'review', '--label-col', 'sentiment', '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '0', '-k', '2', '-r', '1', '--seeds', '3', '--concurrency', '1', '--threads', '1', '--json', '--data-dir', dataDir]);
  expect(r.code, r.stderr).toBe(0);
  const created = lastJson<SweepSummary>(r.stdout);
  expect(created.status).toBe('done');
  const db = new Database(join(dataDir, 'tatra.db'));
  db.prepare(`UPDATE job_rows SET status = 'pending', prediction = NULL, correct = NULL, votes_json = NULL, runs_json = NULL`).run();
  db.prepare(`UPDATE jobs SET status = 'paused', owner = NULL`).run();
  db.prepare(`UPDATE experiments SET status = 'paused', owner = NULL WHERE id = ?`).run(created.id);
  db.close();
  return created.id;
}

it('two sweep resumes launched together: one runs it, the other is refused and leaves the status alone', async () => {
  const dataDir = join(dir, 'sweep-race');
  const id = await pausedSweep(dataDir);
  const { winner, loser } = await race(dataDir, ['sweep', 'resume', id, '--threads', '1', '--json', '--data-dir', dataDir]);
  expect(loser.stderr.trim()).toMatch(new RegExp(`^tatra: sweep ${id} (is running in another process|is already done)$`));
  expect(lastJson<SweepSummary>(winner.stdout)).toMatchObject({ id, status: 'done', error: null });
  const db = new Database(join(dataDir, 'tatra.db'), { readonly: true });
  try {
    expect(db.prepare(`SELECT status, owner, error FROM experiments WHERE id = ?`).get(id)).toEqual({ status: 'done', owner: null, error: null });
    expect(db.prepare(`SELECT status, owner FROM jobs`).all()).toEqual([{ status: 'done', owner: null }]);
    expect(db.prepare(`SELECT COUNT(*) AS n FROM job_rows WHERE status = 'done'`).get()).toEqual({ n: 3 });
  } finally {
    db.close();
  }
});
