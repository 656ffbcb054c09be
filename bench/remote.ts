// Evaluator calls per second on one workload (SST-2 evaluator prompts: the task's instruction, k
// shared examples and one input each, answered under the label grammar), on the same synthetic
// model: in-process (node-llama-cpp), one llama-server, and two llama-servers as two endpoints of
// one remote model. One thread per server, so two endpoints have twice the compute of one; the
// in-process backend gets one thread too. Prints the figures and the 1 → 2 endpoint scaling ratio.
//
//   npx tsx bench/remote.ts [--calls 96] [--slots 2] [--shape tiny-full] [-k 8]
//
// Builds llama-server first if needed (tools/build-llama-server.sh).
import { parseArgs } from 'node:util';
import { evaluationGrammar } from '../electron/engine/grammar';
import { evaluationPrompt } from '../electron/engine/prompts';
import { resolveTask } from '../electron/tasks';
import type { GenerateRequest, TatraBackend } from '../electron/engine/backend';
import { disposeLlamaRuntime, loadLlamaBackend } from '../electron/llama';
import { connectRemoteBackend } from '../electron/remote';
import { startLlamaServer, type RunningLlamaServer } from '../test/helpers/llama-server';
import { ensureSyntheticModel, type SyntheticShape } from '../tools/synthetic-gguf';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '96' },
    slots: { type: 'string', default: '2' },
    shape: { type: 'string', default: 'tiny-full' },
    k: { type: 'string', short: 'k', default: '8' },
  },
});
const calls = Number(values.calls);
const slots = Number(values.slots);
const k = Number(values.k);

const task = await resolveTask('sst2');
const examples = Array.from({ length: k }, (_, i) => ({ text: `Example sentence number ${i} about a film that was ${i % 2 ? 'dull' : 'lovely'}.`, label: i % 2 ? 'negative' : 'positive' }));
const grammar = evaluationGrammar(task);
const workload = (name: string, count: number): GenerateRequest[] =>
  Array.from({ length: count }, (_, i) => {
    const { prompt, sharedUserPrefixLength } = evaluationPrompt(task, examples, `${name} ${i}: the movie had moments of ${i % 3 ? 'grace' : 'tedium'} and ${i} scenes.`);
    return { prompt, sharedUserPrefixLength, grammar, maxTokens: 4 };
  });
const requests = workload('Input', calls);
// Other inputs with the same shared prefix: nothing of the measured prompts is cached beforehand.
const warmUp = workload('Warm-up', Math.max(slots * 4, Math.ceil(calls / 2)));

/**
 * Calls per second for the workload, after a warm-up of half as many other calls: prefix caches
 * filled, connections open and the JavaScript compiled (a warm-up of a few calls left the first
 * backend measured slower than the next, which skewed the 1 → 2 endpoint ratio).
 */
async function measure(backend: TatraBackend): Promise<number> {
  await backend.generate(warmUp);
  const t0 = performance.now();
  await backend.generate(requests);
  return calls / ((performance.now() - t0) / 1000);
}

const model = await ensureSyntheticModel(values.shape as SyntheticShape);
const figures: Record<string, number> = {};
const servers: RunningLlamaServer[] = [];
try {
  const local = await loadLlamaBackend({ modelPath: model, threads: 1, sequences: slots });
  figures['in-process (1 thread)'] = await measure(local);
  await local.dispose();
  await disposeLlamaRuntime();

  servers.push(...(await Promise.all([startLlamaServer({ model, parallel: slots, threads: 1 }), startLlamaServer({ model, parallel: slots, threads: 1 })])));
  const one = await connectRemoteBackend({ urls: [servers[0]!.url], model: 'tiny' });
  figures['1 llama-server (1 thread)'] = await measure(one);
  await one.dispose();
  const two = await connectRemoteBackend({ urls: servers.map((s) => s.url), model: 'tiny' });
  figures['2 llama-servers (1 thread each)'] = await measure(two);
  const share = two.stats().endpoints.map((e) => e.served);
  await two.dispose();

  process.stdout.write(`evaluator calls/s, ${calls} calls, ${values.shape} model, k=${k}, ${slots} slots per server\n`);
  for (const [name, v] of Object.entries(figures)) process.stdout.write(`  ${name.padEnd(34)} ${v.toFixed(2)}\n`);
  const ratio = figures['2 llama-servers (1 thread each)']! / figures['1 llama-server (1 thread)']!;
  process.stdout.write(`  scaling 1 → 2 endpoints            ${ratio.toFixed(2)}x  (requests per endpoint: ${share.join(' / ')})\n`);
} finally {
  await Promise.all(servers.map((s) => s.stop()));
}
