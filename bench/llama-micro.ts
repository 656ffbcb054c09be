// Micro-benchmark of LlamaBackend on a synthetic model of a real shape (default Qwen2.5-0.5B), each
// figure beside its peer in the same run:
//  (a) evaluator calls per second, --prompts classification prompts sharing a ~280-token prefix,
//      answered under a label grammar: the deterministic lockstep schedule (the app's) and the old
//      free one (bench/free-schedule.ts) on 4 parallel sequences, and llama-server's raw one-token
//      bound on the same model, threads and prompts (one slot, the prompt cache on, one token, no
//      grammar: what a single evaluator call cannot beat on one sequence);
//  (b) generation tokens per second on 4 sequences, lockstep and free;
//  (c) both mixed in one call on 4 sequences (4 sampled generations and the evaluator prompts);
//  (d) (a) and (b) again while a busy process (a spin loop this bench starts and stops) takes one
//      core: what a shared machine does to each schedule (`contention`; `contention-fixed` runs
//      them once more with the thread budget no longer following the load, llama/contention.ts).
// Lockstep and free run on identical requests, alternating which goes first, --repeat times; each
// pair's ratio is printed with the load average when it started, and the summary gives medians.
// Model loading is outside every timing. The weights are random, so only speed means anything.
//
//   npx tsx bench/llama-micro.ts [--shape qwen2.5-0.5b] [--threads 2] [--prompts 20] [--gen-tokens 64]
//                                [--repeat 3] [--cases evaluator,generation,mixed,contention,contention-fixed,single]
//                                [--no-server] [--json]
//
// `single` adds the one-sequence cases (no reuse, and reuse) for what prefix reuse saves.
// llama-server is built by tools/build-llama-server.sh if missing; --no-server skips the peer.
import { spawn, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { GenerateRequest } from '../electron/engine/backend';
import { contentionWatch, disposeLlamaRuntime, getLlamaRuntime, loadLlamaBackend, type LlamaBackend } from '../electron/llama';
import { startLlamaServer } from '../test/helpers/llama-server';
import { ensureSyntheticModel, syntheticShapes, type SyntheticShape } from '../tools/synthetic-gguf';
import { loadScheduled, type LlamaSchedule } from './free-schedule';

const { values } = parseArgs({
  options: {
    shape: { type: 'string', default: 'qwen2.5-0.5b' },
    model: { type: 'string' },
    threads: { type: 'string', default: '2' },
    prompts: { type: 'string', default: '20' },
    'gen-tokens': { type: 'string', default: '64' },
    repeat: { type: 'string', default: '3' },
    cases: { type: 'string', default: 'evaluator,generation,mixed,contention' },
    'no-server': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

const shape = values.shape as SyntheticShape;
if (!values.model && !syntheticShapes.includes(shape)) throw new Error(`unknown shape ${shape}; one of ${syntheticShapes.join(', ')}`);
const threads = Number(values.threads);
const promptCount = Number(values.prompts);
const genTokens = Number(values['gen-tokens']);
const repeat = Number(values.repeat);
const cases = new Set(values.cases.split(',').map((c) => c.trim()));
for (const c of cases) if (!['evaluator', 'generation', 'mixed', 'contention', 'contention-fixed', 'single'].includes(c)) throw new Error(`unknown case ${c}`);

const labels = ['negative', 'positive'];
const grammar = `root ::= " " (${labels.map((l) => `"${l}"`).join(' | ')})`;
const topics = ['acting', 'direction', 'screenplay', 'cinematography', 'editing', 'pacing', 'soundtrack', 'visual effects', 'set design', 'casting'];
const system = 'You are a careful sentiment annotator.';
const prefix =
  'Classify the sentiment of the movie review sentence as negative or positive. Answer with the label only.\n\n' +
  topics
    .map(
      (t, i) =>
        `Example${i + 1}:\nSentence: "The ${t} was ${i % 2 ? 'a tedious, clumsy mess that wasted a fine cast' : 'a quiet delight that carried the whole film along'}."\nLabel: ${labels[(i + 1) % 2]}\n`,
    )
    .join('\n') +
  '\n';
const inputs = Array.from({ length: promptCount }, (_, i) => `Review ${i + 1}: the ${topics[i % topics.length]} felt ${i % 3 ? 'flat' : 'inspired'} throughout.`);
const userText = (input: string) => `${prefix}Sentence: "${input}"\nLabel:`;
const classifyRequest = (input: string): GenerateRequest => ({ prompt: { system, user: userText(input) }, sharedUserPrefixLength: prefix.length, grammar, maxTokens: 4 });
const storyRequests = (count: number): GenerateRequest[] =>
  Array.from({ length: count }, (_, i) => ({
    prompt: { system: 'You write stories.', user: `Write story number ${i + 1}.` },
    maxTokens: genTokens,
    temperature: 0.8,
    seed: i + 1,
  }));

interface Row {
  case: string;
  schedule: LlamaSchedule | 'llama-server';
  seconds: number;
  rate: number;
  unit: string;
  /** Prompt tokens decoded (llama-server: its prompt_n). */
  evaluatedTokens: number;
  /** 1-minute load average when the case started. */
  load: number;
  /** Threads llama.cpp used for the last batch (fewer than --threads while other processes keep cores busy). */
  threadsUsed?: number;
}

const load = () => +loadavg()[0]!.toFixed(2);

const warmUp: GenerateRequest = { prompt: { system: 'warm', user: 'up' }, maxTokens: 1 };

/**
 * Loads a backend and warms it up with `warm` (first-decode allocation; for the evaluator, one call
 * that decodes the shared prefix, as the peer's warm-up puts it in its cache), outside the timing;
 * then times `work`.
 */
async function timed(name: string, schedule: LlamaSchedule, sequences: number, contextSize: number, work: (b: LlamaBackend) => Promise<{ count: number; unit: string }>, reuse = true, warm = warmUp): Promise<Row> {
  const backend = await loadScheduled({ modelPath, threads, sequences, contextSize, reuse }, schedule);
  try {
    await backend.generate([warm]);
    const before = backend.stats();
    const started = load();
    const t = performance.now();
    const { count, unit } = await work(backend);
    const seconds = (performance.now() - t) / 1000;
    return { case: name, schedule, seconds: +seconds.toFixed(3), rate: +(count / seconds).toFixed(3), unit, evaluatedTokens: backend.stats().evaluatedTokens - before.evaluatedTokens, load: started, threadsUsed: backend.context.currentThreads };
  } finally {
    await backend.dispose();
  }
}

const evaluator = (schedule: LlamaSchedule, sequences = 4, reuse = true, parallel = true) =>
  timed(`evaluator, ${sequences} sequence${sequences > 1 ? 's' : ''}${reuse ? '' : ', no reuse'}`, schedule, sequences, 1024, async (b) => {
    const requests = inputs.map(classifyRequest);
    if (parallel) await b.generate(requests);
    else for (const r of requests) await b.generate([r]);
    return { count: promptCount, unit: 'calls/s' };
  }, reuse, reuse ? classifyRequest('warm up') : warmUp);

const generation = (schedule: LlamaSchedule, sequences = 4) =>
  timed(`generation, ${sequences} sequences`, schedule, sequences, 512, async (b) => {
    const results = await b.generate(storyRequests(sequences));
    return { count: results.reduce((n, r) => n + r.completionTokens, 0), unit: 'tokens/s' };
  });

/**
 * The pipeline's mix in one call on 4 sequences: 4 sampled generations of --gen-tokens tokens
 * (paraphrase-like) and the evaluator prompts, queued together, so prompts arrive while other
 * sequences generate.
 */
const mixed = (schedule: LlamaSchedule) =>
  timed('mixed, 4 sequences', schedule, 4, 1024, async (b) => {
    const requests = [...storyRequests(4), ...inputs.map(classifyRequest)];
    await b.generate(requests);
    return { count: requests.length, unit: 'calls/s' };
  });

/**
 * llama-server's raw one-token bound: the same prompts one at a time to one slot with the prompt
 * cache on (each call decodes only what differs from the previous one), one token, no grammar.
 */
async function serverBound(): Promise<Row> {
  const server = await startLlamaServer({ model: modelPath, parallel: 1, threads, contextSize: 4096 });
  try {
    const root = server.url.replace(/\/v1$/, '');
    const chatml = (input: string) => `<|im_start|>system\n${system}<|im_end|>\n<|im_start|>user\n${userText(input)}<|im_end|>\n<|im_start|>assistant\n`;
    const call = async (input: string) => {
      const res = await fetch(`${root}/completion`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: chatml(input), n_predict: 1, temperature: 0, cache_prompt: true }) });
      if (!res.ok) throw new Error(`llama-server answered ${res.status}: ${await res.text()}`);
      return ((await res.json()) as { timings?: { prompt_n?: number } }).timings?.prompt_n ?? 0;
    };
    // Warm-up: the shared prefix goes into the slot's cache, as the backends' warm-ups allocate.
    serverPromptTokens = await call('warm up');
    const started = load();
    const t = performance.now();
    let evaluated = 0;
    for (const input of inputs) evaluated += await call(input);
    const seconds = (performance.now() - t) / 1000;
    return { case: 'evaluator, llama-server one-token bound', schedule: 'llama-server', seconds: +seconds.toFixed(3), rate: +(promptCount / seconds).toFixed(3), unit: 'calls/s', evaluatedTokens: evaluated, load: started };
  } finally {
    await server.stop();
  }
}
let serverPromptTokens = 0;

/** A process that keeps one core busy until stopped. */
async function busyCore(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  if (child.exitCode !== null) throw new Error('the busy process exited');
  return child;
}

/** Runs lockstep and free `repeat` times, alternating which goes first. */
async function pairs(run: (s: LlamaSchedule) => Promise<Row>): Promise<Row[]> {
  const out: Row[] = [];
  for (let i = 0; i < repeat; i++) {
    const order: LlamaSchedule[] = i % 2 === 0 ? ['lockstep', 'free'] : ['free', 'lockstep'];
    for (const s of order) {
      const row = await run(s);
      out.push(row);
      progress(row);
    }
  }
  return out;
}

function progress(r: Row): void {
  if (!values.json) process.stderr.write(`  ${r.case.padEnd(42)} ${r.schedule.padEnd(12)} ${r.rate.toFixed(2).padStart(8)} ${r.unit.padEnd(8)} load ${r.load}${r.threadsUsed ? ` threads ${r.threadsUsed}` : ''}\n`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median lockstep rate over median free rate, and each repeat's own ratio (lockstep / free of the same repeat). */
function ratio(rows: Row[]): { lockstepVsFree: number; perRepeat: number[] } {
  const lock = rows.filter((r) => r.schedule === 'lockstep');
  const free = rows.filter((r) => r.schedule === 'free');
  return {
    lockstepVsFree: +(median(lock.map((r) => r.rate)) / median(free.map((r) => r.rate))).toFixed(3),
    perRepeat: lock.map((r, i) => +(r.rate / free[i]!.rate).toFixed(3)),
  };
}

const modelPath = values.model ?? (await ensureSyntheticModel(shape));
const llama = await getLlamaRuntime();
const probe = await loadLlamaBackend({ modelPath, threads, sequences: 1, contextSize: 1024 });
const promptTokens = await probe.countPromptTokens(classifyRequest(inputs[0]!).prompt);
const prefixTokens = await probe.countPromptTokens({ system, user: prefix });
await probe.dispose();

const rows: Row[] = [];
const summary: Record<string, unknown> = {};
try {
  if (cases.has('single')) {
    for (const reuse of [false, true]) {
      const row = await evaluator('lockstep', 1, reuse, false);
      rows.push(row);
      progress(row);
    }
  }
  if (cases.has('evaluator')) {
    const evals: Row[] = [];
    const bounds: Row[] = [];
    for (let i = 0; i < repeat; i++) {
      // The peer between the two schedules' runs, its place alternating too.
      const order: (LlamaSchedule | 'llama-server')[] = i % 2 === 0 ? ['lockstep', 'llama-server', 'free'] : ['free', 'llama-server', 'lockstep'];
      for (const s of order) {
        if (s === 'llama-server' && values['no-server']) continue;
        const row = s === 'llama-server' ? await serverBound() : await evaluator(s);
        (s === 'llama-server' ? bounds : evals).push(row);
        progress(row);
      }
    }
    rows.push(...evals, ...bounds);
    const lock = evals.filter((r) => r.schedule === 'lockstep');
    summary.evaluator = {
      ...ratio(evals),
      ...(bounds.length > 0
        ? {
            // Lockstep's calls/s as a fraction of the bound's (1 = as fast; 1/1.1 = 0.909 is "within 1.1×").
            lockstepVsServerBound: +(median(lock.map((r) => r.rate)) / median(bounds.map((r) => r.rate))).toFixed(3),
            perRepeatVsServerBound: lock.map((r, i) => +(r.rate / bounds[i]!.rate).toFixed(3)),
          }
        : {}),
    };
  }
  if (cases.has('generation')) {
    const gen = await pairs((s) => generation(s));
    rows.push(...gen);
    summary.generation = ratio(gen);
  }
  if (cases.has('mixed')) {
    const mix = await pairs((s) => mixed(s));
    rows.push(...mix);
    summary.mixed = ratio(mix);
  }
  if (cases.has('contention') || cases.has('contention-fixed')) {
    const busy = await busyCore();
    try {
      if (cases.has('contention')) {
        const evals = (await pairs((s) => evaluator(s))).map((r) => ({ ...r, case: `${r.case}, one core busy` }));
        const gen = (await pairs((s) => generation(s))).map((r) => ({ ...r, case: `${r.case}, one core busy` }));
        rows.push(...evals, ...gen);
        summary.contention = { evaluator: ratio(evals), generation: ratio(gen) };
      }
      if (cases.has('contention-fixed')) {
        // As before the thread budget followed the load: --threads threads whatever else runs.
        contentionWatch()?.stop();
        const evals = (await pairs((s) => evaluator(s))).map((r) => ({ ...r, case: `${r.case}, one core busy, fixed threads` }));
        const gen = (await pairs((s) => generation(s))).map((r) => ({ ...r, case: `${r.case}, one core busy, fixed threads` }));
        rows.push(...evals, ...gen);
        summary.contentionFixedThreads = { evaluator: ratio(evals), generation: ratio(gen) };
      }
    } finally {
      busy.kill('SIGKILL');
    }
  }
} finally {
  await disposeLlamaRuntime();
}

const env = {
  model: values.model ?? `synthetic ${shape}`,
  gpu: llama.gpu || 'cpu',
  threads,
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? 'unknown',
  prompts: promptCount,
  promptTokens,
  serverPromptTokens: serverPromptTokens || undefined,
  sharedPrefixTokens: prefixTokens,
  genTokens,
  repeat,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify({ env, summary, rows }, null, 2)}\n`);
} else {
  process.stdout.write(
    `model ${env.model} | backend ${env.gpu} | threads ${threads} of ${env.cores} cores (${env.cpu})\n` +
      `${promptCount} classification prompts of ${promptTokens} tokens sharing a ${prefixTokens}-token prefix; generation ${genTokens} tokens per sequence\n\n`,
  );
  const w = Math.max(...rows.map((r) => r.case.length));
  process.stdout.write(`${'case'.padEnd(w)}  ${'schedule'.padEnd(12)}  ${'seconds'.padStart(8)}  ${'rate'.padStart(9)}  unit      decoded  load\n`);
  for (const r of rows)
    process.stdout.write(`${r.case.padEnd(w)}  ${r.schedule.padEnd(12)}  ${r.seconds.toFixed(2).padStart(8)}  ${r.rate.toFixed(2).padStart(9)}  ${r.unit.padEnd(8)}  ${String(r.evaluatedTokens).padStart(7)}  ${r.load}\n`);
  process.stdout.write(`\n${JSON.stringify(summary, null, 2)}\n`);
}
