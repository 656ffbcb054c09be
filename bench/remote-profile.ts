// Where a remote evaluator call's time goes on llama-server (the profile behind bench/remote.ts's
// figures): the same SST-2 evaluator prompts sent as raw /completion requests in several shapes,
// two at a time to one llama-server (2 slots, 1 thread), with the server's own timings per call:
//
//   free text          no grammar: decoding alone (the floor)
//   grammar            the label grammar alone: llama.cpp applies it to the whole vocabulary
//                      (Qwen: 151,936 tokens) whenever its first, unconstrained sample is rejected
//   grammar+bias+stop  what the backend sends now: logit_bias on the labels' tokens, the labels
//                      as stop words, the grammar kept
//   /apply-template    the extra round trip the backend makes per distinct prompt
//   backend ×1 / ×2    the RemoteBackend with one or two requests in flight per slot
//
//   npx tsx bench/remote-profile.ts [--calls 48] [-k 8]
//
// Figures on a shared CPU move with the load; compare rows of one run, not runs.
import { parseArgs } from 'node:util';
import { evaluationGrammar } from '../electron/engine/grammar';
import { evaluationPrompt } from '../electron/engine/prompts';
import { resolveTask } from '../electron/tasks';
import { connectRemoteBackend } from '../electron/remote';
import { chatMessages } from '../electron/remote/shapes';
import { startLlamaServer } from '../test/helpers/llama-server';
import { ensureSyntheticModel } from '../tools/synthetic-gguf';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '48' }, k: { type: 'string', short: 'k', default: '8' } } });
const calls = Number(values.calls);
const SLOTS = 2;

interface Timings {
  prompt_ms: number;
  predicted_ms: number;
  predicted_n: number;
}
type Answer = { content?: string; stopping_word?: string; timings?: Timings };

const task = await resolveTask('sst2');
const examples = Array.from({ length: Number(values.k) }, (_, i) => ({ text: `Example sentence number ${i} about a film that was ${i % 2 ? 'dull' : 'lovely'}.`, label: i % 2 ? 'negative' : 'positive' }));
const grammar = evaluationGrammar(task);
const prompts = Array.from({ length: calls }, (_, i) => evaluationPrompt(task, examples, `Input ${i}: the movie had moments of ${i % 3 ? 'grace' : 'tedium'} and ${i} scenes.`).prompt);

const server = await startLlamaServer({ model: await ensureSyntheticModel('tiny-full'), parallel: SLOTS, threads: 1 });
const root = server.url.replace(/\/v1$/, '');
const post = async (path: string, body: unknown): Promise<Answer & Record<string, unknown>> =>
  (await fetch(root + path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })).json() as Promise<Answer & Record<string, unknown>>;

/** Runs fn(i) for every call, SLOTS at a time; calls/s after a warm-up of a few calls. */
async function rate(fn: (i: number) => Promise<unknown>): Promise<{ perSecond: number; answers: unknown[] }> {
  const run = async (n: number) => {
    const answers: unknown[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: SLOTS }, async () => {
      while (next < n) {
        const i = next++;
        answers[i] = await fn(i);
      }
    }));
    return answers;
  };
  await run(SLOTS * 2);
  const t0 = performance.now();
  const answers = await run(calls);
  return { perSecond: calls / ((performance.now() - t0) / 1000), answers };
}

function line(name: string, perSecond: number, answers: unknown[] = []): void {
  const t = answers.map((a) => (a as Answer).timings).filter((x): x is Timings => !!x);
  const mean = (f: (x: Timings) => number) => t.reduce((s, x) => s + f(x), 0) / Math.max(1, t.length);
  const server = t.length ? `  server per call: prompt+first sample ${mean((x) => x.prompt_ms).toFixed(1)} ms, then ${mean((x) => x.predicted_n).toFixed(1)} tokens in ${mean((x) => x.predicted_ms).toFixed(1)} ms` : '';
  process.stdout.write(`  ${name.padEnd(20)} ${perSecond.toFixed(2).padStart(8)} calls/s${server}\n`);
}

try {
  const rendered = await Promise.all(prompts.map(async (p) => String((await post('/apply-template', { messages: chatMessages(p, false) })).prompt)));
  const tokenized = await Promise.all(['negative', 'positive'].map((content) => post('/tokenize', { content })));
  const labelTokens = tokenized.flatMap((t) => t.tokens as number[]);
  const base = (i: number) => ({ prompt: rendered[i], n_predict: task.evaluatorMaxTokens, temperature: 0, top_k: 40, cache_prompt: true, stream: false });

  process.stdout.write(`one llama-server (${SLOTS} slots, 1 thread), tiny synthetic model (the whole Qwen vocabulary), ${calls} SST-2 evaluator calls, k=${values.k}\n`);
  const free = await rate((i) => post('/completion', base(i)));
  line('free text', free.perSecond, free.answers);
  const g = await rate((i) => post('/completion', { ...base(i), grammar }));
  line('grammar', g.perSecond, g.answers);
  const gb = await rate((i) => post('/completion', { ...base(i), grammar, logit_bias: labelTokens.map((t) => [t, 100]), stop: ['negative', 'positive'] }));
  line('grammar+bias+stop', gb.perSecond, gb.answers);
  const tpl = await rate((i) => post('/apply-template', { messages: chatMessages(prompts[(i + 1) % calls]!, false) }));
  line('/apply-template', tpl.perSecond);
  // Alternated, so a drift in the machine's load shows instead of favouring one.
  for (const perSlot of [2, 1, 2, 1, 2, 1]) {
    const backend = await connectRemoteBackend({ urls: [server.url], model: 'tiny', maxInFlight: SLOTS * perSlot });
    const requests = prompts.map((prompt) => ({ prompt, grammar, maxTokens: task.evaluatorMaxTokens }));
    await backend.generate(requests.slice(0, SLOTS * 2));
    const t0 = performance.now();
    await backend.generate(requests);
    line(`backend ×${perSlot} per slot`, calls / ((performance.now() - t0) / 1000));
    await backend.dispose();
  }
} finally {
  await server.stop();
}
