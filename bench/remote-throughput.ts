// Is TATRA Studio the bottleneck when it drives a fast inference server? Against the same
// OpenAI-compatible server (test/helpers/instant-openai-server.ts, its own process), side by side:
//
//   loop   a plain `fetch` loop: evaluator-sized chat requests (SST-2, k examples, the label set
//          as vLLM's structured_outputs.choice), `--in-flight` of them at once; then the same
//          loop on node:http with a keep-alive agent (what the backend's HTTP client uses)
//   eval   `tatra eval` (the built CLI, dist/) through the remote backend, `--concurrency` rows
//          at once, the endpoint allowed `--in-flight` requests (openai+http://…#m?inflight=N)
//
// Both rates are the server's own count of calls over the time from the first call's arrival to
// the last one's answer, so start-up (loading, the data set's import) is not in them; the eval's
// wall time is printed too. Also: the most requests the server held open at once, the eval's peak
// memory (/usr/bin/time) and the size of its job database.
//
//   npx tsx bench/remote-throughput.ts [--rows 160|all] [-n 10] [-k 16] [-r 3] [--seed 1]
//        [--concurrency 64] [--in-flight 64] [--latency 0] [--capacity 0] [--kind vllm]
//        [--loop-seconds 8] [--repeat 1] [--no-loop] [--default-in-flight] [--kill-at 0.5]
//        [--profile DIR] [--cli OTHER/bin/tatra.js]
//
// --default-in-flight: the endpoint keeps the limit the backend picks for the server's kind (the
// loop still has --in-flight). --latency MS: the server answers each call after MS ms (a GPU server's time per call), at most
// --capacity calls at once (0: no limit). --kill-at F: SIGKILL the eval once a fraction F of its
// rows is committed, `tatra jobs resume` it, and check that every row is in the job exactly once
// and that no row committed before the kill was sent to the server again. --profile DIR: the eval
// runs under `node --cpu-prof` and writes its profile there. Needs `npm run build:node` first.
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { evaluationGrammar } from '../electron/engine/grammar';
import { evaluationPrompt } from '../electron/engine/prompts';
import { shapeChatCall } from '../electron/remote/shapes';
import { resolveTask } from '../electron/tasks';
import { committedRows, resumeProblems, serverRate, startInstantServer } from '../test/helpers/instant-server';
import { queryJobDb } from '../test/helpers/tatra-cli';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '160' },
    n: { type: 'string', short: 'n', default: '10' },
    k: { type: 'string', short: 'k', default: '16' },
    r: { type: 'string', short: 'r', default: '3' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '64' },
    'in-flight': { type: 'string', default: '64' },
    latency: { type: 'string', default: '0' },
    capacity: { type: 'string', default: '0' },
    kind: { type: 'string', default: 'vllm' },
    'loop-seconds': { type: 'string', default: '8' },
    repeat: { type: 'string', default: '1' },
    'no-loop': { type: 'boolean', default: false },
    'default-in-flight': { type: 'boolean', default: false },
    'kill-at': { type: 'string' },
    profile: { type: 'string' },
    data: { type: 'string', default: '../shared/datasets/sst2_test.jsonl' },
    cli: { type: 'string' },
  },
});
const inFlight = Number(values['in-flight']);
const ROOT = resolve(import.meta.dirname, '..');
// --cli: another build's bin/tatra.js (an older checkout, to compare before and after).
const CLI = values.cli ? resolve(values.cli) : join(ROOT, 'bin/tatra.js');
if (!existsSync(join(CLI, '../../dist/cli.js'))) throw new Error(`build the CLI first: npm run build:node (no dist/cli.js beside ${CLI})`);

function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

const server = await startInstantServer({ kind: values.kind === 'vllm' ? 'vllm' : 'openai-compatible', latencyMs: Number(values.latency), capacity: Number(values.capacity) });
const url = server.origin;

const agent = new Agent({ keepAlive: true });

/** One POST through node:http with a keep-alive agent (what the backend's HTTP client does). */
function postHttp(url: string, body: string): Promise<unknown> {
  return new Promise((resolvePost, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolvePost(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The plain loop: `inFlight` workers, each posting an evaluator-sized request and reading the
 * answer, for `seconds`; with `fetch` (the issue's peer) or node:http (the least a client can do).
 */
async function rawLoop(seconds: number, client: 'fetch' | 'http'): Promise<{ perSecond: number; maxOpen: number }> {
  const task = await resolveTask('sst2');
  const k = Number(values.k);
  const examples = Array.from({ length: k }, (_, i) => ({ text: `A ${i % 2 ? 'negative' : 'positive'} remark number ${i + 1} from run seed 1.`, label: i % 2 ? 'negative' : 'positive' }));
  const grammar = evaluationGrammar(task);
  const body = (i: number) =>
    shapeChatCall(values.kind === 'vllm' ? 'vllm' : 'openai-compatible', values.kind === 'vllm' ? 'structured-outputs' : 'none', 'm', {
      prompt: evaluationPrompt(task, examples, `Sentence number ${i}: the film had moments of grace.`).prompt,
      grammar,
      maxTokens: task.evaluatorMaxTokens,
      temperature: 0,
    }).body;
  await server.reset();
  const until = performance.now() + seconds * 1000;
  let sent = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < until) {
        const chat = `${url}/v1/chat/completions`;
        const payload = JSON.stringify(body(sent++));
        if (client === 'http') await postHttp(chat, payload);
        else await (await fetch(chat, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload })).json();
      }
    }),
  );
  const s = await server.stats();
  return { perSecond: serverRate(s), maxOpen: s.maxOpen };
}

interface EvalOutcome {
  perSecond: number;
  calls: number;
  maxOpen: number;
  wallS: number;
  peakRssMiB: number | null;
  dbMiB: number;
  rowsDone: number;
  rowsTotal: number;
  byStage: Record<string, number>;
  exact?: string;
}

/** Runs the CLI (under /usr/bin/time -v for its peak memory); resolves with its stdout and peak RSS. */
function runCli(args: string[], onSpawn?: (child: ChildProcess) => void): Promise<{ stdout: string; code: number | null; signal: NodeJS.Signals | null; peakRssMiB: number | null }> {
  const timed = existsSync('/usr/bin/time');
  const node = [...(values.profile ? ['--cpu-prof', '--cpu-prof-dir', resolve(values.profile)] : []), CLI, ...args];
  const child = timed ? spawn('/usr/bin/time', ['-v', process.execPath, ...node], { cwd: ROOT }) : spawn(process.execPath, node, { cwd: ROOT });
  onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolvePromise) => {
    child.on('close', (code, signal) => {
      const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1];
      const errors = stderr.split('\n').filter((l) => l.startsWith('tatra:'));
      if (errors.length > 0) process.stderr.write(`${errors.join('\n')}\n`);
      resolvePromise({ stdout, code, signal, peakRssMiB: kb ? Number(kb) / 1024 : null });
    });
  });
}

/** The pid of the CLI's node process: `pid` itself, or its only child when `pid` is /usr/bin/time. */
function cliPid(pid: number): number {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return children[0] ?? pid;
  } catch {
    return pid;
  }
}

function dbSize(dir: string): number {
  let bytes = 0;
  for (const f of ['tatra.db', 'tatra.db-wal']) if (existsSync(join(dir, f))) bytes += statSync(join(dir, f)).size;
  return bytes / 2 ** 20;
}

async function evalRun(): Promise<EvalOutcome> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tatra-bench-remote-'));
  try {
    const spec = `openai+${url}/v1#m${values['default-in-flight'] ? '' : `?inflight=${inFlight}`}`;
    const rows = values.rows === 'all' ? [] : ['--limit', values.rows!];
    const args = ['eval', '--task', 'sst2', '--data', resolve(ROOT, values.data!), '--model', spec, '-n', values.n!, '-k', values.k!, '-r', values.r!, '--seed', values.seed!];
    args.push('--concurrency', values.concurrency!, ...rows, '--data-dir', dataDir, '--json');
    await server.reset();
    const t0 = performance.now();
    const killAt = values['kill-at'] === undefined ? null : Number(values['kill-at']);
    let killed = false;
    let poll: NodeJS.Timeout | undefined;
    const first = await runCli(args, (child) => {
      if (killAt === null) return;
      poll = setInterval(() => {
        const [db] = queryJobDb<{ done: number; total: number }>(dataDir, `SELECT COALESCE(SUM(status = 'done'), 0) AS done, COUNT(*) AS total FROM job_rows`);
        if (db && db.total > 0 && db.done >= db.total * killAt) {
          clearInterval(poll);
          killed = true;
          // Under /usr/bin/time the node process is its child: kill that one, as a crash would.
          process.kill(cliPid(child.pid!), 'SIGKILL');
        }
      }, 100);
    });
    clearInterval(poll);
    const wallS = (performance.now() - t0) / 1000;
    const s = await server.stats();
    const outcome: EvalOutcome = { perSecond: serverRate(s), calls: s.calls, maxOpen: s.maxOpen, wallS, peakRssMiB: first.peakRssMiB, dbMiB: dbSize(dataDir), rowsDone: 0, rowsTotal: 0, byStage: s.byStage };
    if (!killed) {
      const job = (JSON.parse(first.stdout) as { job: { rowsDone: number; rowsTotal: number } }).job;
      return { ...outcome, rowsDone: job.rowsDone, rowsTotal: job.rowsTotal };
    }
    // Killed: what the job held at that moment, then the resumed session's calls.
    const before = committedRows(dataDir);
    const jobId = queryJobDb<{ id: string }>(dataDir, 'SELECT id FROM jobs')[0]!.id;
    await server.reset();
    const t1 = performance.now();
    const resumed = await runCli(['jobs', 'resume', jobId, '--data-dir', dataDir, '--json']);
    const after = await server.stats();
    const problems = resumeProblems(dataDir, before, await server.originals(), Number(values.r));
    const end = (JSON.parse(resumed.stdout) as { job: { rowsDone: number; rowsTotal: number } }).job;
    const exact = problems.length === 0 ? `every row exactly once (${end.rowsTotal} rows; ${end.rowsTotal - before.size} done after the resume, each evaluated r=${values.r} times, none of the ${before.size} committed before)` : `NOT EXACT: ${problems.join('; ')}`;
    return {
      ...outcome,
      exact: `killed at ${before.size} rows committed (${wallS.toFixed(1)} s); resumed in ${((performance.now() - t1) / 1000).toFixed(1)} s at ${serverRate(after).toFixed(1)} calls/s, peak ${resumed.peakRssMiB?.toFixed(0)} MiB: ${exact}`,
      rowsDone: end.rowsDone,
      rowsTotal: end.rowsTotal,
      dbMiB: dbSize(dataDir),
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}




const fmt = (v: number) => v.toFixed(1);
process.stdout.write(
  `server: ${values.kind}, latency ${values.latency} ms, capacity ${values.capacity === '0' ? 'unlimited' : values.capacity}; eval: ${values.rows} rows, n=${values.n} k=${values.k} r=${values.r} seed ${values.seed}, --concurrency ${values.concurrency}, ${inFlight} in flight (loop and endpoint)\n`,
);
try {
  for (let i = 0; i < Number(values.repeat); i++) {
    const loop = values['no-loop'] ? null : await rawLoop(Number(values['loop-seconds']), 'fetch');
    const loadLoop = load();
    const httpLoop = values['no-loop'] ? null : await rawLoop(Number(values['loop-seconds']), 'http');
    const loadHttp = load();
    const ev = await evalRun();
    const loadEval = load();
    if (loop) process.stdout.write(`  loop (fetch)      ${fmt(loop.perSecond).padStart(8)} calls/s   max in flight at the server ${loop.maxOpen}   (load ${loadLoop})\n`);
    if (httpLoop) process.stdout.write(`  loop (node:http)  ${fmt(httpLoop.perSecond).padStart(8)} calls/s   max in flight at the server ${httpLoop.maxOpen}   (load ${loadHttp})\n`);
    process.stdout.write(
      `  eval              ${fmt(ev.perSecond).padStart(8)} calls/s   max in flight at the server ${ev.maxOpen}   ${ev.calls} calls (${Object.entries(ev.byStage).map(([k, v]) => `${k} ${v}`).join(', ')}), ` +
        `${ev.rowsDone}/${ev.rowsTotal} rows in ${fmt(ev.wallS)} s wall, peak RSS ${ev.peakRssMiB === null ? '?' : `${ev.peakRssMiB.toFixed(0)} MiB`}, job database ${ev.dbMiB.toFixed(1)} MiB   (load ${loadEval})\n`,
    );
    if (loop && httpLoop) process.stdout.write(`  ratio eval/loop: ${(ev.perSecond / loop.perSecond).toFixed(2)} of the fetch loop, ${(ev.perSecond / httpLoop.perSecond).toFixed(2)} of the node:http loop\n`);
    if (ev.exact) process.stdout.write(`  resume: ${ev.exact}\n`);
  }
} finally {
  server.stop();
}
