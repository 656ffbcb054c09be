// Evaluation throughput: rows per minute for SST-2 at the paper's recommended n=5, k=8 (r=3) on
// the 0.5B-shaped synthetic model, through the real JobManager (SQLite store, run-scope examples
// shared by all rows, rows in flight on parallel sequences).
//
//   npx tsx bench/eval-throughput.ts [--rows 10] [--threads 2] [--concurrency 4] [--shape qwen2.5-0.5b] [-n 5 -k 8 -r 3]
//                                   [--schedule lockstep|free] [--early-stop] [--model FILE.gguf]
//
// --model: a GGUF of your own instead of the synthetic --shape (e.g. stories260K for the
// early-stop saving: run with and without --early-stop and compare calls and seconds).
//
// --schedule: the backend's deterministic lockstep schedule (default) or the old timing-driven
// one with KV-cache and prefix-snapshot reuse; run both to see what determinism costs.
//
// Needs ../shared/datasets/sst2_test.jsonl. Prints the time to load the model and generate the run examples, the
// rows phase, and rows per minute with and without the example phase.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { JobManager, openJobStore } from '../electron/jobs';
import { ModelPool, disposeLlamaRuntime, type LlamaSchedule } from '../electron/llama';
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
    schedule: { type: 'string', default: 'lockstep' },
    'early-stop': { type: 'boolean', default: false },
    model: { type: 'string' },
  },
});

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const data = values.data ?? resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl');
const rows = Number(values.rows);
const threads = Number(values.threads);
const concurrency = Number(values.concurrency);
const settings = { n: Number(values.n), k: Number(values.k), r: Number(values.r), seed: 1, scope: 'run' as const, earlyStop: values['early-stop'] };
if (values.schedule !== 'lockstep' && values.schedule !== 'free') throw new Error(`--schedule must be lockstep or free, got ${values.schedule}`);
const schedule: LlamaSchedule = values.schedule;

const model = values.model !== undefined ? resolve(values.model) : await ensureSyntheticModel(values.shape as SyntheticShape);
const dir = mkdtempSync(join(tmpdir(), 'tatra-bench-'));
const store = openJobStore(dir);
const pool = new ModelPool({ defaults: { threads, sequences: concurrency, schedule } });
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
  manager.on('progress', (e) => {
    if (e.progress.phase !== 'rows') return;
    if (rowsStart === 0) rowsStart = performance.now();
    process.stderr.write(`\r  rows ${e.progress.rowsDone}/${e.progress.rowsTotal}  ${e.progress.rowsPerMinute.toFixed(2)} rows/min   `);
  });
  const t0 = performance.now();
  await manager.start(job.id);
  const end = await manager.wait(job.id);
  const t1 = performance.now();
  process.stderr.write('\n');
  if (end.status !== 'done') throw new Error(`job ended ${end.status}: ${end.error ?? ''}`);
  const all = manager.rows(job.id, { limit: rows }).rows;
  const sum = (f: (s: { calls: number; promptTokens: number; completionTokens: number }) => number, stage: 'paraphrases' | 'evaluation') =>
    all.reduce((acc, r) => acc + (r.stages ? f(r.stages[stage]) : 0), 0);
  const examples = manager.runExamples(job.id);
  const exampleCalls = examples.reduce((a, e) => a + e.stats.calls, 0);
  const runsMade = all.reduce((a, r) => a + (r.runs?.length ?? 0), 0);
  const exampleMs = rowsStart - t0;
  const rowsMs = t1 - rowsStart;
  const out = {
    model: values.model ?? values.shape,
    rows,
    settings,
    threads,
    concurrency,
    schedule,
    modelLoadAndExamplesSeconds: +(exampleMs / 1000).toFixed(1),
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
    runsMade,
    totalSeconds: +((t1 - t0) / 1000).toFixed(1),
    accuracy: manager.get(job.id).rowsWithGold > 0 ? +(manager.get(job.id).rowsCorrect / manager.get(job.id).rowsWithGold).toFixed(4) : null,
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await pool.dispose();
  await disposeLlamaRuntime();
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
