// `tatra api` end to end: the built CLI as a child process, real inference on the synthetic tiny
// model (in process, and the same model behind llama-server as a second, remote pairing), driven
// by the official `openai` client, by promptfoo running the README's configuration
// (examples/promptfoo/) against it and llama-server, and by 200 concurrent requests from 20
// clients against a queue of 50. One server for the whole file: it loads once. A client that
// leaves mid-request is served in this process (startApiService on the same model), so the test
// waits for the service's own event that its work is freed, which does not cross from a child.
import { spawn } from 'node:child_process';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseModelSpec } from '../../electron/common/model-spec';
import { DEFAULT_SETTINGS } from '../../electron/common/tatra';
import type { LlamaBackend } from '../../electron/llama/backend';
import { loadLlamaBackend } from '../../electron/llama/load-backend';
import { disposeLlamaRuntime } from '../../electron/llama/runtime';
import { ApiKeyStore, startApiService, type RunningApiService } from '../../electron/service';
import type { Admission } from '../../electron/service/admission';
import { loadBuiltInTasks } from '../../electron/tasks';
import { startLlamaServer, type RunningLlamaServer } from '../helpers/llama-server';
import { tinyModelPath } from '../helpers/models';
import { parseMetrics, sampleValue } from '../helpers/prometheus';
import { startTatraApi, type RunningTatraApi } from '../helpers/tatra-api';
import { CLI_ENV, repoRoot, tatraCli } from '../helpers/tatra-cli';

const SST2_LABELS = ['negative', 'positive'];
let dataDir = '';
let key = '';
let llama: RunningLlamaServer;
let api: RunningTatraApi;
let client: OpenAI;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tatra-api-model-'));
  key = (await tatraCli(['api', 'keys', 'add', 'model-tests', '--data-dir', dataDir])).stdout.trim();
  // The same model behind llama-server: a remote pairing of tatra api, and promptfoo's zero-shot
  // side. Weight repacking off: the CPU build's AMX path segfaults on the synthetic model here.
  llama = await startLlamaServer({ model: await tinyModelPath(), parallel: 2 });
  // Small settings keep each classification to a few model calls; the queue is the one the load test names.
  api = await startTatraApi([
    '--model', await tinyModelPath(),
    '--pairing', `remote=openai+${llama.url}#tiny`,
    '--task', 'sst2', '-n', '1', '-k', '1', '-r', '1', '--max-queue', '50', '--concurrency', '4', '--shutdown-grace', '1', '--data-dir', dataDir,
  ]);
  client = new OpenAI({ apiKey: key, baseURL: `${api.origin}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await api?.stop('SIGKILL');
  await llama?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Where a request goes: the `tatra api` child unless told. */
interface Face {
  origin: string;
  key: string;
}
const child = (): Face => ({ origin: api.origin, key });

async function metrics(to = child()) {
  const res = await fetch(`${to.origin}/metrics`);
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function post(path: string, body: unknown, agent?: Agent, signal?: AbortSignal, to = child()): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${to.origin}${path}`, { method: 'POST', agent, signal, headers: { authorization: `Bearer ${to.key}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/**
 * A streamed chat completion: `started` resolves on its first stage (the engine is running it),
 * `answer` once the stream has ended. A stream that is not answered 200 rejects both.
 */
function streamChat(body: unknown, signal?: AbortSignal, to = child()): { started: Promise<void>; answer: Promise<Answer> } {
  let stage!: () => void;
  const started = new Promise<void>((resolve) => (stage = resolve));
  const answer = new Promise<Answer>((resolve, reject) => {
    const req = request(`${to.origin}/v1/chat/completions`, { method: 'POST', signal, headers: { authorization: `Bearer ${to.key}`, 'content-type': 'application/json' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode}`));
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        if (text.includes('"stage"')) stage();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  // A client that leaves on purpose (its signal) ends its answer; nobody waits for it then.
  answer.catch(() => undefined);
  return { started: Promise.race([started, answer.then(() => Promise.reject(new Error('the stream ended before its first stage')))]), answer };
}

describe('tatra api with the official openai client', () => {
  it('lists the models', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['tatra/sst2', 'tatra/sst2@synthetic-tiny-v2', 'tatra/sst2@remote']);
  });

  it('serves a remote model alike, through the same engine', async () => {
    const completion = await client.chat.completions.create({ model: 'tatra/sst2@remote', messages: [{ role: 'user', content: 'A warm and funny film.' }] });
    expect(SST2_LABELS).toContain(completion.choices[0]!.message.content);
    const tatra = (completion as unknown as { tatra: { pairing: string; deterministic: boolean; calls: number } }).tatra;
    // A remote server promises no reproducibility; the answer says so.
    expect(tatra).toMatchObject({ pairing: 'remote', deterministic: false });
    expect(tatra.calls).toBeGreaterThan(0);
  });

  it('answers a chat completion whose content is a label of the task', async () => {
    const completion = await client.chat.completions.create({ model: 'tatra/sst2', messages: [{ role: 'user', content: 'A warm and funny film.' }] });
    const content = completion.choices[0]!.message.content;
    expect(SST2_LABELS).toContain(content);
    const tatra = (completion as unknown as { tatra: { label: string; votes: Record<string, number>; calls: number; deterministic: boolean } }).tatra;
    expect(tatra.label).toBe(content);
    expect(Object.keys(tatra.votes).sort()).toEqual(SST2_LABELS);
    expect(tatra.calls).toBeGreaterThan(0);
    expect(tatra.deterministic).toBe(true);
    expect(completion.usage!.total_tokens).toBeGreaterThan(0);
  });

  it('streams the stages, then the label', async () => {
    const stream = await client.chat.completions.create({ model: 'tatra/sst2', stream: true, seed: 3, messages: [{ role: 'user', content: 'Dull and far too long.' }] });
    let content = '';
    const stages: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      const stage = (chunk as unknown as { tatra?: { stage?: string } }).tatra?.stage;
      if (stage) {
        // Every stage comes before the label.
        expect(content).toBe('');
        stages.push(stage);
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(SST2_LABELS).toContain(content);
    expect(finish).toBe('stop');
    expect(new Set(stages)).toEqual(new Set(['examples', 'paraphrases', 'evaluation']));
  });

  it('raises NotFoundError for an unknown task', async () => {
    const failure = await client.chat.completions.create({ model: 'tatra/no-such-task', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.NotFoundError);
    expect((failure as InstanceType<typeof OpenAI.NotFoundError>).status).toBe(404);
    expect((failure as Error).message).toContain('no task "no-such-task"');
  });

  it('raises AuthenticationError for a wrong key', async () => {
    const wrong = new OpenAI({ apiKey: 'tatra-not-a-key', baseURL: `${api.origin}/v1`, maxRetries: 0 });
    const failure = await wrong.models.list().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((failure as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    // The key is nowhere in what the server said.
    expect(api.stderr()).not.toContain(key);
  });
});

describe('tatra api under load', () => {
  it('answers 200 concurrent requests from 20 clients against a queue of 50 with a result or a 429 each', async () => {
    const before = await metrics();
    const clients = Array.from({ length: 20 }, () => new Agent({ keepAlive: true, maxSockets: 10 }));
    const requests = clients.flatMap((agent, c) =>
      Array.from({ length: 10 }, (_, i) => {
        const input = `load test ${c}-${i}: the plot is thin but the actors are good`;
        // Bounded in time: a request that gets no answer at all fails the test instead of hanging it.
        return post('/v1/chat/completions', { model: 'tatra/sst2', messages: [{ role: 'user', content: input }] }, agent, AbortSignal.timeout(240_000)).then((answer) => ({ input, answer }));
      }),
    );
    const answered = await Promise.all(requests);
    for (const agent of clients) agent.destroy();

    const ok = answered.filter((a) => a.answer.status === 200);
    const busy = answered.filter((a) => a.answer.status === 429);
    expect(ok.length + busy.length, JSON.stringify(answered.find((a) => ![200, 429].includes(a.answer.status))?.answer)).toBe(200);
    // The first 50 to arrive are taken on; each of them is answered.
    expect(ok.length).toBeGreaterThanOrEqual(50);
    for (const { answer } of ok) expect(SST2_LABELS).toContain((JSON.parse(answer.body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content);
    for (const { answer } of busy) {
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toBe('queue_full');
    }
    expect(new Set(ok.map((a) => a.answer.headers['x-request-id'])).size).toBe(ok.length);

    // The server counted exactly one answer per request: none lost, none answered twice.
    const after = await metrics();
    const delta = (status: string) =>
      sampleValue(after, 'tatra_api_requests_total', { route: '/v1/chat/completions', status }) - sampleValue(before, 'tatra_api_requests_total', { route: '/v1/chat/completions', status });
    expect(delta('200')).toBe(ok.length);
    expect(delta('429')).toBe(busy.length);
    expect(sampleValue(after, 'tatra_api_requests_in_progress')).toBe(0);
    expect(sampleValue(after, 'tatra_api_queue_depth')).toBe(0);
    // Memory stays bounded. What the service itself holds (requests, queue, caches) is on the JS
    // heap and must not grow with the burst. The resident size also counts llama.cpp's native
    // objects of finished requests, which node-llama-cpp frees only when V8 next collects: a
    // looser bound (measured: +0.3 to +0.8 GiB for a first burst, a plateau after).
    const used = (m: typeof after, name: string) => sampleValue(m, name);
    expect(used(after, 'nodejs_heap_size_used_bytes') - used(before, 'nodejs_heap_size_used_bytes')).toBeLessThan(64 * 1024 * 1024);
    expect(used(after, 'process_resident_memory_bytes') - used(before, 'process_resident_memory_bytes')).toBeLessThan(1024 * 1024 * 1024);
    // Still up.
    expect(((await (await fetch(`${api.origin}/healthz`)).json()) as { status: string }).status).toBe('ok');
  });
});

/** Resolves once `admission` holds nothing, admitted or running, on its own change event. */
function emptied(admission: Admission): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (admission.admitted > 0 || admission.running > 0) return;
      off();
      resolve();
    };
    const off = admission.onChange(check);
    check();
  });
}

describe('tatra api in this process, on the tiny model', () => {
  // The same service and engine as the child's (startApiService), its settings as the child's,
  // on a model loaded here: what the test waits for is the service's own event.
  let service: RunningApiService | undefined;
  let backend: LlamaBackend | undefined;
  let face: Face;
  beforeAll(async () => {
    const tiny = await tinyModelPath();
    const keys = new ApiKeyStore(join(dataDir, 'in-process'));
    backend = await loadLlamaBackend({ modelPath: tiny, threads: 1, sequences: 4 });
    service = await startApiService({
      tasks: (await loadBuiltInTasks()).filter((t) => t.id === 'sst2'),
      pairings: [{ name: 'tiny', generator: parseModelSpec(tiny), evaluator: parseModelSpec(tiny), generatorBackend: backend, evaluatorBackend: backend }],
      keys,
      defaults: { ...DEFAULT_SETTINGS, n: 1, k: 1, r: 1 },
      port: 0,
      maxQueue: 50,
      concurrency: 4,
      timeoutMs: 300_000,
      log: () => undefined,
    });
    face = { origin: service.origin, key: await keys.add('model-tests') };
  });
  afterAll(async () => {
    await service?.close(0);
    await backend?.dispose();
    await disposeLlamaRuntime();
  });

  it('frees the work of a client that disconnects mid-request', async () => {
    const before = await metrics(face);
    // Sixteen runs of four variants each: far more model calls than happen before the client leaves.
    const settings = { r: 16, n: 3, early_stop: false };
    const planned = settings.r * (SST2_LABELS.length + 1 + (settings.n + 1));
    const leaving = new AbortController();
    const { started } = streamChat({ model: 'tatra/sst2', stream: true, seed: 77, tatra: settings, messages: [{ role: 'user', content: 'A client that will not wait for the answer.' }] }, leaving.signal, face);
    await started;
    leaving.abort();

    // The server notices, cancels the engine's work and frees the slot: nothing admitted or running.
    await emptied(service!.admission);
    const now = await metrics(face);
    const outcome = (m: typeof now, o: string) => sampleValue(m, 'tatra_api_classifications_total', { outcome: o });
    expect(outcome(now, 'cancelled') - outcome(before, 'cancelled')).toBe(1);
    const calls = sampleValue(now, 'tatra_api_model_calls_total') - sampleValue(before, 'tatra_api_model_calls_total');
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThan(planned);
    // And the freed slot serves the next request.
    const next = await post('/v1/chat/completions', { model: 'tatra/sst2', messages: [{ role: 'user', content: 'After the one who left.' }] }, undefined, undefined, face);
    expect(next.status).toBe(200);
  });
});

describe('promptfoo runs the README configuration against tatra api', () => {
  let scratch = '';
  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('writes a row per input with the label TATRA gives it', async () => {
    scratch = await mkdtemp(join(tmpdir(), 'tatra-promptfoo-'));
    const results = join(scratch, 'results.json');
    const config = join(repoRoot, 'examples', 'promptfoo', 'promptfooconfig.yaml');
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(repoRoot, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js'), 'eval', '-c', config, '-o', results, '--no-cache', '--no-progress-bar', '--no-table'], {
        cwd: scratch,
        env: {
          ...CLI_ENV,
          // No network on this machine, and nothing of promptfoo's outside the scratch folder.
          PROMPTFOO_DISABLE_TELEMETRY: '1',
          PROMPTFOO_DISABLE_UPDATE: '1',
          PROMPTFOO_DISABLE_SHARING: '1',
          PROMPTFOO_DISABLE_REMOTE_GENERATION: '1',
          PROMPTFOO_CONFIG_DIR: join(scratch, 'config'),
          PROMPTFOO_CACHE_PATH: join(scratch, 'cache'),
          TATRA_SERVICE_URL: `${api.origin}/v1`,
          TATRA_SERVICE_KEY: key,
          ZERO_SHOT_BASE: llama.url,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
      child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output }));
    });
    // promptfoo exits 100 when some assertions fail: a random-weight model gets labels wrong.
    expect([0, 100], run.output.slice(-3000)).toContain(run.code);

    const file = JSON.parse(await readFile(results, 'utf8')) as {
      results: { results: { provider: { label?: string; id: string }; vars: { sentence: string; label: string }; response?: { output?: unknown }; failureReason: number }[] };
    };
    const csv = (await readFile(join(repoRoot, 'examples', 'promptfoo', 'sentiment.csv'), 'utf8')).trim().split('\n').slice(1);
    const rows = file.results.results;
    const tatraRows = rows.filter((r) => r.provider.label === 'TATRA');
    const zeroShotRows = rows.filter((r) => r.provider.label === 'zero-shot');
    expect(tatraRows).toHaveLength(csv.length);
    expect(zeroShotRows).toHaveLength(csv.length);
    // Every call was answered (failureReason 2 is a provider error; 1, a wrong label, is the model's business).
    for (const r of [...tatraRows, ...zeroShotRows]) expect(r.failureReason, JSON.stringify(r).slice(0, 2000)).not.toBe(2);

    // Each TATRA row is the label the service gives that sentence with the configuration's
    // settings: asked again through /v1/classify, the very same answers come back, from the cache.
    const sentences = tatraRows.map((r) => r.vars.sentence);
    const again = await post('/v1/classify', { model: 'tatra/sst2', inputs: sentences, seed: 1, tatra: { r: 3, early_stop: true } });
    expect(again.status).toBe(200);
    const data = (JSON.parse(again.body) as { data: { label: string; cached: boolean }[] }).data;
    expect(tatraRows.map((r) => r.response?.output)).toEqual(data.map((d) => d.label));
    for (const d of data) {
      expect(SST2_LABELS).toContain(d.label);
      expect(d.cached).toBe(true);
    }
  });
});

describe('tatra api shutting down', () => {
  it('on SIGTERM finishes or cancels what runs, answers it, and exits 0', async () => {
    // Streamed, so its first stage says the engine is running it when the signal comes.
    const running = streamChat({ model: 'tatra/sst2', stream: true, tatra: { r: 12, early_stop: false }, messages: [{ role: 'user', content: 'Asked just before the end.' }] });
    await running.started;
    const code = await api.stop('SIGTERM');
    const answer = await running.answer;
    expect(answer.status).toBe(200);
    // Answered to its end: finished within the grace period, or cancelled with the error that says why.
    expect(answer.body).toMatch(/data: \[DONE\]\n\n$|"code":"shutting_down"/);
    expect(code).toBe(0);
    expect(api.stderr()).toContain('SIGTERM');
    expect(api.stderr()).not.toMatch(/\n\s+at /);
  });
});
