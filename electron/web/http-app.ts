// The one HTTP stack of both network faces (`tatra serve` and `tatra api`): Fastify, which reads
// bodies within limits (413), parses content types, routes, maps errors and closes, tested by far
// more traffic than ours. What this module adds is what the faces share: the security headers on
// every answer, a request target no URL can be made of refused before anything else looks at it,
// a request no route takes answered before its body is read, an answer sent before the request's
// body has all arrived closing the connection (so the rest is never read), and one rule for
// failures. A client's mistake is answered in the face's own shape; a client that went away is
// nobody to answer; a bug of ours is logged once (control characters escaped) and answered 500.
// Nothing a request does ends the process: only a signal does.
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyTypeProvider } from 'fastify';
import type { z } from 'zod';
import { terminalSafe } from '../common/control-chars';
import { errorMessage } from '../common/errors';
import { SECURITY_HEADERS } from './headers';
import { HttpError, frameworkError, internalError, invalidBody, notAnObject, requestError } from './http-error';

// How Node reports a peer that went away: the request body ended early ('aborted', ECONNRESET),
// a write met a closed socket (EPIPE), a stream was cut (ERR_STREAM_PREMATURE_CLOSE).
const CLOSED_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

export function isClosedConnection(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && CLOSED_CODES.has(code)) || (e instanceof Error && e.message === 'aborted');
}

/** Just enough of a request and its response to tell whether the client is still there. */
interface Exchange {
  req: { destroyed: boolean; socket: { destroyed: boolean } | null };
  res: { destroyed: boolean };
}

/**
 * Whether a request failed only because its client closed the connection (a tab closed, a
 * reload, an upload cancelled, a download stopped): normal traffic, nothing to log or answer.
 */
export function clientWentAway({ req, res }: Exchange, e: unknown): boolean {
  if (isClosedConnection(e)) return true;
  // The socket is gone and the error is not a bug of ours (those are logged whoever is listening).
  const bug = !frameworkError(e) && (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError || e instanceof SyntaxError);
  // A destroyed request has had its socket detached (`req.socket` is null then): gone as well.
  return !bug && (req.destroyed || req.socket?.destroyed !== false || res.destroyed);
}

/** One log line for a bug: its stack, with every control character escaped (a request's text can be in it). */
export function bugLine(face: string, e: unknown): string {
  return terminalSafe(`${face}: ${e instanceof Error ? (e.stack ?? e.message) : errorMessage(e)}`);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's target as a URL (its path still percent-encoded); set before any other hook runs. */
    target: URL;
    /**
     * Aborted when the client goes away before its answer is complete (its connection closed, the
     * response unfinished); set before any other hook runs. Fastify's own `request.signal` and
     * onRequestAbort cannot tell: they follow the request's 'close', which Node 20 emits as soon as
     * a body has been read, so they fire early for every request with a body and never for a client
     * that leaves after sending it.
     */
    clientGone: AbortSignal;
  }
}

/** How a request ended: `complete` when its answer was all written, the client gone first otherwise. */
export interface RequestEnd {
  complete: boolean;
  /** The status its answer said (or was to say). */
  status: number;
  /** From its first byte to its response's close. */
  seconds: number;
}

/**
 * Follows a request to its end, its response's close (emitted once for every response): aborts
 * `clientGone` if the answer was not complete, then tells the face. Fastify's onResponse cannot
 * tell every end: it waits for 'finish', which never comes for a response whose connection closed
 * as its last bytes were written.
 */
function followToEnd(request: FastifyRequest, res: ServerResponse, ended: ((request: FastifyRequest, end: RequestEnd) => void) | undefined): AbortSignal {
  const started = performance.now();
  const gone = new AbortController();
  res.once('close', () => {
    const complete = res.writableFinished;
    if (!complete) gone.abort();
    ended?.(request, { complete, status: res.statusCode, seconds: (performance.now() - started) / 1000 });
  });
  return gone.signal;
}

/** Route schemas are the contract's zod schemas: a route's `request.body` has its schema's type. */
export interface ZodTypeProvider extends FastifyTypeProvider {
  validator: this['schema'] extends z.ZodType ? z.output<this['schema']> : unknown;
  serializer: this['schema'] extends z.ZodType ? z.input<this['schema']> : unknown;
}

/** The app both faces build on: Fastify with zod route schemas. */
export type HttpApp = ReturnType<typeof createHttpApp>;

export interface HttpAppOptions {
  /** The face's name, first in each of its log lines (`tatra serve`). */
  face: string;
  /** Largest request body a route reads unless it sets its own; more is a 413. */
  bodyLimit: number;
  log: (line: string) => void;
  /** Closing the server ends every connection at once (`tatra serve`), or only idle ones (`tatra api` waits for its answers). */
  closeAllOnClose: boolean;
  /**
   * A failure the face knows as an answer, beyond HttpErrors and Fastify's errors about the request
   * (its own error classes, a shutdown), as the HttpError it is answered with; null for a bug, which
   * is logged once here and answered 500.
   */
  failureOf(e: unknown): HttpError | null;
  /** Sends a failure in the face's own shape; the security headers are set already. */
  sendFailure(failure: HttpError, reply: FastifyReply): void;
  /** What a request no route takes (no such path, or a method no route knows) is refused with. */
  notFound(request: FastifyRequest): HttpError;
  /** Every request's end, once, whoever answered it (a face counts it here). */
  ended?(request: FastifyRequest, end: RequestEnd): void;
}

/**
 * Whether the request's body has not all arrived. A body is declared by a non-zero Content-Length
 * or a Transfer-Encoding; `complete` is Node's word that the whole message has been received.
 */
function bodyUnread(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A request that asks to switch protocols (the event socket's upgrade) and is refused: Node hands
 * such a connection over before any route sees it and manages it no more, so it ends with the
 * answer here (a client holding it half-open would otherwise keep it, and the server's close, forever).
 */
function closeWithAnswer(request: FastifyRequest, reply: FastifyReply): void {
  const socket = request.raw.socket;
  reply.header('connection', 'close');
  reply.raw.once('finish', () => socket.destroy());
}

/**
 * A route's body checked against its zod schema once it is parsed: a body that is no object at all
 * is said so; a zod failure says what each value was and names the first field at fault.
 */
function bodyValidator(schema: z.ZodType) {
  return (body: unknown) => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return { error: notAnObject() };
    const parsed = schema.safeParse(body);
    return parsed.success ? { value: parsed.data } : { error: invalidBody(parsed.error, body) };
  };
}

/**
 * The one JSON body parser of both faces, for the routes of `scope` (a plugin's own instance):
 * Fastify's own (secure-json-parse), which refuses a body with a `__proto__` key or a
 * `constructor.prototype` as not JSON, so no parsed body can carry a prototype into what merges it.
 * `contentType`: what it reads ('*': whatever the client says); any other is a 415. Returns the
 * scope with its routes' bodies typed by their schemas (a plugin does not inherit the app's types).
 */
export function readJsonBodies(scope: FastifyInstance, contentType: string): HttpApp {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(contentType, { parseAs: 'string' }, scope.getDefaultJsonParser('error', 'error'));
  return scope.withTypeProvider<ZodTypeProvider>();
}

/** A Fastify app with the faces' shared rules installed; the face adds its hooks and routes. */
export function createHttpApp(opts: HttpAppOptions) {
  const fail = (e: unknown, request: FastifyRequest, reply: FastifyReply) => {
    try {
      const failure = requestError(e, () => request.routeOptions.bodyLimit ?? opts.bodyLimit) ?? opts.failureOf(e);
      if (!failure && clientWentAway({ req: request.raw, res: reply.raw }, e)) return void reply.raw.destroy();
      if (!failure) opts.log(bugLine(opts.face, e));
      // Mid-answer there is no status left to send: the connection is cut.
      if (reply.raw.headersSent || reply.raw.destroyed) return void reply.raw.destroy();
      reply.headers(SECURITY_HEADERS);
      if (request.headers.upgrade !== undefined) closeWithAnswer(request, reply);
      opts.sendFailure(failure ?? internalError(), reply);
    } catch (again) {
      opts.log(bugLine(`${opts.face}: could not answer a failed request`, again));
      reply.raw.destroy();
    }
  };
  const app = Fastify({
    bodyLimit: opts.bodyLimit,
    logger: false,
    // The faces answer 503 during a shutdown in their own shape (or close at once).
    return503OnClosing: false,
    forceCloseConnections: opts.closeAllOnClose ? true : 'idle',
    // Node's own defaults, which Fastify turns off: a client that sends its request slower than
    // five minutes (a slowloris) is cut, an idle kept-alive connection closes after five seconds.
    requestTimeout: 300_000,
    keepAliveTimeout: 5_000,
    // A malformed percent-escape in the path: the client's error, in the face's shape.
    frameworkErrors: (e, request, reply) => fail(e, request, reply),
  });
  app.decorateRequest('target', null as unknown as URL);
  app.decorateRequest('clientGone', null as unknown as AbortSignal);
  app.addHook('onRequest', async (request, reply) => {
    // Every answer carries the hardening headers, whoever sends it.
    reply.headers(SECURITY_HEADERS);
    request.clientGone = followToEnd(request, reply.raw, opts.ended);
    try {
      request.target = new URL(request.url, 'http://local');
    } catch {
      // `GET //x:99999/`, `GET http://[::1:9/`: no URL can be made of them.
      throw new HttpError(400, 'the request target is not a valid URL path', { code: 'invalid_url' });
    }
  });
  // Fastify's not-found route reads (and parses) a body before its handler runs; refused here,
  // after the face's own checks (onRequest) and before the body is read, it costs only its headers.
  app.addHook('preParsing', async (request) => {
    if (request.is404) throw opts.notFound(request);
  });
  app.setNotFoundHandler(async (request) => {
    throw opts.notFound(request);
  });
  // An answer that leaves a body unread (a refusal from the headers: no such route, a method the
  // route does not take, no token or key, a full queue; a body over its limit) closes the
  // connection. Kept alive, Node would read the rest, however long, and throw it away.
  app.addHook('onSend', async (request, reply) => {
    if (bodyUnread(request.raw)) reply.header('connection', 'close');
  });
  app.setErrorHandler((e, request, reply) => fail(e, request, reply));
  // Routes give their bodies as the contract's zod schemas; nothing else has a schema.
  app.setValidatorCompiler(({ schema }) => bodyValidator(schema as z.ZodType));
  return app.withTypeProvider<ZodTypeProvider>();
}

/** Methods a route may be asked for; the ones it does not take are answered 405 by `refuseOtherMethods`. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

/** Answers the methods `url` does not take with the face's 405 (Fastify alone would say 404). */
export function refuseOtherMethods(app: FastifyInstance, url: string, allowed: readonly string[], refusal: () => HttpError): void {
  const others = METHODS.filter((m) => !allowed.includes(m) && !(m === 'HEAD' && allowed.includes('GET')));
  app.route({
    method: others,
    url,
    // Before the body is read: a refused request costs no more than its headers.
    onRequest: async () => {
      throw refusal();
    },
    handler: async () => undefined,
  });
}
