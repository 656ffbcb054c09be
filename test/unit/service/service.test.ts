// `tatra api`'s HTTP face in process (startApiService on port 0) with the real engine over scripted
// backends: the exact semantics of keys, errors, the cache, the queue, cancellation, timeouts,
// shutdown, streams and batches. Real inference and the real clients are in test/model/api-*.
import { request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TaskDefinition } from '../../../electron/common/task';
import { DEFAULT_SETTINGS } from '../../../electron/common/tatra';
import type { GenerateRequest } from '../../../electron/engine/backend';
import { ApiKeyStore, startApiService, type RunningApiService } from '../../../electron/service';
import { SECURITY_HEADERS } from '../../../electron/web/headers';
import type { HttpApp } from '../../../electron/web/http-app';
import { loadBuiltInTasks } from '../../../electron/tasks';
import { eventLog, whenAborted, whenTrue } from '../../helpers/events';
import { parseMetrics, sampleValue } from '../../helpers/prometheus';
import { ScriptedBackend, politeScript, requestStage } from '../../helpers/scripted-backend';
import { parseModelSpec } from '../../../electron/common/model-spec';

const dir = mkdtempSync(join(tmpdir(), 'tatra-api-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tasks: TaskDefinition[];
const keys = new ApiKeyStore(join(dir, 'data'));
let key = '';
beforeAll(async () => {
  tasks = (await loadBuiltInTasks()).filter((t) => t.id === 'sst2' || t.id === 'trec');
  key = await keys.add('tests');
});

const answer = (c: string) => (/good|great|fine/.test(c) ? 'positive' : 'negative');

/** Evaluation calls whose candidate contains `held` wait for `release()` (or their abort). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const log = eventLog<GenerateRequest>();
  return {
    release: () => open(),
    /** The calls held so far, in arrival order. */
    waiting: log.events,
    /** Resolves once `count` calls are held. */
    reached: (count: number) => log.until((held) => held.length >= count),
    async hold(req: GenerateRequest): Promise<void> {
      log.push(req);
      await new Promise<void>((resolve, reject) => {
        void opened.then(resolve);
        req.signal?.addEventListener('abort', () => reject(req.signal!.reason), { once: true });
      });
    },
  };
}

interface Setup {
  service: RunningApiService;
  backend: ScriptedBackend;
  url: (path: string) => string;
}

const services: RunningApiService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close(0);
});

async function setup(opts: { maxQueue?: number; concurrency?: number; timeoutMs?: number; contextSize?: number; held?: ReturnType<typeof gate>; keys?: ApiKeyStore; log?: (line: string) => void; testRoutes?: (app: HttpApp) => void } = {}): Promise<Setup> {
  const held = opts.held;
  const backend = new ScriptedBackend(
    async (req, ctx) => {
      if (held && requestStage(req) === 'evaluation' && req.prompt.user.includes('held')) await held.hold(req);
      return politeScript({ answer })(req, ctx);
    },
    { id: 'scripted:model', contextSize: opts.contextSize ?? 8192 },
  );
  const service = await startApiService({
    tasks,
    pairings: [{ name: 'scripted', generator: parseModelSpec('scripted.gguf'), evaluator: parseModelSpec('scripted.gguf'), generatorBackend: backend, evaluatorBackend: backend }],
    keys: opts.keys ?? keys,
    defaults: { ...DEFAULT_SETTINGS, n: 1, k: 2, r: 1, earlyStop: true },
    port: 0,
    maxQueue: opts.maxQueue ?? 8,
    concurrency: opts.concurrency ?? 2,
    timeoutMs: opts.timeoutMs ?? 60_000,
    log: opts.log ?? (() => undefined),
    testRoutes: opts.testRoutes,
  });
  services.push(service);
  return { service, backend, url: (path) => `${service.origin}${path}` };
}

const auth = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

function chat(s: Setup, body: Record<string, unknown>, init: RequestInit = {}) {
  return fetch(s.url('/v1/chat/completions'), { method: 'POST', headers: auth(), body: JSON.stringify({ model: 'tatra/sst2', ...body }), ...init });
}

const ask = (text: string) => ({ messages: [{ role: 'system', content: 'ignored' }, { role: 'user', content: text }] });

async function errorOf(res: Response): Promise<{ status: number; error: { message: string; type: string; param: string | null; code: string | null } }> {
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return { status: res.status, error: body.error };
}

async function metrics(s: Setup) {
  const res = await fetch(s.url('/metrics'));
  expect(res.status).toBe(200);
  return parseMetrics(await res.text());
}

/** Resolves once the service's admission (what is admitted, running and waiting) meets `check`: on its changes, never on a timer. */
function whenAdmission(s: Setup, check: (admission: RunningApiService['admission']) => boolean): Promise<void> {
  const { admission } = s.service;
  return whenTrue((listener) => admission.onChange(listener), () => check(admission));
}

/** The held call's abort, as the engine passed it on. */
function heldAborted(held: ReturnType<typeof gate>): Promise<void> {
  const { signal } = held.waiting[0]!;
  if (!signal) throw new Error('the held call has no signal to abort it');
  return whenAborted(signal);
}

describe('tatra api: who may call', () => {
  it('refuses /v1 without a key, with a wrong one, and with a revoked one, in OpenAI error shape', async () => {
    const s = await setup();
    const none = await errorOf(await fetch(s.url('/v1/models')));
    expect(none).toMatchObject({ status: 401, error: { code: 'invalid_api_key' } });
    expect(none.error.message).toContain('Authorization: Bearer');
    const wrong = await errorOf(await fetch(s.url('/v1/models'), { headers: { authorization: 'Bearer tatra-wrong' } }));
    expect(wrong).toMatchObject({ status: 401, error: { code: 'invalid_api_key' } });

    const temporary = await keys.add('temporary');
    expect((await fetch(s.url('/v1/models'), { headers: { authorization: `Bearer ${temporary}` } })).status).toBe(200);
    await keys.revoke('temporary');
    // No restart: the next request already sees the key file without it.
    expect((await fetch(s.url('/v1/models'), { headers: { authorization: `Bearer ${temporary}` } })).status).toBe(401);
  });

  it('answers /healthz and /metrics without a key on loopback', async () => {
    const s = await setup();
    const health = (await (await fetch(s.url('/healthz'))).json()) as { status: string; queue: { limit: number } };
    expect(health).toMatchObject({ status: 'ok', queue: { limit: 8 } });
    expect(sampleValue(await metrics(s), 'tatra_api_queue_depth')).toBe(0);
    for (const path of ['/healthz', '/metrics', '/v1/models', '/v1/models/tatra%2Fsst2', '/v1/nothing']) expect((await fetch(s.url(path), { headers: auth() })).headers.get('cache-control'), path).toBe('no-store');
  });

  it('refuses web pages (Origin) and, on loopback, any Host but this machine (DNS rebinding)', async () => {
    const s = await setup();
    const fromPage = await errorOf(await fetch(s.url('/v1/models'), { headers: { ...auth(), origin: 'https://evil.example' } }));
    expect(fromPage).toMatchObject({ status: 403, error: { code: 'origin_refused' } });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(s.url('/healthz'), { headers: { host: `rebound.example:${s.service.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});

describe('tatra api: models and chat completions', () => {
  it('lists one model per task, and retrieves one', async () => {
    const s = await setup();
    const list = (await (await fetch(s.url('/v1/models'), { headers: auth() })).json()) as { object: string; data: { id: string; object: string; tatra: { labels: string[] | null } }[] };
    expect(list.object).toBe('list');
    expect(list.data.map((m) => m.id).sort()).toEqual(['tatra/sst2', 'tatra/trec']);
    const one = (await (await fetch(s.url('/v1/models/tatra%2Fsst2'), { headers: auth() })).json()) as { id: string; tatra: { labels: string[] } };
    expect(one).toMatchObject({ id: 'tatra/sst2', tatra: { labels: ['negative', 'positive'] } });
  });

  it('answers with the label as the content and the vote beside it; request settings override the defaults', async () => {
    const s = await setup();
    const res = await chat(s, { ...ask('a good film'), seed: 9, tatra: { r: 2, early_stop: false } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const body = (await res.json()) as {
      object: string;
      choices: { message: { role: string; content: string }; finish_reason: string }[];
      usage: { total_tokens: number };
      tatra: { label: string; votes: Record<string, number>; settings: { r: number; seed: number; n: number }; calls: number; cached: boolean; decided_early: boolean };
    };
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'positive' }, finish_reason: 'stop' });
    expect(body.tatra).toMatchObject({ label: 'positive', votes: { positive: 4, negative: 0 }, settings: { r: 2, seed: 9, n: 1 }, cached: false, decided_early: false });
    expect(body.tatra.calls).toBe(s.backend.requests.length);
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    // The system message is not the input: the last user message is.
    expect(s.backend.stage('paraphrases')[0]!.prompt.user).toContain('a good film');
  });

  it('answers a repeated request from the cache without a model call, and computes a new seed', async () => {
    const s = await setup();
    const first = (await (await chat(s, ask('a fine day'))).json()) as { tatra: { label: string; cached: boolean } };
    const calls = s.backend.requests.length;
    const again = (await (await chat(s, ask('  a fine day '))).json()) as { tatra: { label: string; cached: boolean }; usage: { total_tokens: number } };
    expect(again.tatra).toMatchObject({ label: first.tatra.label, cached: true });
    expect(again.usage.total_tokens).toBe(0);
    expect(s.backend.requests.length).toBe(calls);
    const reseeded = (await (await chat(s, { ...ask('a fine day'), seed: 2 })).json()) as { tatra: { cached: boolean } };
    expect(reseeded.tatra.cached).toBe(false);
    expect(s.backend.requests.length).toBeGreaterThan(calls);
    const m = await metrics(s);
    expect(sampleValue(m, 'tatra_api_classifications_total', { outcome: 'cached' })).toBe(1);
    expect(sampleValue(m, 'tatra_api_classifications_total', { outcome: 'computed' })).toBe(2);
  });

  it('runs two identical requests in flight once', async () => {
    const held = gate();
    const s = await setup({ held });
    const a = chat(s, ask('held twice'));
    await held.reached(1);
    const b = chat(s, ask('held twice'));
    await whenAdmission(s, (a) => a.admitted === 2);
    expect(sampleValue(await metrics(s), 'tatra_api_requests_in_progress')).toBe(2);
    held.release();
    const [ra, rb] = (await Promise.all([(await a).json(), (await b).json()])) as { tatra: { label: string } }[];
    expect(ra!.tatra.label).toBe(rb!.tatra.label);
    expect(s.backend.stage('paraphrases')).toHaveLength(1);
    expect(sampleValue(await metrics(s), 'tatra_api_classifications_total', { outcome: 'joined' })).toBe(1);
  });

  it('says what is wrong, with OpenAI status codes, for every bad request', async () => {
    const s = await setup({ contextSize: 300 });
    const cases: [Promise<Response>, number, string, string | null][] = [
      [chat(s, { ...ask('x'), model: 'tatra/nosuch' }), 404, 'model_not_found', 'model'],
      [chat(s, { ...ask('x'), model: 'gpt-4o' }), 404, 'model_not_found', 'model'],
      [chat(s, { ...ask('x'), tatra: { r: 0 } }), 400, 'invalid_request', 'tatra.r'],
      [chat(s, { ...ask('x'), tatra: { runs: 3 } }), 400, 'invalid_request', 'tatra'],
      [chat(s, { ...ask('x'), n: 2 }), 400, 'invalid_request', 'n'],
      [chat(s, { messages: [{ role: 'system', content: 'only a system message' }] }), 400, 'input_empty', 'messages'],
      [chat(s, ask('   ')), 400, 'input_empty', null],
      [chat(s, ask('too long '.repeat(400))), 400, 'input_too_long', null],
      [fetch(s.url('/v1/chat/completions'), { method: 'POST', headers: auth(), body: '{not json' }), 400, 'invalid_json', null],
      [fetch(s.url('/v1/chat/completions'), { method: 'POST', headers: auth(), body: 'x'.repeat(5 * 1024 * 1024) }), 413, 'request_too_large', null],
      [fetch(s.url('/v1/chat/completions'), { headers: auth() }), 405, 'method_not_allowed', null],
      [fetch(s.url('/v1/embeddings'), { method: 'POST', headers: auth(), body: '{}' }), 404, 'not_found', null],
    ];
    for (const [res, status, code, param] of cases) {
      const { status: got, error } = await errorOf(await res);
      expect({ got, code: error.code, param: error.param }, error.message).toEqual({ got: status, code, param });
      expect(error.message.length).toBeGreaterThan(5);
    }
    // Only well-formed inputs that fit ever reached the model.
    expect(s.backend.stage('paraphrases')).toHaveLength(0);
  });
});

/** The headers an answer leaves with, less those that describe its body (type, length, framing), its moment and its id. */
function answerHeaders(res: Response): Record<string, string> {
  const ofTheBody = new Set(['content-type', 'content-length', 'transfer-encoding', 'date', 'x-request-id', 'x-accel-buffering']);
  return Object.fromEntries([...res.headers].filter(([name]) => !ofTheBody.has(name)));
}

/** A streamed answer leaves with the headers of the same answer sent whole (the security headers, the connection's), and is not buffered on the way. */
function streamedLikeAnyAnswer(streamed: Response, whole: Response): void {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(streamed.headers.get(k), k).toBe(v);
  expect(answerHeaders(streamed)).toEqual(answerHeaders(whole));
  expect(streamed.headers.get('cache-control')).toBe('no-store');
  expect(streamed.headers.get('x-accel-buffering')).toBe('no');
}

describe('tatra api: streams', () => {
  async function events(res: Response): Promise<unknown[]> {
    const text = await res.text();
    return text
      .split('\n\n')
      .filter((b) => b.startsWith('data: '))
      .map((b) => b.slice(6))
      .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
  }

  it('streams the role, each stage as it finishes, the label, then the vote and [DONE]', async () => {
    const s = await setup();
    const res = await chat(s, { ...ask('a great plot'), stream: true, stream_options: { include_usage: true }, tatra: { r: 2, early_stop: false } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const whole = await chat(s, ask('a great plot'));
    streamedLikeAnyAnswer(res, whole);
    for (const r of [res, whole]) expect(r.headers.get('x-request-id')).toMatch(/^chatcmpl-/);
    const all = (await events(res)) as ({ choices: { delta: { role?: string; content?: string }; finish_reason: string | null }[]; tatra?: { stage?: string; label?: string }; usage?: unknown } | string)[];
    expect(all.pop()).toBe('[DONE]');
    const chunks = all as Exclude<(typeof all)[number], string>[];
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const stages = chunks.flatMap((c) => (c.tatra?.stage ? [c.tatra.stage] : []));
    // Two runs: the examples of each label, one paraphrase call and two evaluations per run.
    expect(stages.filter((x) => x === 'examples')).toHaveLength(4);
    expect(stages.filter((x) => x === 'paraphrases')).toHaveLength(2);
    expect(stages.filter((x) => x === 'evaluation')).toHaveLength(4);
    const content = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('');
    expect(content).toBe('positive');
    const usageChunk = chunks.pop()!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toBeDefined();
    const last = chunks.pop()!;
    expect(last.choices[0]!.finish_reason).toBe('stop');
    expect(last.tatra).toMatchObject({ label: 'positive' });
  });

  it('fails a streamed request that cannot start with its own status, not a 200', async () => {
    const s = await setup({ contextSize: 300 });
    const { status, error } = await errorOf(await chat(s, { ...ask('too long '.repeat(400)), stream: true }));
    expect(status).toBe(400);
    expect(error.code).toBe('input_too_long');
  });
});

describe('tatra api: batches', () => {
  const batch = (s: Setup, body: Record<string, unknown>) =>
    fetch(s.url('/v1/classify'), { method: 'POST', headers: auth(), body: JSON.stringify({ model: 'tatra/sst2', ...body }) });
  const inputs = ['a good one', '', 'a dull one', 'a great one', 'meh'];

  it('answers every input in order, a bad input costing only its own row', async () => {
    const s = await setup({ concurrency: 2 });
    const body = (await (await batch(s, { inputs })).json()) as { object: string; data: { index: number; label?: string; error?: { code: string } }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(body.data.map((r) => r.label ?? r.error?.code)).toEqual(['positive', 'input_empty', 'negative', 'positive', 'negative']);
  });

  it('streams the same rows as JSON lines when asked', async () => {
    const s = await setup({ concurrency: 3 });
    const wholeAnswer = await batch(s, { inputs });
    const whole = (await wholeAnswer.json()) as { data: unknown[] };
    const res = await batch(s, { inputs, stream: true });
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    streamedLikeAnyAnswer(res, wholeAnswer);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { cached?: boolean });
    // The second time every row comes from the cache; otherwise the rows are the same.
    expect(lines.filter((l) => l.cached === true)).toHaveLength(4);
    const strip = (r: unknown) => ({ ...(r as object), cached: undefined, ms: undefined, stages: undefined });
    expect(lines.map(strip)).toEqual(whole.data.map(strip));
  });

  it('takes a thousand inputs in one request and streams every row, in order', async () => {
    const s = await setup({ concurrency: 4 });
    const many = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? `a good film, number ${i}` : `a dull film, number ${i}`));
    const res = await batch(s, { inputs: many, stream: true });
    const rows = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { index: number; label: string });
    expect(rows.map((r) => r.index)).toEqual(many.map((_, i) => i));
    expect(rows.every((r, i) => r.label === (i % 2 === 0 ? 'positive' : 'negative'))).toBe(true);
    // Run-scope examples are made once (one call per label) and shared by every input, also by
    // those that started while the first was making them.
    expect(s.backend.stage('examples')).toHaveLength(2);
  });

  it('refuses unknown fields (a misspelt "input" is an error, not an empty batch)', async () => {
    const s = await setup();
    const { status, error } = await errorOf(await batch(s, { input: ['x'] }));
    expect(status).toBe(400);
    expect(error.message).toMatch(/inputs|input/);
  });
});

describe('tatra api: limits', () => {
  it('turns away what is over the queue with 429 and Retry-After, and serves it after', async () => {
    const held = gate();
    const s = await setup({ maxQueue: 2, concurrency: 1, held });
    const first = chat(s, ask('held one'));
    const second = chat(s, ask('held two'));
    await whenAdmission(s, (a) => a.admitted === 2);
    expect(sampleValue(await metrics(s), 'tatra_api_requests_in_progress')).toBe(2);
    const third = await chat(s, ask('a good one'));
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await errorOf(third)).error.code).toBe('queue_full');
    held.release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect((await chat(s, ask('a good one'))).status).toBe(200);
  });

  it('cancels the work of a client that disconnects, and frees its slot', async () => {
    const held = gate();
    const s = await setup({ concurrency: 1, held });
    const client = new AbortController();
    const gone = chat(s, ask('held and abandoned'), { signal: client.signal });
    await held.reached(1);
    client.abort();
    await expect(gone).rejects.toThrow();
    // The engine's pending model call saw the abort; the slot is free for the next request.
    await heldAborted(held);
    await whenAdmission(s, (a) => a.running === 0 && a.admitted === 0);
    const next = await chat(s, ask('a good one'));
    expect(next.status).toBe(200);
    const m = await metrics(s);
    expect(sampleValue(m, 'tatra_api_classifications_total', { outcome: 'cancelled' })).toBe(1);
    expect(sampleValue(m, 'tatra_api_requests_total', { route: '/v1/chat/completions', status: '499' })).toBe(1);
  });

  it('cancels the work of a client that leaves a stream after its first chunk, and frees its slot', async () => {
    const held = gate();
    const s = await setup({ concurrency: 1, held });
    const client = new AbortController();
    const res = await chat(s, { ...ask('held and streamed'), stream: true }, { signal: client.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    // The stream has started (its role chunk, then the stages so far) and its evaluation is held.
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('"role":"assistant"');
    await held.reached(1);
    client.abort();
    await reader.read().catch(() => undefined);
    // The model call it was waiting on saw the abort; its place in the queue is given back.
    await heldAborted(held);
    await s.service.admission.idle();
    // Counted once, as a client that left (not also as the 200 its headers said).
    const m = await metrics(s);
    expect(sampleValue(m, 'tatra_api_requests_total', { route: '/v1/chat/completions' })).toBe(1);
    expect(sampleValue(m, 'tatra_api_requests_total', { route: '/v1/chat/completions', status: '499' })).toBe(1);
    // Its time observed once as well (the parser drops a histogram's labels: read the count's line).
    const text = await (await fetch(s.url('/metrics'))).text();
    expect(text).toContain('tatra_api_request_duration_seconds_count{route="/v1/chat/completions"} 1\n');
    expect(sampleValue(m, 'tatra_api_classifications_total', { outcome: 'cancelled' })).toBe(1);
    expect((await chat(s, ask('a good one'))).status).toBe(200);
  });

  it('keeps nothing of a request once it has ended, however it ended', async () => {
    // The collector, as `node --expose-gc` would give it (a fresh context reads the flag).
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const held = gate();
    const kept: WeakRef<object>[] = [];
    // What each request (all of them admitted) holds while it runs: itself and its work's signal.
    const keep = (app: HttpApp) => app.addHook('preHandler', async (request) => void kept.push(new WeakRef(request), new WeakRef(request.work!.signal)));
    const s = await setup({ held, concurrency: 1, testRoutes: keep });
    expect((await chat(s, ask('a good one'))).status).toBe(200);
    await (await chat(s, { ...ask('a great one'), stream: true })).text();
    await (await fetch(s.url('/v1/classify'), { method: 'POST', headers: auth(), body: JSON.stringify({ model: 'tatra/sst2', inputs: ['fine', 'dull'], stream: true }) })).text();
    const client = new AbortController();
    const left = await chat(s, { ...ask('held and left'), stream: true }, { signal: client.signal });
    await left.body!.getReader().read();
    await held.reached(1);
    client.abort();
    await whenAdmission(s, (a) => a.running === 0 && a.admitted === 0);
    expect(kept).toHaveLength(8);
    // Collected, as nothing holds them (a WeakRef read keeps its target to the end of the turn: each collection has its own).
    const alive = () => kept.filter((ref) => ref.deref() !== undefined).length;
    for (let round = 0; round < 10 && alive() > 0; round++) {
      await new Promise((r) => setImmediate(r));
      collect();
    }
    expect(alive()).toBe(0);
  });

  it('answers 504 when a classification outlives the timeout, and stops it', async () => {
    const held = gate();
    const s = await setup({ timeoutMs: 300, held });
    const { status, error } = await errorOf(await chat(s, ask('held forever')));
    expect(status).toBe(504);
    expect(error.code).toBe('timeout');
    await held.reached(1);
    await heldAborted(held);
    await whenAdmission(s, (a) => a.running === 0);
  });

  it('on shutdown, lets running requests finish within the grace period, then answers the rest 503', async () => {
    const held = gate();
    const s = await setup({ held });
    const finishes = chat(s, ask('a good one, quick'));
    expect((await finishes).status).toBe(200);
    const running = chat(s, ask('held at shutdown'));
    await held.reached(1);
    await s.service.close(0);
    const { status, error } = await errorOf(await running);
    expect(status).toBe(503);
    expect(error.code).toBe('shutting_down');
    expect(held.waiting[0]!.signal?.aborted).toBe(true);
    await expect(fetch(s.url('/healthz'))).rejects.toThrow();
  });
});

describe('tatra api: metrics', () => {
  it('parses as Prometheus text and counts requests, model calls and tokens', async () => {
    const s = await setup();
    await chat(s, ask('a good one'));
    await chat(s, { ...ask('x'), model: 'tatra/nosuch' });
    const m = await metrics(s);
    expect(sampleValue(m, 'tatra_api_requests_total', { route: '/v1/chat/completions', status: '200' })).toBe(1);
    expect(sampleValue(m, 'tatra_api_requests_total', { route: '/v1/chat/completions', status: '404' })).toBe(1);
    expect(sampleValue(m, 'tatra_api_errors_total', { code: 'model_not_found' })).toBe(1);
    const calls = sampleValue(m, 'tatra_api_model_calls_total', { pairing: 'scripted' });
    expect(calls).toBe(s.backend.requests.length);
    expect(sampleValue(m, 'tatra_api_tokens_total', { role: 'evaluator', kind: 'prompt' })).toBeGreaterThan(0);
    // The parser keeps a histogram's buckets but not its labels: the buckets are there, one of them for +Inf.
    const latency = m.find((f) => f.name === 'tatra_api_request_duration_seconds');
    expect(latency?.type).toBe('HISTOGRAM');
    expect(Number(latency?.metrics[0]?.buckets?.['+Inf'])).toBeGreaterThanOrEqual(1);
    expect(sampleValue(m, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});

describe('tatra api: hostile clients', () => {
  it('says what was wrong with a value of the wrong type, not that it is missing', async () => {
    const s = await setup();
    const post = (body: string) => fetch(s.url('/v1/chat/completions'), { method: 'POST', headers: auth(), body });
    const cases: [string, RegExp, string | null][] = [
      [JSON.stringify({ model: 'tatra/sst2', ...ask('x'), seed: 1.5 }), /^Seed must be a whole number/, 'seed'],
      [JSON.stringify({ model: 'tatra/sst2', messages: 'hello' }), /^Messages must be an array/, 'messages'],
      [JSON.stringify({ model: 7, ...ask('x') }), /^The model id must be text/, 'model'],
      ['null', /^the body must be a JSON object$/, null],
      ['[]', /^the body must be a JSON object$/, null],
      ['"text"', /^the body must be a JSON object$/, null],
      ['3', /^the body must be a JSON object$/, null],
    ];
    for (const [body, message, param] of cases) {
      const { status, error } = await errorOf(await post(body));
      expect({ status, param: error.param }, body).toEqual({ status: 400, param });
      expect(error.message, body).toMatch(message);
      expect(error.message, body).not.toMatch(/missing/i);
    }
    const batch = await errorOf(await fetch(s.url('/v1/classify'), { method: 'POST', headers: auth(), body: JSON.stringify({ model: 'tatra/sst2', inputs: 'one' }) }));
    expect(batch.error.message).toMatch(/^Inputs must be an array/);
  });

  it('answers a damaged key file with a 500 that names no file; the path is in the log, once', async () => {
    const damagedKeys = new ApiKeyStore(join(dir, 'damaged'));
    const good = await damagedKeys.add('x');
    const lines: string[] = [];
    const s = await setup({ keys: damagedKeys, log: (l) => lines.push(l) });
    writeFileSync(damagedKeys.path, '{"version":1,"keys":[{"name":"x"');
    for (let i = 0; i < 3; i++) {
      const { status, error } = await errorOf(await fetch(s.url('/v1/models'), { headers: { authorization: `Bearer ${good}` } }));
      expect(status).toBe(500);
      expect(error).toMatchObject({ type: 'server_error', code: 'keys_unreadable' });
      expect(error.message).not.toContain(dir);
      expect(error.message).not.toContain('api-keys.json');
    }
    expect(lines.filter((l) => l.includes(damagedKeys.path))).toHaveLength(1);
  });

  it('counts a request from its first byte: with a queue of 2, ten unfinished 30 MB batches are not all read', async () => {
    const held = gate();
    const s = await setup({ maxQueue: 2, concurrency: 1, held });
    const sockets: Socket[] = [];
    const statuses = eventLog<number>();
    const oneMiB = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < 10; i++) {
      const socket = connect(s.service.port, '127.0.0.1');
      sockets.push(socket);
      socket.on('error', () => undefined);
      let answer = '';
      socket.on('data', (d: Buffer) => {
        const first = answer === '';
        answer += d.toString('latin1');
        if (first) statuses.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0));
      });
      // Headers for 30 MB, then one MiB of it; the rest never comes.
      socket.write(`POST /v1/classify HTTP/1.1\r\nhost: 127.0.0.1:${s.service.port}\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${30 * 1024 * 1024}\r\n\r\n`);
      socket.write(oneMiB);
    }
    // Two are admitted (their bodies are being read, and wait for the rest); the other eight are
    // turned away before theirs is read.
    await statuses.until((answered) => answered.length === 8);
    expect(statuses.events).toEqual(Array.from({ length: 8 }, () => 429));
    const health = (await (await fetch(s.url('/healthz'))).json()) as { queue: { admitted: number } };
    expect(health.queue.admitted).toBe(2);
    for (const socket of sockets) socket.destroy();
    await s.service.admission.idle();
    held.release();
  });
});
