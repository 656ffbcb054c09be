// Evaluation throughput: rows per minute for SST-2 at the paper's recommended n=5, k=8 (r=3) on
// the 0.5B-shaped synthetic model, through the real JobManager (SQLite store, run-scope examples
// shared by all rows, rows in flight on parallel sequences), and what the deterministic schedule
// costs against the old one.
//
//   npx tsx bench/eval-throughput.ts [--rows 10] [--threads 2] [--concurrency 4] [--shape qwen2.5-0.5b] [-n 5 -k 8 -r 3]
//                                   [--schedule lockstep,free] [--repeat 1] [--early-stop] [--model FILE.gguf]
//
// --schedule: one or more of `lockstep` (the backend's deterministic schedule) and `free` (the old
// timing-driven one, KV caches reused as found; bench/free-schedule.ts), comma-separated, each run as its own job on a
// freshly loaded model. --repeat N runs the list N times, alternating (lockstep, free, lockstep,
// free, …), so neither schedule always goes first on a cold page cache; figures are medians.
// With both schedules the output ends with `lockstepVsFree`: lockstep's rows per minute (rows
// phase) as a fraction of free's. Random weights sample other texts under another schedule (free's
// are not even reproducible), so the two jobs do not do exactly the same work: compare the
// backend's counters per job, and see bench/llama-micro.ts for the two schedules on identical
// requests.
//
// --model: a GGUF of your own instead of the synthetic --shape (e.g. stories260K for the
// early-stop saving: run with and without --early-stop and compare calls and seconds).
//
// Needs ../shared/datasets/sst2_test.jsonl. Prints, per job: the time to load the model and
// generate the run examples, the rows phase, rows per minute with and without the example phase,
// and what the backend did in the rows phase (tokens decoded, reused, restored, generated; lockstep
// steps and throwaway ballast tokens).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { JobManager, openJobStore } from '../electron/jobs';
import { ModelPool } from '../electron/hold';
import { disposeLlamaRuntime, type LlamaBackend, type LlamaBackendStats } from '../electron/llama';
import { loadScheduled, type LlamaSchedule } from './free-schedule';
import { ensureSyntheticModel, type SyntheticShape } from '../tools/synthetic-gguf';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10' },
    threads: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '4' },
    shape: { type: 'string', default: 'qwen2.5-0.5b' },
    n: { type: 'string', short: 'n', default: '5' },
    k: { type: 'string', short: 'k', default: '8' },
    r: { type: 'string', short: 'r', default: '3' },
    data: { type: 'string' },
    schedule: { type: 'string', default: 'lockstep,free' },
    repeat: { type: 'string', default: '1' },
    'early-stop': { type: 'boolean', default: false },
    model: { type: 'string' },
  },
});

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const data = values.data ?? resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl');
const rows = Number(values.rows);
const threads = Number(values.threads);
const concurrency = Number(values.concurrency);
const repeat = Number(values.repeat);
const settings = { n: Number(values.n), k: Number(values.k), r: Number(values.r), seed: 1, scope: 'run' as const, earlyStop: values['early-stop'] };
const schedules = values.schedule.split(',').map((s) => s.trim());
for (const s of schedules) if (s !== 'lockstep' && s !== 'free') throw new Error(`--schedule takes lockstep and/or free, got ${s}`);
if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`--repeat must be a whole number of at least 1, got ${values.repeat}`);

const model = values.model !== undefined ? resolve(values.model) : await ensureSyntheticModel(values.shape as SyntheticShape);

interface JobFigures {
  schedule: LlamaSchedule;
  modelLoadAndExamplesSeconds: number;
  exampleCompletionTokens: number;
  rowsPhaseSeconds: number;
  rowsPerMinuteRowsPhase: number;
  rowsPerMinuteOverall: number;
  paraphraseCompletionTokens: number;
  evaluatorCalls: number;
  evaluatorPromptTokens: number;
  modelCalls: number;
  runsMade: number;
  totalSeconds: number;
  accuracy: number | null;
  /** What the backend did in the rows phase. */
  rowsPhaseBackend: LlamaBackendStats;
}

function statsSince(after: LlamaBackendStats, before: LlamaBackendStats): LlamaBackendStats {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k as keyof LlamaBackendStats]])) as unknown as LlamaBackendStats;
}

async function runJob(schedule: LlamaSchedule): Promise<JobFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'tatra-bench-'));
  const store = openJobStore(dir);
  // The one model backend of the job (generator and evaluator share the file), kept for its counters.
  let backend: LlamaBackend | undefined;
  const pool = new ModelPool({
    defaults: { threads, sequences: concurrency },
    load: async (opts) => (backend = await loadScheduled(opts, schedule)),
  });
  try {
    const manager = new JobManager({ store, backends: pool });
    const job = await manager.create({
      task: 'sst2',
      settings,
      generatorPath: model,
      evaluatorPath: model,
      dataset: { path: data, mapping: { textColumn: 'input', labelColumn: 'solution' } },
      limit: rows,
      concurrency,
    });
    let rowsStart = 0;
    let statsAtRows: LlamaBackendStats | undefined;
    manager.on('progress', (e) => {
      if (e.progress.phase !== 'rows') return;
      if (rowsStart === 0) {
        rowsStart = performance.now();
        statsAtRows = backend?.stats();
      }
      process.stderr.write(`\r  ${schedule}: rows ${e.progress.rowsDone}/${e.progress.rowsTotal}  ${(e.progress.rowsPerMinute ?? 0).toFixed(2)} rows/min   `);
    });
    const t0 = performance.now();
    await manager.start(job.id);
    const end = await manager.wait(job.id);
    const t1 = performance.now();
    process.stderr.write('\n');
    if (end.status !== 'done') throw new Error(`job ended ${end.status}: ${end.error ?? ''}`);
    if (!backend || !statsAtRows) throw new Error('the job never reached its rows phase on an in-process model');
    const rowsPhaseBackend = statsSince(backend.stats(), statsAtRows);
    const all = manager.rows(job.id, { limit: rows }).rows;
    const sum = (f: (s: { calls: number; promptTokens: number; completionTokens: number }) => number, stage: 'paraphrases' | 'evaluation') =>
      all.reduce((acc, r) => acc + (r.stages ? f(r.stages[stage]) : 0), 0);
    const examples = manager.runExamples(job.id);
    const exampleCalls = examples.reduce((a, e) => a + e.stats.calls, 0);
    const rowsMs = t1 - rowsStart;
    const got = manager.get(job.id);
    return {
      schedule,
      modelLoadAndExamplesSeconds: +((rowsStart - t0) / 1000).toFixed(1),
      exampleCompletionTokens: examples.reduce((a, e) => a + e.stats.completionTokens, 0),
      rowsPhaseSeconds: +(rowsMs / 1000).toFixed(1),
      rowsPerMinuteRowsPhase: +((rows / rowsMs) * 60000).toFixed(2),
      rowsPerMinuteOverall: +((rows / (t1 - t0)) * 60000).toFixed(2),
      paraphraseCompletionTokens: sum((s) => s.completionTokens, 'paraphrases'),
      evaluatorCalls: sum((s) => s.calls, 'evaluation'),
      evaluatorPromptTokens: sum((s) => s.promptTokens, 'evaluation'),
      // Every model call of the job (run examples once, then each row's paraphrase and evaluator
      // calls), the runs the rows made (fewer than rows·r when --early-stop decided some early),
      // the wall time of the whole job, and the accuracy.
      modelCalls: exampleCalls + sum((s) => s.calls, 'paraphrases') + sum((s) => s.calls, 'evaluation'),
      runsMade: all.reduce((a, r) => a + (r.runs?.length ?? 0), 0),
      totalSeconds: +((t1 - t0) / 1000).toFixed(1),
      accuracy: got.rowsWithGold > 0 ? +(got.rowsCorrect / got.rowsWithGold).toFixed(4) : null,
      rowsPhaseBackend,
    };
  } finally {
    await pool.dispose();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

try {
  const jobs: JobFigures[] = [];
  for (let i = 0; i < repeat; i++) for (const schedule of schedules) jobs.push(await runJob(schedule as LlamaSchedule));
  const rowsPerMinute = (schedule: string) => median(jobs.filter((j) => j.schedule === schedule).map((j) => j.rowsPerMinuteRowsPhase));
  const both = schedules.includes('lockstep') && schedules.includes('free');
  const out = {
    model: values.model ?? values.shape,
    rows,
    settings,
    threads,
    concurrency,
    jobs,
    // Lockstep's rows per minute (rows phase, medians) as a fraction of free's: 1 = as fast, 0.9 = 10% slower.
    ...(both ? { lockstepVsFree: +(rowsPerMinute('lockstep') / rowsPerMinute('free')).toFixed(3) } : {}),
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await disposeLlamaRuntime();
}
