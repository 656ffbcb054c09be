// Micro-benchmark of LlamaBackend on a synthetic model of a real shape (default Qwen2.5-0.5B):
//  (a) evaluator calls per second, ~20 classification prompts sharing a ~300-token prefix:
//      no reuse + 1 sequence, reuse + 1 sequence, reuse + 4 parallel sequences (lockstep, the
//      default, and the previous free schedule, bench/free-schedule.ts);
//  (b) generation tokens per second with 1 and 4 sequences (4 also on the free schedule);
//  (c) the two mixed in one call on 4 sequences, lockstep and free: the same requests, so the
//      ratio is what the deterministic schedule costs on identical work.
// The weights are random, so only speed means anything here, not the answers.
//
//   npx tsx bench/llama-micro.ts [--shape qwen2.5-0.5b] [--threads 2] [--prompts 20] [--gen-tokens 64] [--json]
import { availableParallelism, cpus } from 'node:os';
import { parseArgs } from 'node:util';
import type { GenerateRequest } from '../electron/engine/backend';
import { disposeLlamaRuntime, getLlamaRuntime, loadLlamaBackend, type LlamaBackend } from '../electron/llama';
import { loadScheduled, type LlamaSchedule } from './free-schedule';
import { ensureSyntheticModel, syntheticShapes, type SyntheticShape } from '../tools/synthetic-gguf';

const { values } = parseArgs({
  options: {
    shape: { type: 'string', default: 'qwen2.5-0.5b' },
    model: { type: 'string' },
    threads: { type: 'string', default: '2' },
    prompts: { type: 'string', default: '20' },
    'gen-tokens': { type: 'string', default: '64' },
    json: { type: 'boolean', default: false },
  },
});

const shape = values.shape as SyntheticShape;
if (!values.model && !syntheticShapes.includes(shape)) throw new Error(`unknown shape ${shape}; one of ${syntheticShapes.join(', ')}`);
const threads = Number(values.threads);
const promptCount = Number(values.prompts);
const genTokens = Number(values['gen-tokens']);

const labels = ['negative', 'positive'];
const grammar = `root ::= " " (${labels.map((l) => `"${l}"`).join(' | ')})`;
const topics = ['acting', 'direction', 'screenplay', 'cinematography', 'editing', 'pacing', 'soundtrack', 'visual effects', 'set design', 'casting'];
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
const classifyRequest = (input: string): GenerateRequest => ({
  prompt: { system: 'You are a careful sentiment annotator.', user: `${prefix}Sentence: "${input}"\nLabel:` },
  sharedUserPrefixLength: prefix.length,
  grammar,
  maxTokens: 4,
});

interface Row {
  case: string;
  seconds: number;
  rate: number;
  unit: string;
  evaluatedTokens: number;
}

async function evaluatorCase(modelPath: string, name: string, sequences: number, reuse: boolean, parallel: boolean, schedule: LlamaSchedule = 'lockstep'): Promise<Row> {
  const backend = await loadScheduled({ modelPath, threads, sequences, contextSize: 1024, reuse }, schedule);
  try {
    await backend.generate([{ prompt: { system: 'warm', user: 'up' }, maxTokens: 1 }]); // first-decode allocation out of the timing
    const before = backend.stats();
    const t = performance.now();
    const requests = inputs.map(classifyRequest);
    if (parallel) await backend.generate(requests);
    else for (const r of requests) await backend.generate([r]);
    const seconds = (performance.now() - t) / 1000;
    return { case: name, seconds, rate: promptCount / seconds, unit: 'calls/s', evaluatedTokens: backend.stats().evaluatedTokens - before.evaluatedTokens };
  } finally {
    await backend.dispose();
  }
}

const storyRequests = (count: number): GenerateRequest[] =>
  Array.from({ length: count }, (_, i) => ({
    prompt: { system: 'You write stories.', user: `Write story number ${i + 1}.` },
    maxTokens: genTokens,
    temperature: 0.8,
    seed: i + 1,
  }));

async function generationCase(modelPath: string, sequences: number, schedule: LlamaSchedule = 'lockstep'): Promise<Row> {
  const backend: LlamaBackend = await loadScheduled({ modelPath, threads, sequences, contextSize: 512 }, schedule);
  try {
    await backend.generate([{ prompt: { system: 'warm', user: 'up' }, maxTokens: 1 }]);
    const t = performance.now();
    const results = await backend.generate(storyRequests(sequences));
    const seconds = (performance.now() - t) / 1000;
    const tokens = results.reduce((n, r) => n + r.completionTokens, 0);
    const name = `generation, ${sequences} sequence${sequences > 1 ? 's' : ''}${schedule === 'free' ? ', free schedule' : ''} (${tokens} tokens)`;
    return { case: name, seconds, rate: tokens / seconds, unit: 'tokens/s', evaluatedTokens: backend.stats().evaluatedTokens };
  } finally {
    await backend.dispose();
  }
}

/**
 * The pipeline's mix in one call on 4 sequences: 4 sampled generations of --gen-tokens tokens
 * (paraphrase-like) and the evaluator prompts (prefix reuse), queued together, so prompts arrive
 * while other sequences generate. The same requests under both schedules: what lockstep's
 * prompts-alone, every-sequence-steps rule costs where the work is mixed.
 */
async function mixedCase(modelPath: string, schedule: LlamaSchedule): Promise<Row> {
  const backend = await loadScheduled({ modelPath, threads, sequences: 4, contextSize: 1024 }, schedule);
  try {
    await backend.generate([{ prompt: { system: 'warm', user: 'up' }, maxTokens: 1 }]);
    const before = backend.stats();
    const requests = [...storyRequests(4), ...inputs.map(classifyRequest)];
    const t = performance.now();
    await backend.generate(requests);
    const seconds = (performance.now() - t) / 1000;
    return { case: `mixed, 4 sequences${schedule === 'free' ? ', free schedule' : ''} (${requests.length} calls)`, seconds, rate: requests.length / seconds, unit: 'calls/s', evaluatedTokens: backend.stats().evaluatedTokens - before.evaluatedTokens };
  } finally {
    await backend.dispose();
  }
}

const modelPath = values.model ?? (await ensureSyntheticModel(shape));
const llama = await getLlamaRuntime();
const probe = await loadLlamaBackend({ modelPath, threads, sequences: 1, contextSize: 1024 });
const promptTokens = await probe.countPromptTokens(classifyRequest(inputs[0]!).prompt);
const prefixTokens = await probe.countPromptTokens({ system: 'You are a careful sentiment annotator.', user: prefix });
await probe.dispose();

const rows: Row[] = [];
rows.push(await evaluatorCase(modelPath, 'evaluator, no reuse, 1 sequence', 1, false, false));
rows.push(await evaluatorCase(modelPath, 'evaluator, reuse, 1 sequence', 1, true, false));
rows.push(await evaluatorCase(modelPath, 'evaluator, reuse, 4 sequences', 4, true, true));
// The previous, timing-driven schedule (not reproducible): what the deterministic one costs or saves.
rows.push(await evaluatorCase(modelPath, 'evaluator, reuse, 4 sequences, free schedule', 4, true, true, 'free'));
rows.push(await generationCase(modelPath, 1));
rows.push(await generationCase(modelPath, 4));
rows.push(await generationCase(modelPath, 4, 'free'));
rows.push(await mixedCase(modelPath, 'lockstep'));
rows.push(await mixedCase(modelPath, 'free'));

const env = {
  model: values.model ?? `synthetic ${shape}`,
  gpu: llama.gpu || 'cpu',
  threads,
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? 'unknown',
  prompts: promptCount,
  promptTokens,
  sharedPrefixTokens: prefixTokens,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify({ env, rows }, null, 2)}\n`);
} else {
  process.stdout.write(
    `model ${env.model} | backend ${env.gpu} | threads ${threads} of ${env.cores} cores (${env.cpu})\n` +
      `${promptCount} classification prompts of ~${promptTokens} tokens sharing a ~${prefixTokens}-token prefix; generation ${genTokens} tokens per sequence\n\n`,
  );
  const w = Math.max(...rows.map((r) => r.case.length));
  process.stdout.write(`${'case'.padEnd(w)}  ${'seconds'.padStart(8)}  ${'rate'.padStart(9)}  unit      prompt tokens decoded\n`);
  for (const r of rows)
    process.stdout.write(`${r.case.padEnd(w)}  ${r.seconds.toFixed(2).padStart(8)}  ${r.rate.toFixed(2).padStart(9)}  ${r.unit.padEnd(8)}  ${r.evaluatedTokens}\n`);
}
await disposeLlamaRuntime();
