// `tatra api`'s HTTP face: OpenAI's chat completions and model list, a batch classify, health and
// metrics, over node:http. Who may call: whoever holds an API key (keys.ts), from a program, not a
// web page (a request with an Origin header is refused, so no page in the user's browser can drive
// it, and on loopback a Host that is not this machine is refused against DNS rebinding). What it
// takes on: admission.ts. Work stops when its client goes away. close() lets what is running
// finish within a grace period, then cancels the rest.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TatraSettings, type TatraResult } from '../common/tatra';
import type { TaskDefinition } from '../common/task';
import { errorMessage } from '../common/errors';
import { SECURITY_HEADERS } from '../web/headers';
import { hostHeaderName, isLoopbackAddress, isLoopbackHost } from '../web/hosts';
import { listen, publicOrigin } from '../web/listen';
import { Admission } from './admission';
import { chatCompletion, chunk, completionId, stageProgress, tatraSummary, usage } from './answers';
import { Catalog, modelName, type LoadedPairing, type Target } from './catalog';
import { Classifier } from './classifier';
import { ApiFailure, failureOf, invalidBody, notFound } from './errors';
import type { ApiKeyStore } from './keys';
import { LruGenerationCache, Lru } from './lru';
import { ROUTES, ServiceMetrics, type RouteLabel } from './metrics';
import { ChatCompletionRequest, ClassifyRequest, lastUserText, settingsFor } from './requests';

export interface ApiServiceOptions {
  /** The tasks served (each becomes `tatra/<task>`). */
  tasks: readonly TaskDefinition[];
  /** The model pairings, the default first, their models loaded (the caller holds them and releases them after close). */
  pairings: readonly LoadedPairing[];
  keys: ApiKeyStore;
  /** The server's settings; each request may override them. */
  defaults: TatraSettings;
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1. */
  hostname?: string;
  /** Requests admitted at once, running or waiting; one more gets 429. */
  maxQueue: number;
  /** Inputs classified at once. */
  concurrency: number;
  /** How long one classification may take, its wait included. */
  timeoutMs: number;
  /** Memory for cached results, and for cached generator outputs (each), bytes. Default 64 MiB. */
  cacheBytes?: number;
  log?: (line: string) => void;
}

export interface RunningApiService {
  /** http://HOST:PORT */
  origin: string;
  port: number;
  metrics: ServiceMetrics;
  admission: Admission;
  /**
   * Stops taking requests, lets those admitted finish for up to `graceMs`, then cancels the rest
   * (they are answered 503) and closes every connection. Idempotent.
   */
  close(graceMs: number): Promise<void>;
}

/** Largest request bodies: a chat's messages, and a batch of thousands of inputs. */
const MAX_CHAT_BYTES = 4 * 1024 * 1024;
const MAX_CLASSIFY_BYTES = 32 * 1024 * 1024;

interface Context {
  opts: ApiServiceOptions;
  catalog: Catalog;
  hostname: string;
  admission: Admission;
  metrics: ServiceMetrics;
  classifier: Classifier;
  /** Aborted when the grace period of a shutdown is over: everything still running is cancelled. */
  shutdown: AbortController;
  closing: boolean;
  log: (line: string) => void;
}

export async function startApiService(opts: ApiServiceOptions): Promise<RunningApiService> {
  const admission = new Admission({ maxQueue: opts.maxQueue, concurrency: opts.concurrency });
  const metrics = new ServiceMetrics(admission);
  const cacheBytes = opts.cacheBytes ?? 64 * 1024 * 1024;
  const ctx: Context = {
    opts,
    // Every model call counted as it finishes (metrics.ts), whatever becomes of its request.
    catalog: new Catalog(
      opts.tasks,
      opts.pairings.map((p) => ({
        ...p,
        generatorBackend: metrics.counted(p.generatorBackend, p.name, 'generator'),
        evaluatorBackend: metrics.counted(p.evaluatorBackend, p.name, 'evaluator'),
      })),
    ),
    hostname: opts.hostname ?? '127.0.0.1',
    admission,
    metrics,
    classifier: new Classifier({
      admission,
      metrics,
      // A result's size as its JSON, measured once when it is stored.
      results: new Lru<TatraResult>(cacheBytes, (r) => JSON.stringify(r).length),
      generationCache: new LruGenerationCache(cacheBytes),
      timeoutMs: opts.timeoutMs,
    }),
    shutdown: new AbortController(),
    closing: false,
    log: opts.log ?? ((line) => process.stderr.write(`${line}\n`)),
  };
  const server = createServer((req, res) => void handle(ctx, req, res));
  await listen(server, opts.port, ctx.hostname);
  const port = (server.address() as AddressInfo).port;
  if (!isLoopbackHost(ctx.hostname)) {
    ctx.log(`tatra api: WARNING: listening on ${ctx.hostname}, not loopback: anyone who can reach this machine and holds a key can use your models, and /healthz and /metrics need a key from there too`);
  }
  let closing: Promise<void> | null = null;
  return {
    origin: publicOrigin(ctx.hostname, port),
    port,
    metrics,
    admission,
    close(graceMs) {
      closing ??= (async () => {
        ctx.closing = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([admission.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
        clearTimeout(timer);
        // Whatever is still running is cancelled and answered 503; give the answers a moment to leave.
        ctx.shutdown.abort();
        await Promise.race([admission.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
        clearTimeout(timer);
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}

function routeLabel(path: string): RouteLabel {
  if (path.startsWith('/v1/models/')) return '/v1/models';
  return (ROUTES as readonly string[]).includes(path) ? (path as RouteLabel) : 'other';
}

/** The request's URL, or null for a target no URL can be made of (`//x:99999/`, `http://[::1:9/`). */
function requestUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://local');
  } catch {
    return null;
  }
}

/**
 * One request. It never rejects: whatever fails inside is answered (a bug as a 500, logged), since
 * a rejection here would be unhandled and end the process.
 */
async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    await answer(ctx, req, res);
  } catch (e) {
    try {
      fail(ctx, res, e);
    } catch (again) {
      ctx.log(`tatra api: could not answer a failed request: ${errorMessage(again)}`);
      res.destroy();
    }
  }
}

async function answer(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const url = requestUrl(req);
  const route = url ? routeLabel(url.pathname) : 'other';
  res.once('close', () => {
    // 499: the client went away before its answer was complete (nginx's name for it).
    const status = res.writableFinished ? String(res.statusCode) : '499';
    ctx.metrics.requests.inc({ route, status });
    ctx.metrics.latency.observe({ route }, (performance.now() - started) / 1000);
  });
  try {
    if (!url) throw new ApiFailure(400, 'the request target is not a valid URL path', 'invalid_request_error', 'invalid_url');
    checkCaller(ctx, req);
    if (ctx.closing) throw new ApiFailure(503, 'the server is shutting down', 'server_error', 'shutting_down', null, { 'Retry-After': '5', Connection: 'close' });
    if (route === '/healthz' || route === '/metrics') {
      if (!isLoopbackAddress(req.socket.remoteAddress)) authenticate(ctx, req);
      requireMethod(req, 'GET');
      if (route === '/healthz') return sendJson(res, 200, health(ctx));
      return sendText(res, 200, await ctx.metrics.registry.metrics(), ctx.metrics.registry.contentType);
    }
    if (!url.pathname.startsWith('/v1/')) throw notFound(`no such endpoint: ${url.pathname}`);
    authenticate(ctx, req);
    if (url.pathname === '/v1/models') {
      requireMethod(req, 'GET');
      return sendJson(res, 200, { object: 'list', data: ctx.catalog.ids().map((m) => modelEntry(ctx, m)) });
    }
    if (route === '/v1/models') {
      requireMethod(req, 'GET');
      const id = decodedModelId(url.pathname.slice('/v1/models/'.length));
      return sendJson(res, 200, modelEntry(ctx, ctx.catalog.resolve(id)));
    }
    if (url.pathname === '/v1/chat/completions') {
      requireMethod(req, 'POST');
      return await chatCompletions(ctx, req, res);
    }
    if (url.pathname === '/v1/classify') {
      requireMethod(req, 'POST');
      return await classifyBatch(ctx, req, res);
    }
    throw notFound(`no such endpoint: ${url.pathname}`);
  } catch (e) {
    fail(ctx, res, e);
  }
}

/** A model id from its percent-encoded path segment; a malformed escape (`%E0%A4%A`) is the client's error. */
function decodedModelId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ApiFailure(400, 'the model id in the path has a malformed percent-escape', 'invalid_request_error', 'invalid_url');
  }
}

/** Programs only: no web page (Origin), and on loopback no Host but this machine's (DNS rebinding). */
function checkCaller(ctx: Context, req: IncomingMessage): void {
  if (req.headers.origin !== undefined) {
    throw new ApiFailure(403, 'requests from web pages (with an Origin header) are refused: call this API from a program', 'permission_error', 'origin_refused');
  }
  const name = hostHeaderName(req.headers.host);
  if (isLoopbackHost(ctx.hostname) && (name === null || !isLoopbackHost(name))) {
    throw new ApiFailure(403, 'this server answers only to its loopback name (127.0.0.1 or localhost)', 'permission_error', 'host_refused');
  }
}

function authenticate(ctx: Context, req: IncomingMessage): string {
  const header = req.headers.authorization;
  const bearer = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  const unauthorised = (message: string) => new ApiFailure(401, message, 'invalid_request_error', 'invalid_api_key', null, { 'WWW-Authenticate': 'Bearer' });
  if (!bearer) throw unauthorised('no API key: send "Authorization: Bearer <key>" (create one with `tatra api keys add NAME`)');
  const name = ctx.opts.keys.verify(bearer);
  if (name === null) throw unauthorised('invalid API key (keys are listed by `tatra api keys list`)');
  return name;
}

function requireMethod(req: IncomingMessage, method: 'GET' | 'POST'): void {
  if (req.method !== method) throw new ApiFailure(405, `use ${method}`, 'invalid_request_error', 'method_not_allowed', null, { Allow: method });
}

function health(ctx: Context) {
  const a = ctx.admission;
  return {
    status: 'ok',
    models: ctx.catalog.ids().length,
    pairings: ctx.catalog.pairings.map((p) => p.name),
    queue: { admitted: a.admitted, running: a.running, waiting: a.queued, limit: a.opts.maxQueue, concurrency: a.opts.concurrency },
  };
}

function modelEntry(ctx: Context, m: Pick<Target, 'id' | 'served' | 'pairing'>) {
  const { task } = m.served;
  return {
    id: m.id,
    object: 'model',
    created: ctx.catalog.created,
    owned_by: 'tatra',
    tatra: {
      task: task.id,
      name: task.name,
      kind: task.kind,
      labels: task.kind === 'math' ? null : task.labels.map((l) => l.name),
      pairing: m.pairing.name,
      generator: modelName(m.pairing.generator),
      evaluator: modelName(m.pairing.evaluator),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// POST /v1/chat/completions

async function chatCompletions(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parsed = ChatCompletionRequest.safeParse(await readJson(req, MAX_CHAT_BYTES));
  if (!parsed.success) throw invalidBody(parsed.error);
  const body = parsed.data;
  const target = ctx.catalog.resolve(body.model);
  const input = lastUserText(body.messages);
  const settings = TatraSettings.parse(settingsFor(ctx.opts.defaults, body.seed, body.tatra));
  const signal = requestSignal(ctx, res, ctx.admission.admit());
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  res.setHeader('X-Request-Id', id);

  if (!body.stream) {
    const { result, cached } = await ctx.classifier.classify({ target, input, settings, signal });
    return sendJson(res, 200, chatCompletion(id, created, target, tatraSummary(target, result, cached)));
  }
  // Headers go with the first chunk, once the engine has started on the input: a request that
  // fails before (an input too long for the context, a full queue) still gets its own status.
  const send = (value: unknown) => {
    if (!res.headersSent) {
      res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', ...SECURITY_HEADERS });
      res.write(`data: ${JSON.stringify(chunk(id, created, target, { role: 'assistant', content: '' }, null))}\n\n`);
    }
    res.write(`data: ${JSON.stringify(value)}\n\n`);
  };
  const { result, cached } = await ctx.classifier.classify({
    target,
    input,
    settings,
    signal,
    onEvent: (event) => {
      const progress = stageProgress(event);
      if (progress) send(chunk(id, created, target, {}, null, { tatra: progress }));
    },
  });
  const summary = tatraSummary(target, result, cached);
  send(chunk(id, created, target, { content: summary.label ?? '' }, null));
  send(chunk(id, created, target, {}, 'stop', { tatra: summary }));
  if (body.stream_options?.include_usage) send({ ...chunk(id, created, target, {}, null), choices: [], usage: usage(summary) });
  res.end('data: [DONE]\n\n');
}

// ---------------------------------------------------------------------------------------------
// POST /v1/classify

async function classifyBatch(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parsed = ClassifyRequest.safeParse(await readJson(req, MAX_CLASSIFY_BYTES));
  if (!parsed.success) throw invalidBody(parsed.error);
  const body = parsed.data;
  const target = ctx.catalog.resolve(body.model);
  const settings = TatraSettings.parse(settingsFor(ctx.opts.defaults, body.seed, body.tatra));
  const signal = requestSignal(ctx, res, ctx.admission.admit());

  const row = async (index: number) => {
    try {
      const { result, cached } = await ctx.classifier.classify({ target, input: body.inputs[index]!, settings, signal });
      return { object: 'classification' as const, index, ...tatraSummary(target, result, cached) };
    } catch (e) {
      // The client left or the server is closing: the batch ends (fail() answers for it).
      if (signal.aborted) throw e;
      // One bad input (too long, empty) or one timeout costs that row only.
      return { object: 'classification' as const, index, error: answeredFailure(ctx, e).body().error };
    }
  };

  if (body.stream) {
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
    await inOrder(body.inputs.length, ctx.opts.concurrency, row, (r) => writeLine(res, `${JSON.stringify(r)}\n`, signal));
    res.end();
    return;
  }
  const rows: unknown[] = [];
  await inOrder(body.inputs.length, ctx.opts.concurrency, row, async (r) => void rows.push(r));
  sendJson(res, 200, { object: 'list', model: target.id, data: rows });
}

/**
 * Runs `count` tasks with at most `window` at once, handing results to `emit` in index order (a
 * finished task waits for those before it, so memory stays within the window).
 */
async function inOrder<T>(count: number, window: number, run: (index: number) => Promise<T>, emit: (value: T) => Promise<void>): Promise<void> {
  const pending: Promise<T>[] = [];
  let next = 0;
  const launch = () => {
    while (next < count && pending.length < window) {
      const p = run(next++);
      // Rejections are awaited in order below; until then they are not unhandled.
      p.catch(() => undefined);
      pending.push(p);
    }
  };
  launch();
  while (pending.length > 0) {
    const value = await pending.shift()!;
    launch();
    await emit(value);
  }
}

// ---------------------------------------------------------------------------------------------
// Plumbing

/**
 * The signal of one admitted request: aborted when its client goes away (the work is then
 * cancelled) or when a shutdown's grace period ends. Releases the admission when the response closes.
 */
function requestSignal(ctx: Context, res: ServerResponse, release: () => void): AbortSignal {
  const clientGone = new AbortController();
  res.once('close', () => {
    release();
    if (!res.writableFinished) clientGone.abort();
  });
  return AbortSignal.any([clientGone.signal, ctx.shutdown.signal]);
}

/** What a failure is answered with; bugs are logged (never a request's headers, so never a key). */
function answeredFailure(ctx: Context, e: unknown): ApiFailure {
  if (ctx.shutdown.signal.aborted && !(e instanceof ApiFailure)) {
    return new ApiFailure(503, 'the server shut down before this request was finished', 'server_error', 'shutting_down', null, { 'Retry-After': '5' });
  }
  const { failure, internal } = failureOf(e);
  if (internal) ctx.log(`tatra api: ${e instanceof Error && e.stack ? e.stack : errorMessage(e)}`);
  ctx.metrics.errors.inc({ code: failure.code ?? failure.type });
  return failure;
}

function fail(ctx: Context, res: ServerResponse, e: unknown): void {
  // The client has gone: there is nobody to answer.
  if (res.destroyed || (res.writableEnded && !res.writableFinished)) return;
  const failure = answeredFailure(ctx, e);
  if (res.headersSent) {
    // Mid-stream: the error as the stream's last item (OpenAI's clients raise it), then the end.
    const type = String(res.getHeader('Content-Type') ?? '');
    res.end(type.startsWith('text/event-stream') ? `data: ${JSON.stringify(failure.body())}\n\n` : `${JSON.stringify(failure.body())}\n`);
    return;
  }
  sendJson(res, failure.status, failure.body(), failure.headers);
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const tooLarge = () => new ApiFailure(413, `the request body is over ${limit} bytes`, 'invalid_request_error', 'request_too_large');
  if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ApiFailure(400, 'the request body is not JSON', 'invalid_request_error', 'invalid_json');
  }
}

/** Writes respecting backpressure: a slow reader of a long batch holds its rows, not our memory. */
async function writeLine(res: ServerResponse, text: string, signal: AbortSignal): Promise<void> {
  if (res.write(text)) return;
  await once(res, 'drain', { signal });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...SECURITY_HEADERS, ...headers });
  res.end(JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, text: string, contentType: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
  res.end(text);
}
