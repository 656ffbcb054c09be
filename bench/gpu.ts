// The GPU benchmark, side by side in one run on one model file (docs/gpu.md):
//   1. in-process: what node-llama-cpp finds (backend, card, free VRAM, layers offloaded), then
//      `tatra eval` on SST-2 rows at the paper's setting (n=10, k=16, r=15, seed 1);
//   2. llama-server's raw bound on the same card: evaluator-shaped calls/s (a shared ~280-token
//      prefix, one constrained label) and generation tokens/s, with --parallel slots;
//   3. the same `tatra eval` through the remote backend against that llama-server.
// Each eval runs for a fixed window and is then stopped (the job stays resumable); rows/min is
// measured from the first finished row (model load and the first runs' examples are warm-up) and
// projected to the whole SST-2 test set. Peak GPU memory comes from nvidia-smi polled every 250 ms.
// Figures go to <out>/summary.json and <out>/summary.txt after every phase, so a run cut short
// still leaves what it measured.
//
//   node bench-gpu.mjs --app DIR --model FILE --server BIN --data FILE --out DIR
//       [--seconds 60] [--parallel 16] [--rows 300] [--local-concurrency C] [--remote-concurrency C]
//       [--skip-remote] [--until EPOCH_S]
// (tools/gpu/far-side.sh bundles and runs it; with tsx: npx tsx bench/gpu.ts ...)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createWriteStream, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { gpuChoice } from '../electron/llama/runtime';

const SST2_ROWS = 1821;
/** Evaluator calls per row at the paper's setting, (n+1)·r: the last step of every row. */
const EVAL_CALLS_PER_ROW = (10 + 1) * 15;
const PAPER_MINUTES_A100 = 36.4;

const { values: opts } = parseArgs({
  options: {
    app: { type: 'string' },
    model: { type: 'string' },
    server: { type: 'string' },
    data: { type: 'string' },
    out: { type: 'string' },
    seconds: { type: 'string', default: '60' },
    parallel: { type: 'string', default: '16' },
    rows: { type: 'string', default: '300' },
    'local-concurrency': { type: 'string' },
    'remote-concurrency': { type: 'string' },
    'skip-remote': { type: 'boolean', default: false },
    port: { type: 'string', default: '18431' },
    // llama-server's -fa: off unless the build has llama.cpp's FlashAttention kernels. With them
    // left out of a CUDA build, llama-server's default (auto) put attention on the CPU: 260 ms a
    // token for a 7B on an H100 (the first GPU run).
    'flash-attention': { type: 'string', default: 'off' },
    until: { type: 'string' },
  },
});
for (const k of ['app', 'model', 'server', 'data', 'out'] as const) {
  if (!opts[k]) {
    process.stderr.write(`bench-gpu: --${k} is required\n`);
    process.exit(2);
  }
}
const app = resolve(opts.app!);
const model = resolve(opts.model!);
const serverBin = resolve(opts.server!);
const data = resolve(opts.data!);
const out = resolve(opts.out!);
const windowSeconds = Number(opts.seconds);
const parallel = Number(opts.parallel);
const port = Number(opts.port);
const cli = join(app, 'bin', 'tatra.js');
/** When everything must be over (epoch ms): each phase takes its share of what is left. */
const until = opts.until ? Number(opts.until) * 1000 : Infinity;
const phaseEnd = (share: number): number => (until === Infinity ? Infinity : Date.now() + share * (until - Date.now()));

type Summary = Record<string, unknown>;
const summary: Summary = { model, started: new Date().toISOString(), windowSeconds, parallel, paper: { sst2Rows: SST2_ROWS, minutesOneA100: PAPER_MINUTES_A100 } };
const log = (line: string): void => void process.stdout.write(`[bench-gpu ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

// ---------------------------------------------------------------------------------------------
// GPU memory: nvidia-smi in a loop; each phase reads the peak since it began.

const gpuMem = { peakMiB: 0, totalMiB: 0, name: '', available: false };
let smi: ChildProcess | undefined;
function startGpuPoll(): void {
  smi = spawn('nvidia-smi', ['--query-gpu=memory.used,memory.total,name', '--format=csv,noheader,nounits', '-lms', '250'], { stdio: ['ignore', 'pipe', 'ignore'] });
  smi.on('error', () => undefined); // no nvidia-smi: the rehearsal without a GPU
  let buf = '';
  smi.stdout?.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const [used, total, name] = buf.slice(0, i).split(',').map((s) => s.trim());
      buf = buf.slice(i + 1);
      if (Number.isFinite(Number(used))) {
        gpuMem.available = true;
        gpuMem.peakMiB = Math.max(gpuMem.peakMiB, Number(used));
        gpuMem.totalMiB = Number(total);
        gpuMem.name = name ?? '';
      }
    }
  });
}
function takePeak(): number | null {
  const p = gpuMem.available ? gpuMem.peakMiB : null;
  gpuMem.peakMiB = 0;
  return p;
}

async function save(): Promise<void> {
  summary.gpu = gpuMem.available ? { name: gpuMem.name, totalMiB: gpuMem.totalMiB } : null;
  await writeFile(join(out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  await writeFile(join(out, 'summary.txt'), table());
}

const fmt = (v: unknown, digits = 1): string => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(digits) : '-');

function table(): string {
  const lines = [`TATRA Studio GPU benchmark, ${summary.started as string}`, `model: ${model}`];
  const g = summary.gpu as { name: string; totalMiB: number } | null;
  lines.push(`card: ${g ? `${g.name}, ${g.totalMiB} MiB` : 'none seen by nvidia-smi'}`);
  const facts = summary.inProcessFacts as Record<string, unknown> | undefined;
  if (facts) lines.push(`in-process: backend ${String(facts.gpu)}, layers offloaded ${String(facts.gpuLayers)}/${String(facts.blockCount)}, free VRAM at start ${fmt(facts.vramFreeMiB, 0)} MiB`);
  const raw = summary.raw as Record<string, unknown> | undefined;
  if (raw) {
    lines.push(`llama-server raw bound (--parallel ${parallel}, ${String(raw.layersOffloaded ?? '?')} layers offloaded): evaluator-shaped ${fmt(raw.evalCallsPerSecond, 2)} calls/s; generation ${fmt(raw.genTokensPerSecond, 0)} tokens/s (${String(raw.genCalls)} calls x ${String(raw.genTokensPerCall)} tokens); peak GPU memory ${fmt(raw.peakGpuMiB, 0)} MiB`);
  }
  lines.push('');
  lines.push('tatra eval, SST-2, n=10 k=16 r=15 seed 1   rows done   rows/min   calls/s   out tokens/s   peak GPU MiB   projected 1,821 rows   paper (1x A100)');
  for (const key of ['inProcess', 'remote'] as const) {
    const e = summary[key] as Record<string, unknown> | undefined;
    if (!e) continue;
    const label = key === 'inProcess' ? 'in-process (node-llama-cpp)' : `remote (llama-server, ${parallel} slots)`;
    lines.push(
      `${label.padEnd(42)} ${String(e.rowsDone).padStart(9)}   ${fmt(e.rowsPerMinute, 2).padStart(8)}   ${fmt(e.callsPerSecond, 2).padStart(7)}   ${fmt(e.completionTokensPerSecond, 0).padStart(12)}   ${fmt(e.peakGpuMiB, 0).padStart(12)}   ${`${fmt(e.projectedMinutes, 1)} min`.padStart(20)}   ${PAPER_MINUTES_A100} min`,
    );
    lines.push(`  from evaluator calls (${EVAL_CALLS_PER_ROW} a row, warm-up included): ${fmt(e.evalCallRowsPerMinute, 2)} rows/min, ${fmt(e.projectedMinutesFromEvalCalls, 1)} min for 1,821 rows`);
    if (e.note) lines.push(`  ${String(e.note)}`);
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// In-process facts, from node-llama-cpp as the app's loader sees them.

async function inProcessFacts(): Promise<void> {
  const { getLlama, LlamaLogLevel, readGgufFileInfo } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: gpuChoice(process.env.TATRA_GPU), build: 'never', logLevel: LlamaLogLevel.error });
  const vram = await llama.getVramState();
  const info = await readGgufFileInfo(model);
  const blockCount = (info.architectureMetadata as { block_count?: number } | undefined)?.block_count ?? null;
  const t = performance.now();
  const m = await llama.loadModel({ modelPath: model });
  summary.inProcessFacts = {
    gpu: llama.gpu === false ? 'cpu' : llama.gpu,
    devices: await llama.getGpuDeviceNames(),
    vramTotalMiB: vram.total / 2 ** 20,
    vramFreeMiB: vram.free / 2 ** 20,
    gpuLayers: m.gpuLayers,
    blockCount,
    loadSeconds: (performance.now() - t) / 1000,
  };
  await m.dispose();
  await llama.dispose();
  log(`in-process facts: ${JSON.stringify(summary.inProcessFacts)}`);
}

// ---------------------------------------------------------------------------------------------
// `tatra eval` for a window, progress read from the job database.

async function evalWindow(key: 'inProcess' | 'remote', modelArg: string, concurrency: string | undefined, phaseEndAt: number): Promise<void> {
  const endAt = Number.isFinite(phaseEndAt) ? phaseEndAt : Date.now() + 4 * windowSeconds * 1000;
  const dataDir = await mkdtemp(join(tmpdir(), `tatra-bench-${key}-`));
  const args = [cli, 'eval', '--task', 'sst2', '--data', data, '--model', modelArg, '-n', '10', '-k', '16', '-r', '15', '--seed', '1', '--limit', String(opts.rows), '--data-dir', dataDir, '--json'];
  if (concurrency) args.push('--concurrency', concurrency);
  log(`${key}: node ${args.slice(1).join(' ')}`);
  takePeak();
  const logFile = createWriteStream(join(out, 'eval.log'), { flags: 'a' });
  logFile.write(`\n==== ${key}: ${args.join(' ')}\n`);
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stdout.pipe(logFile, { end: false });
  child.stderr.pipe(logFile, { end: false });
  let exited = false;
  const exit = new Promise<number | null>((res) => child.on('exit', (code) => ((exited = true), res(code))));

  const dbPath = join(dataDir, 'tatra.db');
  let db: Database.Database | undefined;
  const done = (): number => {
    if (!db) {
      if (!existsSync(dbPath)) return 0;
      try {
        db = new Database(dbPath, { readonly: true, fileMustExist: true });
      } catch {
        return 0;
      }
    }
    try {
      return (db.prepare(`SELECT COUNT(*) AS n FROM job_rows WHERE status = 'done'`).get() as { n: number }).n;
    } catch {
      return 0; // the schema is being made
    }
  };
  let first: { t: number; rows: number } | undefined;
  let last = { t: started, rows: 0 };
  // The window starts at the first finished row (load and the runs' examples are warm-up) and lasts
  // windowSeconds, unless the phase's share of the time left runs out first.
  while (!exited) {
    await new Promise((r) => setTimeout(r, 1000));
    const rows = done();
    const t = performance.now();
    if (rows > 0 && !first) {
      first = { t, rows };
      log(`${key}: first row after ${((t - started) / 1000).toFixed(1)} s`);
    }
    last = { t, rows };
    if (first && t - first.t >= windowSeconds * 1000) break;
    if (Date.now() >= endAt) break;
  }
  if (!exited) {
    child.kill('SIGINT'); // the job pauses, resumable; --json still prints its usage
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exit;
    clearTimeout(killer);
  }
  const code = await exit;
  const rowsNow = done();
  db?.close();
  logFile.end();
  const steadyRows = first ? last.rows - first.rows : 0;
  const steadySeconds = first ? (last.t - first.t) / 1000 : 0;
  const totalSeconds = (last.t - started) / 1000;
  const rowsPerMinute = steadyRows > 0 && steadySeconds > 0 ? (steadyRows / steadySeconds) * 60 : last.rows > 0 ? (last.rows / totalSeconds) * 60 : null;
  const usage = usageFrom(stdout);
  const jobSeconds = usage?.elapsedMs ? usage.elapsedMs / 1000 : totalSeconds;
  summary[key] = {
    command: `node ${args.slice(1).join(' ')}`,
    exitCode: code,
    rowsDone: rowsNow,
    firstRowSeconds: first ? (first.t - started) / 1000 : null,
    steadyRows,
    steadySeconds,
    totalSeconds,
    rowsPerMinute,
    projectedMinutes: rowsPerMinute ? SST2_ROWS / rowsPerMinute : null,
    // Over the job's whole time (warm-up included): what the engine asked of the model.
    callsPerSecond: usage ? usage.calls / jobSeconds : null,
    // Where too few rows finish in the window: rows' worth of evaluator calls per minute, over the
    // job's whole time (warm-up included, so it errs slow once the runs' examples are made).
    evalCallRowsPerMinute: usage ? (usage.evaluations / EVAL_CALLS_PER_ROW / jobSeconds) * 60 : null,
    projectedMinutesFromEvalCalls: usage && usage.evaluations > 0 ? SST2_ROWS / ((usage.evaluations / EVAL_CALLS_PER_ROW / jobSeconds) * 60) : null,
    completionTokensPerSecond: usage ? usage.completionTokens / jobSeconds : null,
    usage: usage?.raw ?? null,
    peakGpuMiB: takePeak(),
    note: steadyRows > 0 ? undefined : first ? 'one progress point only: rate over the whole run' : `no row finished in ${totalSeconds.toFixed(0)} s (calls/s and tokens/s are still measured)`,
  };
  log(`${key}: ${JSON.stringify(summary[key])}`);
  await save();
}

/** The job's usage from `tatra eval --json`'s last line (printed also when the job is paused). */
function usageFrom(stdout: string): { calls: number; evaluations: number; completionTokens: number; elapsedMs: number; raw: unknown } | null {
  const line = stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (!line) return null;
  try {
    const j = JSON.parse(line) as { job?: { elapsedMs?: number; usage?: { calls?: { total?: number; evaluations?: number }; tokens?: { prompt?: number; completion?: number } } } };
    const u = j.job?.usage;
    if (!u) return null;
    return { calls: u.calls?.total ?? 0, evaluations: u.calls?.evaluations ?? 0, completionTokens: u.tokens?.completion ?? 0, elapsedMs: j.job?.elapsedMs ?? 0, raw: u };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// llama-server: start, raw bound, stop.

async function startServer(): Promise<{ child: ChildProcess; logPath: string }> {
  const logPath = join(out, 'llama-server.log');
  const perSlot = 8192;
  const args = ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-np', String(parallel), '-c', String(perSlot * parallel), '-ngl', '999', '--no-webui', '-a', 'synthetic', '-fa', opts['flash-attention'] === 'on' ? 'on' : 'off'];
  log(`llama-server ${args.join(' ')}`);
  const logFile = createWriteStream(logPath);
  const child = spawn(serverBin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(logFile);
  child.stderr!.pipe(logFile);
  let failed: string | undefined;
  child.on('exit', (c) => (failed = `llama-server exited (${String(c)}) before it was ready; see llama-server.log`));
  const t = performance.now();
  for (;;) {
    if (failed) throw new Error(failed);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/health`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() - t > 180_000) throw new Error('llama-server not ready after 180 s');
    await new Promise((r) => setTimeout(r, 500));
  }
  log(`llama-server ready after ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return { child, logPath };
}

const labels = ['negative', 'positive'];
const topics = ['acting', 'direction', 'screenplay', 'cinematography', 'editing', 'pacing', 'soundtrack', 'visual effects', 'set design', 'casting'];
const prefix =
  'Classify the sentiment of the movie review sentence as negative or positive. Answer with the label only.\n\n' +
  topics.map((t, i) => `Example${i + 1}:\nSentence: "The ${t} was ${i % 2 ? 'a tedious, clumsy mess that wasted a fine cast' : 'a quiet delight that carried the whole film along'}."\nLabel: ${labels[(i + 1) % 2]}\n`).join('\n') +
  '\n';
const chatPrompt = (input: string): string =>
  `<|im_start|>system\nYou are a careful sentiment annotator.<|im_end|>\n<|im_start|>user\n${prefix}Sentence: "${input}"\nLabel:<|im_end|>\n<|im_start|>assistant\n`;

async function completion(body: Record<string, unknown>): Promise<{ predicted: number }> {
  const r = await fetch(`http://127.0.0.1:${port}/completion`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = (await r.json()) as { timings?: { predicted_n?: number } };
  return { predicted: j.timings?.predicted_n ?? 0 };
}

/** `calls` calls through `parallel` workers; returns the wall seconds. */
async function pool(calls: number, one: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < calls) await one(next++);
  }));
  return (performance.now() - t) / 1000;
}

async function rawBound(logPath: string): Promise<void> {
  takePeak();
  await pool(parallel, (i) => completion({ prompt: chatPrompt(`warm up ${i}`), n_predict: 1, temperature: 0, cache_prompt: true }).then(() => undefined));
  // Evaluator-shaped: one constrained label after the shared prefix, enough calls for ~windowSeconds/4.
  const grammar = 'root ::= " "? ("negative" | "positive")';
  let evalCalls = parallel * 4;
  let evalSeconds = await pool(evalCalls, (i) => completion({ prompt: chatPrompt(`Review ${i}: the ${topics[i % topics.length]} felt ${i % 3 ? 'flat' : 'inspired'}.`), n_predict: 2, temperature: 0, cache_prompt: true, grammar }).then(() => undefined));
  const target = Math.max(5, windowSeconds / 4);
  if (evalSeconds < target) {
    evalCalls = Math.ceil((evalCalls * target) / Math.max(evalSeconds, 0.05));
    evalSeconds = await pool(evalCalls, (i) => completion({ prompt: chatPrompt(`Item ${i}: the ${topics[i % topics.length]} seemed ${i % 3 ? 'dull' : 'bright'}.`), n_predict: 2, temperature: 0, cache_prompt: true, grammar }).then(() => undefined));
  }
  // Generation: every slot writes genTokens tokens at once.
  const genTokens = 128;
  let predicted = 0;
  const genCalls = parallel * 2;
  const genSeconds = await pool(genCalls, async (i) => {
    const r = await completion({ prompt: chatPrompt(`Write paraphrase ${i} of a review.`), n_predict: genTokens, temperature: 0.8, seed: i, ignore_eos: true, cache_prompt: true });
    predicted += r.predicted;
  });
  const { readFile } = await import('node:fs/promises');
  const serverLog = await readFile(logPath, 'utf8').catch(() => '');
  const offloaded = /offloaded (\d+\/\d+) layers to GPU/.exec(serverLog)?.[1] ?? null;
  summary.raw = {
    evalCalls,
    evalSeconds,
    evalCallsPerSecond: evalCalls / evalSeconds,
    genCalls,
    genTokensPerCall: genTokens,
    genSeconds,
    genTokensPerSecond: predicted / genSeconds,
    layersOffloaded: offloaded,
    peakGpuMiB: takePeak(),
  };
  log(`raw bound: ${JSON.stringify(summary.raw)}`);
  await save();
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  startGpuPoll();
  try {
    await inProcessFacts();
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    summary.inProcessFacts = { error };
    log(`in-process facts failed: ${error}`);
  }
  await save();
  await evalWindow('inProcess', model, opts['local-concurrency'], phaseEnd(0.6));
  if (opts['skip-remote']) return;
  const server = await startServer();
  try {
    await rawBound(server.logPath);
    await evalWindow('remote', `openai+http://127.0.0.1:${port}/v1#synthetic`, opts['remote-concurrency'], phaseEnd(0.9));
  } finally {
    server.child.kill('SIGTERM');
  }
}

main()
  .catch(async (e: unknown) => {
    summary.error = e instanceof Error ? e.message : String(e);
    log(`failed: ${String(summary.error)}`);
    process.exitCode = 1;
  })
  .finally(async () => {
    summary.finished = new Date().toISOString();
    await save().catch(() => undefined);
    smi?.kill();
    process.stdout.write(table());
  });
