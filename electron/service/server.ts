// `tatra api`'s HTTP face: OpenAI's chat completions and model list, a batch classify, health and
// metrics, on the faces' one HTTP stack (web/http-app.ts). Who may call: whoever holds an API key (keys.ts), from a program, not a
// web page (a request with an Origin header is refused, so no page in the user's browser can drive
// it, and on loopback a Host that is not this machine is refused against DNS rebinding). What it
// takes on: admission.ts, which counts a request from before its body is read. Work stops when its client goes away. close() lets what is running
// finish within a grace period, then cancels the rest.
import type { AddressInfo } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { joinSignals } from '../common/abort';
import { terminalSafe } from '../common/control-chars';
import { errorMessage } from '../common/errors';
import { TatraSettings, type TatraResult } from '../common/tatra';
import type { TaskDefinition } from '../common/task';
import { HOST_REFUSED, hostAllowed, isLoopbackAddress, isLoopbackHost } from '../web/hosts';
import { bugLine, createHttpApp, readJsonBodies, refuseOtherMethods, type HttpApp, type RequestEnd } from '../web/http-app';
import { HttpError, internalError } from '../web/http-error';
import { publicOrigin } from '../web/listen';
import { Admission } from './admission';
import { AnswerStream } from './answer-stream';
import { chatCompletion, chunk, completionId, stageProgress, tatraSummary, usage } from './answers';
import { Catalog, type LoadedPairing, type Target } from './catalog';
import { Classifier } from './classifier';
import { badRequest, failureOf, notFound, openAiError, openAiType, type OpenAiErrorBody } from './errors';
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
  /** Tests only: more routes beside the service's own, behind the same checks (a handler that throws). */
  testRoutes?: (app: HttpApp) => void;
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
  /** The last problem with the key file that was logged (each is logged once), or null. */
  keysProblem: string | null;
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
    keysProblem: null,
  };
  const app = createHttpApp({
    face: 'tatra api',
    bodyLimit: MAX_CHAT_BYTES,
    log: ctx.log,
    closeAllOnClose: false,
    failureOf: (e) => knownFailure(ctx, e),
    sendFailure: (failure, reply) => void reply.code(failure.status).headers({ 'cache-control': 'no-store', ...failure.headers }).send(countedError(ctx, failure)),
    notFound: (request) => notFound(`no such endpoint: ${request.target.pathname}`),
    ended: (request, end) => ended(ctx, request, end),
  });
  addRoutes(ctx, app);
  opts.testRoutes?.(app);
  await app.listen({ port: opts.port, host: ctx.hostname });
  const port = (app.server.address() as AddressInfo).port;
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
        // Stops listening and closes idle connections; answers in progress go on.
        const closed = app.close();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([admission.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
        clearTimeout(timer);
        // Whatever is still running is cancelled and answered 503; give the answers a moment to leave.
        ctx.shutdown.abort();
        await Promise.race([admission.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 2000)))]);
        clearTimeout(timer);
        app.server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}

/** A route as a metric label: a fixed set (metrics.ts), so no client can grow the series. */
function routeLabel(request: FastifyRequest): RouteLabel {
  const url = request.routeOptions.url;
  if (url === '/v1/models/*') return '/v1/models';
  return url !== undefined && (ROUTES as readonly string[]).includes(url) ? (url as RouteLabel) : 'other';
}

declare module 'fastify' {
  interface FastifyRequest {
    /** `tatra api`: an admitted request's work, from its admission to its end; null until then and on a route that does not admit. */
    work: AdmittedWork | null;
  }
  interface FastifyContextConfig {
    /** The route's requests count against the queue (admission.ts) from their first byte. */
    admitted?: boolean;
  }
}

interface AdmittedWork {
  /** Aborted when the client goes away before its answer is complete, or when a shutdown's grace period ends: the work is then cancelled. */
  signal: AbortSignal;
  /** Gives its place in the queue back (once). */
  release: () => void;
}

function workOf(request: FastifyRequest): AdmittedWork {
  if (!request.work) throw new Error('a request reached its handler without being admitted');
  return request.work;
}

/**
 * Every request, before its route sees it: checked (caller, shutdown, key), then admitted if its
 * route is, before its body is read (a full queue turns the next one away with a 429 without
 * buffering its body).
 */
async function checkRequest(ctx: Context, request: FastifyRequest): Promise<void> {
  checkCaller(ctx, request);
  if (ctx.closing) throw new HttpError(503, 'the server is shutting down', { code: 'shutting_down', headers: { 'Retry-After': '5', Connection: 'close' } });
  const route = routeLabel(request);
  if (route === '/healthz' || route === '/metrics') {
    if (!isLoopbackAddress(request.raw.socket?.remoteAddress)) authenticate(ctx, request);
  } else if (request.target.pathname.startsWith('/v1/')) {
    authenticate(ctx, request);
  }
  if (request.routeOptions.config.admitted) request.work = admit(ctx, request);
}

/** A request's place in the queue and its work's signal (its client gone or the shutdown), both given back together (common/abort.ts joinSignals). */
function admit(ctx: Context, request: FastifyRequest): AdmittedWork {
  const release = ctx.admission.admit();
  const work = joinSignals(ctx.shutdown.signal, request.clientGone);
  return {
    signal: work.signal,
    release: () => {
      work.forget();
      release();
    },
  };
}

/**
 * A request's end (web/http-app.ts tells each once): its place in the queue given back, and
 * counted with its time, by its status, or as 499 when its client went away before its answer was
 * complete (nginx's name for it).
 */
function ended(ctx: Context, request: FastifyRequest, end: RequestEnd): void {
  request.work?.release();
  const route = routeLabel(request);
  ctx.metrics.requests.inc({ route, status: end.complete ? String(end.status) : '499' });
  ctx.metrics.latency.observe({ route }, end.seconds);
}

function addRoutes(ctx: Context, app: HttpApp): void {
  app.decorateRequest('work', null);
  app.addHook('onRequest', async (request, reply) => {
    // No answer of this service is for a cache to keep (sendFailure says it too: a request whose
    // target Fastify cannot route never reaches this hook).
    reply.header('cache-control', 'no-store');
    await checkRequest(ctx, request);
  });
  const refuse = (method: 'GET' | 'POST') => () => new HttpError(405, `use ${method}`, { code: 'method_not_allowed', headers: { Allow: method } });

  app.get('/healthz', async (_request, reply) => reply.send(health(ctx)));
  app.get('/metrics', async (_request, reply) => reply.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics()));
  app.get('/v1/models', async (_request, reply) => reply.send({ object: 'list', data: ctx.catalog.ids().map((m) => modelEntry(ctx, m)) }));
  app.get('/v1/models/*', async (request, reply) => {
    const id = decodedModelId(request.target.pathname.slice('/v1/models/'.length));
    return reply.send(modelEntry(ctx, ctx.catalog.resolve(id)));
  });
  for (const url of ['/healthz', '/metrics', '/v1/models', '/v1/models/*']) refuseOtherMethods(app, url, ['GET'], refuse('GET'));

  // The bodies: JSON whatever the content type says (OpenAI's clients and curl alike), within each route's limit.
  void app.register(async (plugin) => {
    const scope = readJsonBodies(plugin, '*');
    const config = { admitted: true };
    scope.post('/v1/chat/completions', { bodyLimit: MAX_CHAT_BYTES, config, schema: { body: ChatCompletionRequest } }, (request, reply) => chatCompletions(ctx, request.body, request, reply));
    scope.post('/v1/classify', { bodyLimit: MAX_CLASSIFY_BYTES, config, schema: { body: ClassifyRequest } }, (request, reply) => classifyBatch(ctx, request.body, request, reply));
    for (const url of ['/v1/chat/completions', '/v1/classify']) refuseOtherMethods(scope, url, ['POST'], refuse('POST'));
  });
}

/** A model id from its percent-encoded path segment; a malformed escape (`%E0%A4%A`) is the client's error. */
function decodedModelId(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest('the model id in the path has a malformed percent-escape', 'invalid_url');
  }
}

/** Programs only: no web page (Origin), and on loopback no Host but this machine's (DNS rebinding). */
function checkCaller(ctx: Context, request: FastifyRequest): void {
  if (request.headers.origin !== undefined) {
    throw new HttpError(403, 'requests from web pages (with an Origin header) are refused: call this API from a program', { code: 'origin_refused' });
  }
  if (!hostAllowed(ctx.hostname, request.headers.host)) throw new HttpError(403, HOST_REFUSED, { code: 'host_refused' });
}

/**
 * The key's name, or null. A key file that cannot be read is the server's fault, not the caller's:
 * a 500 whose message names no file (where the server keeps its files is nobody else's business);
 * the operator's log has the file and what is wrong with it, once for each new problem.
 */
function verifyKey(ctx: Context, bearer: string): string | null {
  try {
    const name = ctx.opts.keys.verify(bearer);
    ctx.keysProblem = null;
    return name;
  } catch (e) {
    const line = errorMessage(e);
    if (ctx.keysProblem !== line) ctx.log(terminalSafe(`tatra api: cannot check API keys: ${line}`));
    ctx.keysProblem = line;
    throw new HttpError(500, "the server cannot read its API keys; its operator's log says why", { code: 'keys_unreadable' });
  }
}

function authenticate(ctx: Context, request: FastifyRequest): string {
  const header = request.headers.authorization;
  const bearer = header ? /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] : undefined;
  const unauthorised = (message: string) => new HttpError(401, message, { code: 'invalid_api_key', headers: { 'WWW-Authenticate': 'Bearer' } });
  if (!bearer) throw unauthorised('no API key: send "Authorization: Bearer <key>" (create one with `tatra api keys add NAME`)');
  const name = verifyKey(ctx, bearer);
  if (name === null) throw unauthorised('invalid API key (keys are listed by `tatra api keys list`)');
  return name;
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
      generator: m.pairing.generator.name,
      evaluator: m.pairing.evaluator.name,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// POST /v1/chat/completions

async function chatCompletions(ctx: Context, body: ChatCompletionRequest, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const target = ctx.catalog.resolve(body.model);
  const input = lastUserText(body.messages);
  const settings = TatraSettings.parse(settingsFor(ctx.opts.defaults, body.seed, body.tatra));
  const { signal } = workOf(request);
  const id = completionId();
  const created = Math.floor(Date.now() / 1000);
  reply.header('x-request-id', id);

  if (!body.stream) {
    const { result, cached } = await ctx.classifier.classify({ target, input, settings, signal });
    return reply.send(chatCompletion(id, created, target, tatraSummary(target, result, cached)));
  }
  // Headers go with the first chunk, once the engine has started on the input: a request that
  // fails before (an input too long for the context, a full queue) still gets its own status.
  let stream: AnswerStream | null = null;
  const send = (value: unknown) => {
    if (!stream) {
      stream = new AnswerStream(reply, 'text/event-stream; charset=utf-8');
      stream.write(`data: ${JSON.stringify(chunk(id, created, target, { role: 'assistant', content: '' }, null))}\n\n`);
    }
    stream.write(`data: ${JSON.stringify(value)}\n\n`);
  };
  try {
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
    stream!.end('data: [DONE]\n\n');
  } catch (e) {
    if (!stream) throw e;
    endStream(ctx, stream, e, (text) => `data: ${text}\n\n`);
  }
  return reply;
}

// ---------------------------------------------------------------------------------------------
// POST /v1/classify

async function classifyBatch(ctx: Context, body: ClassifyRequest, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const target = ctx.catalog.resolve(body.model);
  const settings = TatraSettings.parse(settingsFor(ctx.opts.defaults, body.seed, body.tatra));
  const { signal } = workOf(request);

  const row = async (index: number) => {
    try {
      const { result, cached } = await ctx.classifier.classify({ target, input: body.inputs[index]!, settings, signal });
      return { object: 'classification' as const, index, ...tatraSummary(target, result, cached) };
    } catch (e) {
      // The client left or the server is closing: the batch ends (the failure is answered for it).
      if (signal.aborted) throw e;
      // One bad input (too long, empty) or one timeout costs that row only.
      return { object: 'classification' as const, index, error: failureBody(ctx, e).error };
    }
  };

  if (body.stream) {
    const stream = new AnswerStream(reply, 'application/x-ndjson; charset=utf-8');
    try {
      await inOrder(body.inputs.length, ctx.opts.concurrency, row, async (r) => {
        if (!stream.write(`${JSON.stringify(r)}\n`)) await stream.drained(signal);
      });
      stream.end();
    } catch (e) {
      endStream(ctx, stream, e, (text) => `${text}\n`);
    }
    return reply;
  }
  const rows: unknown[] = [];
  await inOrder(body.inputs.length, ctx.opts.concurrency, row, async (r) => void rows.push(r));
  return reply.send({ object: 'list', model: target.id, data: rows });
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

/** A failure the service knows as an answer; null for a bug. Once a shutdown's grace period is over, whatever a request was cancelled with is a 503. */
function knownFailure(ctx: Context, e: unknown): HttpError | null {
  if (ctx.shutdown.signal.aborted && !(e instanceof HttpError)) {
    return new HttpError(503, 'the server shut down before this request was finished', { code: 'shutting_down', headers: { 'Retry-After': '5' } });
  }
  return failureOf(e);
}

/** A failure as OpenAI's error, counted by its code. */
function countedError(ctx: Context, failure: HttpError): OpenAiErrorBody {
  ctx.metrics.errors.inc({ code: failure.code ?? openAiType(failure.status) });
  return openAiError(failure);
}

/** What a failure in the middle of an answer (a row of a batch, the end of a stream) is answered with; a bug is logged (never a request's headers, so never a key). */
function failureBody(ctx: Context, e: unknown): OpenAiErrorBody {
  const failure = knownFailure(ctx, e);
  if (!failure) ctx.log(bugLine('tatra api', e));
  return countedError(ctx, failure ?? internalError());
}

/** A stream that fails after its headers: the error as its last item (OpenAI's clients raise it), then the end; nothing when its client has gone. */
function endStream(ctx: Context, stream: AnswerStream, e: unknown, item: (json: string) => string): void {
  if (stream.open) stream.end(item(JSON.stringify(failureBody(ctx, e))));
}
