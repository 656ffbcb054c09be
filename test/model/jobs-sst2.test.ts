// `tatra eval` end to end on the paper's SST-2 file (first 20 rows) with the tiny synthetic model:
// the job runs, and its CSV and JSON exports read back to the same rows and numbers.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { wilson } from '../../electron/common/stats';
import { JobProgress, JobSummary } from '../../electron/common/contract/jobs';
import { readCsvExport, readJsonExport, type JobMetrics } from '../../electron/jobs';
import { tinyModelPath } from '../helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const sst2 = resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'tatra-sst2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, 'bin', 'tatra.js'), ...args], {
    cwd: repoRoot,
    env: { ...process.env, TATRA_THREADS: '1' },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** `job` is what jobs.get answers (JobSummary and its progress, none in the CLI), with no field besides. */
function expectJobsGet(job: unknown): void {
  const shape = JobSummary.extend({ progress: JobProgress.nullable() });
  expect(Object.keys(job as object).sort()).toEqual(Object.keys(shape.shape).sort());
  expect(shape.parse(job)).toEqual(job);
  expect((job as { progress: unknown }).progress).toBeNull();
}

function json<T>(stdout: string): T {
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`no JSON in output: ${stdout.slice(0, 500)}`);
  return JSON.parse(line) as T;
}

it.skipIf(!existsSync(sst2))('tatra eval --task sst2 --data sst2_test.jsonl --limit 20 runs, and its exports round-trip (skipped without ../shared/datasets)', async () => {
  const model = await tinyModelPath();
  const dataDir = join(dir, 'data');
  const out = join(dir, 'out');
  const res = json<{ job: JobSummary; metrics: JobMetrics }>(
    await cli(['eval', '--task', 'sst2', '--data', sst2, '--limit', '20', '--model', model, '-n', '2', '-k', '4', '-r', '2', '--baseline', '--threads', '1', '--concurrency', '2', '--out', out, '--data-dir', dataDir, '--json']),
  );
  const { job, metrics } = res;
  // The job as the API's jobs.get answers it: the contract's shape, no other field.
  expectJobsGet(job);
  expect(job).toMatchObject({ status: 'done', rowsTotal: 20, rowsDone: 20, deterministic: true });
  expect(metrics.evaluated).toBe(20);
  expect(metrics.accuracyAfterRuns).toHaveLength(2);
  expect(metrics.accuracyAfterRuns[1]).toBe(metrics.accuracy);
  expect(metrics.baseline?.evaluated).toBe(20);
  // Each score with its interval beside it (docs/method.md §16), the same in every later process
  // (jobs show and the export below compare equal): the bootstrap is seeded from the job.
  expect(metrics.intervals?.accuracy).toEqual({ ...wilson(metrics.correct, 20)!, estimate: metrics.accuracy });
  expect(metrics.intervals?.macroF1).toMatchObject({ estimate: metrics.macroF1, method: 'bootstrap', level: 0.95 });
  expect(metrics.intervals?.accuracyAfterRuns).toHaveLength(2);
  expect(metrics.intervals?.baseline?.versus).toMatchObject({ rows: 20, test: 'mcnemar-exact' });
  // The job summary (jobs.get, jobs list --json) carries both scores with their intervals.
  expect(job).toMatchObject({ accuracyInterval: wilson(metrics.correct, 20), macroF1: metrics.macroF1, macroF1Interval: metrics.intervals!.macroF1 });

  // The rows are the file's first 20 (user message as input, solution as gold).
  const lines = readFileSync(sst2, 'utf8').split('\n').slice(0, 20).map((l) => JSON.parse(l) as { messages: { role: string; content: string }[]; solution: string });
  const exported = await readJsonExport(join(out, `${job.id}.json`));
  // The export keeps the stored record, for a job to be read again as it ran.
  expect(exported.job).toMatchObject({ status: 'done', rowsFailed: 0 });
  expect(exported.job.dataset.mapping).toMatchObject({ textColumn: 'input', labelColumn: 'solution' });
  expect(exported.job.dataset.fingerprint).toMatch(/^sha256:/);
  expect(exported.job.generator.headerHash).toMatch(/^[0-9a-f]{64}$/);
  expect(exported.rows.map((r) => [r.input, r.gold])).toEqual(lines.map((l) => [l.messages.find((m) => m.role === 'user')!.content, l.solution]));
  for (const r of exported.rows) {
    expect(['negative', 'positive']).toContain(r.prediction);
    expect(r.runs).toHaveLength(2);
    expect(r.runs!.every((run) => run.paraphrases.length === 2 && run.predictions.length === 3)).toBe(true);
  }
  expect(exported.runExamples.map((e) => e.examples.length)).toEqual([4, 4]);
  // JSON export: same numbers as the CLI printed, each interval beside its score.
  expect(exported.metrics).toEqual(metrics);
  expect(exported.metrics.intervals).toMatchObject({ accuracy: metrics.intervals!.accuracy, macroF1: metrics.intervals!.macroF1, baseline: { versus: metrics.intervals!.baseline!.versus } });

  // CSV export: one row per input with the same predictions, votes and confidence; the same accuracy.
  const csv = await readCsvExport(join(out, `${job.id}.csv`));
  expect(csv).toHaveLength(20);
  csv.forEach((c, i) => {
    const r = exported.rows[i]!;
    expect([c.input, c.gold, c.prediction, c.correct, c.confidence, c.votes, c.baselinePrediction]).toEqual([r.input, r.gold, r.prediction, r.correct, r.confidence, r.votes, r.baseline!.label]);
  });
  expect(csv.filter((c) => c.correct).length / csv.length).toBe(metrics.accuracy);
  expect(csv.filter((c) => c.baselineCorrect).length / csv.length).toBe(metrics.baseline!.accuracy);

  // The history has it, and `jobs show` / `jobs export` give the same numbers later.
  const shown = json<{ job: JobSummary; metrics: JobMetrics }>(await cli(['jobs', 'show', job.id, '--json', '--data-dir', dataDir]));
  expect(shown.metrics).toEqual(metrics);
  expectJobsGet(shown.job);
  expect(shown.job).toEqual(job);
  // jobs list --json: the same job, as jobs.list answers it.
  const { progress: _progress, ...summary } = job as JobSummary & { progress: unknown };
  expect(JSON.parse(await cli(['jobs', 'list', '--json', '--data-dir', dataDir]))).toEqual([summary]);
  const again = join(dir, 'again.json');
  await cli(['jobs', 'export', job.id, '--format', 'json', '--out', again, '--data-dir', dataDir]);
  expect((await readJsonExport(again)).rows).toEqual(exported.rows);
  const human = await cli(['jobs', 'show', job.id.slice(0, 8), '--data-dir', dataDir]);
  expect(human).toContain(`job ${job.id}`);
  expect(human).toMatch(/accuracy\s+\d+\.\d% \(\d+\/20\)\s+\[\d+\.\d, \d+\.\d\]/);
  expect(human).toContain('[low, high]: 95 % intervals: Wilson score for accuracies');
  expect(human).toContain('deterministic: yes (the same job again gives the same rows)');
});
