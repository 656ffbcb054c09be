// `tatra serve`: the built renderer and the API contract over HTTP (POST /api/invoke) and a
// WebSocket (/api/events), in front of one ApiHost, on the faces' one HTTP stack (web/http-app.ts).
// Everything needs the token; API calls and the event socket also need an allowed Origin. See
// auth.ts for the reasoning. Failures are plain text (`<message>\n`) with their status.
import { createReadStream, createWriteStream } from 'node:fs';
import { realpath, rm, stat } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import type { WebSocket } from 'ws';
import type { ApiHost } from '../api/host';
import { InvokeRequest } from '../common/contract';
import { createHttpApp, isClosedConnection, readJsonBodies, refuseOtherMethods, type HttpApp } from '../web/http-app';
import { HttpError } from '../web/http-error';
import { mimeTypeFor } from '../web/mime';
import { isInside } from '../web/inside';
import { safeFileName, uploadDestination } from '../web/file-name';
import { findStaticFile } from '../web/static';
import { errorMessage } from '../common/errors';
import { ifMissing } from '../common/env-errors';
import { publicOrigin } from '../web/listen';
import { HOST_REFUSED, hostAllowed } from '../web/hosts';
import {
  TOKEN_QUERY,
  allowedOrigins,
  isLoopbackHost,
  newToken,
  originAllowed,
  requestTokenSource,
  tokenCookie,
} from './auth';

export interface ServeOptions {
  host: ApiHost;
  /** 0 picks a free port. */
  port: number;
  /** Interface to listen on; default 127.0.0.1. */
  hostname?: string;
  /** Folder with the built renderer (index.html). */
  staticDir: string;
  /** Fixed token (tests); default a fresh random one. */
  token?: string;
  /** Further origins allowed to call the API (e.g. a reverse proxy's). */
  extraOrigins?: string[];
  /** Largest POST /api/invoke body, bytes (default 40 MB: small uploads travel as JSON). */
  maxInvokeBytes?: number;
  /** Largest POST /api/upload body, bytes (default 2 GB). */
  maxUploadBytes?: number;
  log?: (line: string) => void;
  /** Tests only: more routes beside the server's own, behind the same checks (a handler that throws). */
  testRoutes?: (app: HttpApp) => void;
}

export interface RunningServer {
  /** The URL to open, token included. */
  url: string;
  /** The URL without the token. */
  origin: string;
  port: number;
  token: string;
  close(): Promise<void>;
}


export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const ctx = serverContext(opts);
  const app = createHttpApp({
    face: 'tatra serve',
    bodyLimit: ctx.maxInvoke,
    log: ctx.log,
    closeAllOnClose: true,
    // The face's failures are all HttpErrors: anything else is a bug.
    failureOf: () => null,
    sendFailure,
    // Every path takes GET (the renderer, or a 404 for an unknown /api/ path): what reaches here is a method no route knows.
    notFound: () => new HttpError(405, 'method not allowed'),
  });
  await addEventSocket(ctx, app);
  addRoutes(ctx, app);
  opts.testRoutes?.(app);
  await app.listen({ port: opts.port, host: ctx.hostname });
  // The port (0 picks one) is known now; the token cookie and the allowed origins name it.
  ctx.port = (app.server.address() as AddressInfo).port;
  ctx.origins = allowedOrigins(ctx.hostname, ctx.port, opts.extraOrigins);
  const origin = publicOrigin(ctx.hostname, ctx.port);
  if (!isLoopbackHost(ctx.hostname)) {
    ctx.log(`tatra serve: WARNING: listening on ${ctx.hostname}, not loopback; anyone who can reach this machine and learns the token can use your models and files. Prefer an SSH tunnel to 127.0.0.1.`);
  }
  let closing: Promise<void> | null = null;
  return {
    url: `${origin}/?${TOKEN_QUERY}=${ctx.token}`,
    origin,
    port: ctx.port,
    token: ctx.token,
    close() {
      closing ??= app.close();
      return closing;
    },
  };
}

/** What every request handler of one server needs. */
interface ServerContext {
  host: ApiHost;
  hostname: string;
  token: string;
  log: (line: string) => void;
  staticDir: string;
  uploadsDir: string;
  exportsDir: string;
  maxInvoke: number;
  maxUpload: number;
  /** The asked-for port until listening, then the real one. */
  port: number;
  /** Empty until listening: no API call is answered before. */
  origins: Set<string>;
  /** The host names of the extra origins (a reverse proxy may pass its own as the Host). */
  proxyNames: string[];
}

function serverContext(opts: ServeOptions): ServerContext {
  return {
    host: opts.host,
    hostname: opts.hostname ?? '127.0.0.1',
    token: opts.token ?? newToken(),
    log: opts.log ?? ((line: string) => process.stderr.write(`${line}\n`)),
    staticDir: resolve(opts.staticDir),
    uploadsDir: join(opts.host.dataDir, 'uploads'),
    exportsDir: join(opts.host.dataDir, 'exports'),
    maxInvoke: opts.maxInvokeBytes ?? 40 * 1024 * 1024,
    maxUpload: opts.maxUploadBytes ?? 2 * 1024 * 1024 * 1024,
    port: opts.port,
    origins: new Set<string>(),
    proxyNames: (opts.extraOrigins ?? []).filter((o) => URL.canParse(o)).map((o) => new URL(o).hostname),
  };
}

/** A failure as text: its status and message. */
function sendFailure(failure: HttpError, reply: FastifyReply): void {
  reply.code(failure.status).headers({ 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...failure.headers });
  reply.send(`${failure.message}\n`);
}

/** The Host (as tatra api), the token on everything, then the Origin for the API, then the cookie trade for a page opened from the printed URL. */
async function checkRequest(ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (!hostAllowed(ctx.hostname, request.headers.host, ctx.proxyNames)) throw new HttpError(403, HOST_REFUSED);
  const url = request.target;
  const via = requestTokenSource(request.raw, url, ctx.token, ctx.port);
  if (!via) throw new HttpError(401, 'unauthorised: open the URL tatra serve printed (it carries the token)');
  const isApi = url.pathname.startsWith('/api/');
  if (isApi && !originAllowed(request.headers.origin, request.headers.host, ctx.origins, ctx.hostname)) {
    throw new HttpError(403, `forbidden origin ${request.headers.origin ?? ''}`);
  }
  if (via === 'query' && !isApi) return tradeTokenForCookie(ctx, reply, url);
  return undefined;
}

function addRoutes(ctx: ServerContext, app: HttpApp): void {
  app.addHook('onRequest', (request, reply) => {
    // No answer of this server is for a cache to keep but the renderer's assets, which say
    // otherwise (web/static.ts); sendFailure says it too: a request whose target Fastify cannot
    // route never reaches this hook.
    reply.header('cache-control', 'no-store');
    return checkRequest(ctx, request, reply);
  });
  const usePost = () => new HttpError(405, 'use POST');
  const useGet = () => new HttpError(405, 'use GET');

  // POST /api/invoke: JSON only. A JSON content type forces a CORS preflight on cross-site
  // requests, a second wall after Origin; anything else is a 415 before a byte is read.
  void app.register(async (plugin) => {
    const scope = readJsonBodies(plugin, 'application/json');
    scope.post('/api/invoke', { bodyLimit: ctx.maxInvoke, schema: { body: InvokeRequest } }, async (request, reply) => {
      const { method, input } = request.body;
      // A page that stops waiting (its fetch aborted) stops the work done only for this answer.
      return reply.send(await ctx.host.invoke(method, input, { signal: request.clientGone }));
    });
    refuseOtherMethods(scope, '/api/invoke', ['POST'], usePost);
  });

  // POST /api/upload: any bytes, streamed to disk as they come (up to 2 GB), never held in memory.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.post('/api/upload', (request, reply) => handleUpload(ctx, request, reply));
    refuseOtherMethods(scope, '/api/upload', ['POST'], usePost);
  });

  app.get('/api/download', (request, reply) => handleDownload(ctx, request, reply));
  refuseOtherMethods(app, '/api/download', ['GET'], useGet);

  // Every other /api/ path, whatever the method: before its body is read.
  app.all('/api/*', { onRequest: async () => noSuchEndpoint(), handler: async () => undefined });

  // Everything else is the renderer: the same lookup as the desktop app's protocol (web/static.ts).
  app.get('/*', (request, reply) => serveStatic(ctx, request, reply));
  refuseOtherMethods(app, '/*', ['GET'], () => new HttpError(405, 'method not allowed'));
}

/** Trade the URL's token for a cookie and drop it from the address bar and history. */
function tradeTokenForCookie(ctx: ServerContext, reply: FastifyReply, url: URL): FastifyReply {
  url.searchParams.delete(TOKEN_QUERY);
  return reply
    .code(303)
    .headers({
      location: url.pathname + (url.search || ''),
      'set-cookie': tokenCookie(ctx.token, ctx.port),
    })
    .send();
}

async function serveStatic(ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const file = await findStaticFile(ctx.staticDir, request.target.pathname);
  if (!file.ok) throw new HttpError(file.status, file.status === 503 ? `${file.reason} and restart tatra serve` : file.reason);
  reply.headers(file.headers);
  return reply.send(request.method === 'HEAD' ? undefined : createReadStream(file.path));
}

async function handleUpload(ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const tooLarge = () => new HttpError(413, `upload over ${ctx.maxUpload} bytes`);
  if (Number(request.headers['content-length'] ?? 0) > ctx.maxUpload) throw tooLarge();
  const dest = await uploadDestination(ctx.uploadsDir, request.target.searchParams.get('name') ?? 'upload');
  let bytes = 0;
  const counter = async function* (src: AsyncIterable<Buffer>) {
    for await (const chunk of src) {
      bytes += chunk.length;
      if (bytes > ctx.maxUpload) throw tooLarge();
      yield chunk;
    }
  };
  const out = createWriteStream(dest, { flags: 'wx' });
  try {
    await pipeline(request.raw, counter, out);
  } catch (e) {
    // A request that ends before the file is even open (the client went away at once) would
    // otherwise have the file created after it is removed, and left behind. The folder is this
    // upload's own (uploadDestination): it goes too.
    if (!out.closed) await new Promise<void>((r) => out.once('close', () => r()));
    // The upload's own failure is what the client gets; a leftover that cannot be removed is logged.
    await rm(dirname(dest), { recursive: true, force: true }).catch((rmError: unknown) => ctx.log(`tatra serve: could not remove the unfinished upload ${dirname(dest)}: ${errorMessage(rmError)}`));
    throw e;
  }
  return reply.send({ path: dest, bytes });
}

async function handleDownload(ctx: ServerContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const wanted = request.target.searchParams.get('path');
  if (!wanted) throw new HttpError(400, 'give ?path=');
  // Only exports may leave the server this way; never an arbitrary file. A path outside the
  // exports folder is answered 404 before anything reads it, so a client learns nothing of what
  // exists elsewhere (no "permission denied" beside "not found"); inside it, a symbolic link that
  // leads out is caught by the real path. Nothing there (no export yet, none of that name) is 404;
  // any other failure to read our own folder is the server's, said as one.
  const root = await realpath(ctx.exportsDir).catch(ifMissing(null));
  const asked = resolve(wanted);
  if (!root || !(isInside(resolve(ctx.exportsDir), asked) || isInside(root, asked))) throw new HttpError(404, 'no such export');
  const file = await realpath(asked).catch(ifMissing(null));
  if (!file || !isInside(root, file)) throw new HttpError(404, 'no such export');
  // The folder itself (or a folder in it) is no export: answer before any header is sent,
  // rather than fail mid-stream with an empty reply.
  const info = await stat(file);
  if (!info.isFile()) throw new HttpError(404, 'no such export');
  return reply
    .headers({
      'content-type': mimeTypeFor(file),
      'content-length': String(info.size),
      'content-disposition': `attachment; filename="${safeFileName(basename(file))}"`,
    })
    .send(createReadStream(file));
}

/**
 * The event socket (GET /api/events, upgraded): a route like any other, so the one request hook
 * (the token, then the Origin) refuses it with the same status, headers and text as any request.
 * An ordinary GET of it is no endpoint; an upgrade of any other route is refused the same way.
 */
async function addEventSocket(ctx: ServerContext, app: HttpApp): Promise<void> {
  await app.register(websocket, {
    options: { maxPayload: 64 * 1024 },
    // A protocol error (a frame over maxPayload, invalid UTF-8, a bad opcode) is one client's
    // fault: ws closes that socket itself (1009/1007/1002); a page that went away is normal.
    errorHandler: (e, socket) => {
      if (!isClosedConnection(e)) ctx.log(`tatra serve: closed an event socket: ${e.message}`);
      socket.terminate();
    },
    // Closing ends every socket at once, as every other connection of `tatra serve`.
    preClose(done) {
      for (const ws of this.websocketServer.clients) ws.terminate();
      this.websocketServer.close(() => done());
    },
  });
  app.route({
    method: 'GET',
    url: '/api/events',
    handler: noSuchEndpoint,
    wsHandler: (ws) => serveEvents(ctx, ws),
  });
  app.addHook('preHandler', async (request) => {
    if (request.ws && request.routeOptions.url !== '/api/events') noSuchEndpoint();
  });
}

function noSuchEndpoint(): never {
  throw new HttpError(404, 'no such endpoint');
}

/** One event socket: the host's events out, kept alive by pings; anything the page sends is ignored. */
function serveEvents(ctx: ServerContext, ws: WebSocket): void {
  const off = ctx.host.subscribe((event, payload) => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ event, payload }));
  });
  let alive = true;
  ws.on('pong', () => (alive = true));
  const ping = setInterval(() => {
    if (!alive) return ws.terminate();
    alive = false;
    ws.ping();
  }, 30_000);
  ws.on('close', () => {
    clearInterval(ping);
    off();
  });
  ws.on('message', () => undefined);
  ws.send(JSON.stringify({ event: 'hello', payload: { ok: true } }));
}
