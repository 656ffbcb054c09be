// What the one HTTP client's checks cost per call on the remote hot path: the answer's schema check
// and the key redaction, beside JSON.parse of the same answer (which every call pays anyway), for
// the three completion shapes; then whole calls per second through RemoteBackend.generate against
// a local server that answers at once (so the client, not a model, is what is measured), with and
// without a key.
//
//   npx tsx bench/http-client.ts [--calls 4000] [--concurrency 64]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { redactKey } from '../electron/net/http';
import { connectRemoteBackend } from '../electron/remote';
import { answerSchema, type ShapedCall } from '../electron/remote/shapes';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '4000' }, concurrency: { type: 'string', default: '64' } } });
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
const KEY = 'sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH';

const answers: Array<[string, ShapedCall, unknown]> = [
  ['/completion', { path: '/completion', fromRoot: true, body: {}, constrained: true }, { content: 'positive', tokens_evaluated: 412, tokens_predicted: 1, stop: true, stop_type: 'word', stopping_word: 'positive', timings: { prompt_n: 12, prompt_ms: 3.1, predicted_n: 1, predicted_ms: 1.2 }, generation_settings: { n_ctx: 4096, temperature: 0 } }],
  ['/api/chat', { path: '/api/chat', fromRoot: true, body: {}, constrained: true }, { model: 'm', created_at: '2025-01-01T00:00:00Z', message: { role: 'assistant', content: '{"answer":"positive"}' }, done: true, prompt_eval_count: 412, eval_count: 5 }],
  ['/chat/completions', { path: '/chat/completions', fromRoot: false, body: {}, constrained: true }, { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'positive' }, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 412, completion_tokens: 1, total_tokens: 413 } }],
];

function perCallMicros(fn: () => void, n = 200_000): number {
  for (let i = 0; i < 10_000; i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn();
  return ((performance.now() - t0) * 1000) / n;
}

console.log('per answer, µs (same run):');
console.log('shape'.padEnd(20), 'JSON.parse'.padStart(11), 'schema'.padStart(8), 'redact'.padStart(8), ' checks/parse');
for (const [name, call, value] of answers) {
  const text = JSON.stringify(value);
  const parsed = JSON.parse(text) as unknown;
  const schema = answerSchema(call);
  const parse = perCallMicros(() => JSON.parse(text));
  const check = perCallMicros(() => schema.safeParse(parsed));
  const redact = perCallMicros(() => redactKey(text, KEY));
  console.log(name.padEnd(20), parse.toFixed(2).padStart(11), check.toFixed(2).padStart(8), redact.toFixed(2).padStart(8), `  ${((check + redact) / parse).toFixed(2)}×`);
}

const body = JSON.stringify(answers[2]![2]);
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }));
      return;
    }
    if (req.url === '/v1/chat/completions') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"no"}}');
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const request = { prompt: { system: 'Classify.', user: 'Text: "a fine film"\nAnswer:' }, maxTokens: 4, grammar: 'root ::= "positive" | "negative"' };

async function callsPerSecond(key: string | undefined): Promise<number> {
  const backend = await connectRemoteBackend({ urls: [url], model: 'm', maxInFlight: concurrency, ...(key ? { key } : {}) });
  try {
    const run = async (n: number) => {
      let next = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next++ < n) await backend.generate([request]);
      }));
    };
    await run(Math.min(500, calls));
    const t0 = performance.now();
    await run(calls);
    return calls / ((performance.now() - t0) / 1000);
  } finally {
    await backend.dispose();
  }
}

// Alternated, best of three each: the machine is shared and the first rounds warm the JIT.
const rates = { withoutKey: [] as number[], withKey: [] as number[] };
for (let round = 0; round < 3; round++) {
  rates.withoutKey.push(await callsPerSecond(undefined));
  rates.withKey.push(await callsPerSecond(KEY));
}
const withoutKey = Math.max(...rates.withoutKey);
const withKey = Math.max(...rates.withKey);
console.log(`\nRemoteBackend.generate against an instant local server, ${calls} calls, ${concurrency} in flight (best of 3, alternated):`);
console.log(`  no key (schema check only): ${withoutKey.toFixed(0)} calls/s (${rates.withoutKey.map((r) => r.toFixed(0)).join(', ')})`);
console.log(`  with key (schema + redaction): ${withKey.toFixed(0)} calls/s (${rates.withKey.map((r) => r.toFixed(0)).join(', ')}; ${(withKey / withoutKey).toFixed(2)}× the first)`);
server.close();
