// A sweep end to end on the tiny synthetic model: `tatra sweep` over 2 n × 2 k × 3 r × 2 seeds on
// 10 rows in a child process, SIGKILLed once some rows of its second job are committed, then
// `tatra sweep resume` finishes it. The result has every point, the rows committed before the
// kill are kept as they were, and it counts what sharing saved against running each point alone.
// The commands after the kill run in this process (tatraInProcess), bad input through the built CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SweepResult } from '../../electron/common/contract/sweeps';
import { tinyModelPath } from '../helpers/models';
import { writeReviewsCsv } from '../helpers/reviews';
import { CLI_ENV as env, lastJson as json, queryJobDb as query, keepModelsBetweenRuns, releaseInProcessRuns, repoRoot, storedJobRows, TATRA as tatra, tatraCli, tatraInProcess as cli, whenJobDb } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-sweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(keepModelsBetweenRuns);
afterAll(releaseInProcessRuns);

it('completes after a SIGKILL and a resume, with every point and the calls sharing saved', async () => {
  const model = await tinyModelPath();
  const data = join(dir, 'reviews.csv');
  writeReviewsCsv(data, 10);
  const dataDir = join(dir, 'data');
  const args = ['sweep', '--task', 'sst2', '--data', data, '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '0,2', '-k', '2,4', '-r', '1,2,3', '--seeds', '1,2', '--threads', '1', '--data-dir', dataDir];

  const child = spawn(process.execPath, [tatra, ...args], { cwd: repoRoot, env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_code, signal) => res(signal)));
  // Kill once the first job is done and its successor has committed a row, read as the child writes
  // its database (or once the sweep ended by itself, which the expectation says).
  const [{ n: done } = { n: 0 }] = await whenJobDb<{ n: number }>(dataDir, "SELECT COUNT(*) AS n FROM job_rows WHERE status = 'done'", ([r]) => (r?.n ?? 0) >= 12, exited);
  expect(done).toBeGreaterThanOrEqual(12);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const committed = query<Record<string, unknown>>(dataDir, "SELECT * FROM job_rows WHERE status = 'done' ORDER BY job_id, idx");
  expect(committed.length).toBeLessThan(80);
  const [{ id }] = query<{ id: string }>(dataDir, "SELECT id FROM experiments WHERE kind = 'sweep'") as [{ id: string }];

  const listed = JSON.parse((await cli(['sweep', 'list', '--json', '--data-dir', dataDir])).stdout) as { id: string; status: string }[];
  // The CLI's --json is what the API answers (experiments.list, experiments.get).
  expect(listed).toEqual([expect.objectContaining({ kind: 'sweep', id, status: 'interrupted' })]);
  const before = json<SweepResult & { kind: string }>((await cli(['sweep', 'show', id, '--json', '--data-dir', dataDir])).stdout);
  expect(before).toMatchObject({ kind: 'sweep', status: 'interrupted' });
  expect(before.progress.jobsDone).toBeLessThan(8);

  const out = join(dir, 'out');
  const result = json<SweepResult>((await cli(['sweep', 'resume', id, '--threads', '1', '--json', '--out', out, '--data-dir', dataDir])).stdout);
  expect(result.status).toBe('done');
  expect(result.progress).toMatchObject({ jobsDone: 8, jobsTotal: 8, rowsDone: 80, rowsTotal: 80 });
  expect(result.rows).toBe(10);
  // In-process CPU inference with the lockstep schedule: the same sweep again gives the same points.
  expect(result.deterministic).toBe(true);

  // Rows committed before the kill were kept as they were.
  const after = new Map(query<Record<string, unknown>>(dataDir, 'SELECT * FROM job_rows').map((r) => [`${String(r.job_id)}:${String(r.idx)}`, r]));
  for (const r of committed) expect(after.get(`${String(r.job_id)}:${String(r.idx)}`)).toEqual(r);

  // One point per (n, k, r), each over both seeds, accuracies as fractions.
  expect(result.points.map((p) => `${p.n}/${p.k}/${p.r}`)).toEqual(['0/2/1', '0/2/2', '0/2/3', '0/4/1', '0/4/2', '0/4/3', '2/2/1', '2/2/2', '2/2/3', '2/4/1', '2/4/2', '2/4/3']);
  for (const p of result.points) {
    expect(p.seeds).toEqual([1, 2]);
    expect(p.accuracy!.mean).toBeGreaterThanOrEqual(0);
    expect(p.accuracy!.mean).toBeLessThanOrEqual(1);
    expect(p.accuracy!.std).toBeGreaterThanOrEqual(0);
    expect(p.calls.mean).toBeGreaterThan(0);
  }

  // Each point at the largest r counts the evaluator calls its job's rows made (distinct prompts).
  for (const job of result.jobs) {
    const stored = storedJobRows(dataDir, job.jobId!).reduce((s, r) => s + (r.stages?.evaluation.calls ?? 0), 0);
    const point = result.points.find((p) => p.n === job.n && p.k === job.k && p.r === 3)!;
    expect(point.perSeed.find((s) => s.seed === job.seed)!.cost.evaluatorCalls).toBe(stored);
  }

  // Alone, every point pays its own examples (2 label calls per run at k 2 and 4) and, for n=2,
  // one paraphrase call per row and run: Σr = 6 runs per (n, k, seed) → (12 + 12) + (72 + 72) per seed.
  const { generatorCalls: gen, evaluatorCalls: ev } = result.sharing;
  expect(gen.alone).toBe(2 * (24 + 144));
  // The sweep generated examples once per (k, seed, run) and paraphrases once per (seed, run, row):
  // 24 + 60, plus at most the calls in flight at the kill whose answers were lost.
  expect(gen.made).toBeGreaterThanOrEqual(84);
  expect(gen.made).toBeLessThan(84 + 20);
  expect(gen.saved).toBe(gen.alone - gen.made);
  expect(ev.saved).toBe(ev.alone - ev.made);
  expect(ev.saved).toBeGreaterThan(0);

  // The exports.
  const csv = readFileSync(join(out, `${id}.csv`), 'utf8').trimEnd().split('\r\n');
  expect(csv).toHaveLength(13);
  expect(csv[1]!.startsWith('0,2,1,1 2,')).toBe(true);
  const exported = JSON.parse(readFileSync(join(out, `${id}.json`), 'utf8')) as SweepResult;
  expect(exported.points).toEqual(result.points);
});

it('bad input is one clear line and exit 2', async () => {
  const err = await tatraCli(['sweep', '--task', 'sst2', '--data', join(dir, 'nope.csv'), '--model', 'x.gguf', '-r', '1,,3', '--data-dir', join(dir, 'bad')]).catch((e: { code: number; stderr: string }) => e);
  expect(err).toMatchObject({ code: 2 });
  expect((err as { stderr: string }).stderr.trim()).toBe('tatra: -r takes comma-separated whole numbers, like 1,3,5; got "1,,3"');
});

// Why a sweep runs only the largest r: on real inference, the first r runs of a job at a larger r
// are the runs of a job at r (same seeds, examples and paraphrases), so re-voting them gives that
// job's labels. At the default concurrency: the lockstep schedule makes each request's output its
// own, so the two jobs' different batches cannot make their texts differ.
it('the first r runs of a job at a larger r are exactly a job at r', async () => {
  const model = await tinyModelPath();
  const data = join(dir, 'six.csv');
  writeFileSync(data, 'review,sentiment\n' + ['a warm, funny film', 'dull and slow', 'superb acting', 'makes no sense', 'a delight', 'a tedious mess'].map((t, i) => `"${t}",${i % 2 === 0 ? 'pos' : 'neg'}\n`).join(''));
  const common = ['eval', '--task', 'sst2', '--data', data, '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '1', '-k', '2', '--seed', '5', '--threads', '1', '--json'];
  type Out = { job: { id: string }; metrics: { accuracy: number; accuracyAfterRuns: number[] } };
  const three = json<Out>((await cli([...common, '-r', '3', '--data-dir', join(dir, 'r3')])).stdout);
  const two = json<Out>((await cli([...common, '-r', '2', '--data-dir', join(dir, 'r2')])).stdout);
  expect(three.metrics.accuracyAfterRuns[1]).toBe(two.metrics.accuracy);
  const long = storedJobRows(join(dir, 'r3'), three.job.id);
  const short = storedJobRows(join(dir, 'r2'), two.job.id);
  expect(short).toHaveLength(6);
  for (const [i, row] of short.entries()) expect(long[i]!.runs!.slice(0, 2)).toEqual(row.runs);
  const examplesOf = (d: string, id: string) => query<{ run: number; examples_json: string }>(d, 'SELECT run, examples_json FROM job_run_examples WHERE job_id = ? ORDER BY run', id);
  expect(examplesOf(join(dir, 'r3'), three.job.id).slice(0, 2)).toEqual(examplesOf(join(dir, 'r2'), two.job.id));
});
