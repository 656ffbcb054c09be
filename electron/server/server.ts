// `tatra serve`: the built renderer and the API contract over HTTP (POST /api/invoke) and a
// WebSocket (/api/events), in front of one ApiHost. Everything needs the token; API calls and
// WebSocket upgrades also need an allowed Origin. See auth.ts for the reasoning.
import { createReadStream, createWriteStream } from 'node:fs';
import { realpath, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ApiHost } from '../api/host';
import { SECURITY_HEADERS } from '../web/headers';
import { mimeTypeFor } from '../web/mime';
import { isInside } from '../web/inside';
import { safeFileName, uploadDestination } from '../web/file-name';
import { findStaticFile } from '../web/static';
import { listen, publicOrigin } from '../web/listen';
import {
  TOKEN_QUERY,
  allowedOrigins,
  cookieName,
  isLoopbackHost,
  newToken,
  originAllowed,
  requestTokenSource,
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

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
  res.end(text);
}

function sendText(res: ServerResponse, status: number, text: string, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...SECURITY_HEADERS, ...headers });
  res.end(`${text}\n`);
}

/**
 * The whole body, or a 413 once it passes `limit`. Read with listeners rather than `for await`:
 * leaving that loop early destroys the request and its socket, so the 413 could never be sent.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, `request body over ${limit} bytes`);
  // A declared length over the limit is refused before a byte is read.
  if (Number(req.headers['content-length'] ?? 0) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      req.pause();
      reject(tooLarge());
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (e: Error) => {
      stop();
      reject(e);
    };
    const onClose = () => {
      stop();
      reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const ctx = serverContext(opts);
  const server = createServer((req, res) => void route(ctx, req, res).catch((e: unknown) => failRequest(ctx, req, res, e)));
  const events = attachEventSocket(ctx, server);
  await listen(server, opts.port, ctx.hostname);
  // The port (0 picks one) is known now; the token cookie and the allowed origins name it.
  ctx.port = (server.address() as AddressInfo).port;
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
      closing ??= (async () => {
        events.close();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      })();
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
  };
}

/** The request's URL, or a 400 for a target no URL can be made of (`//x:99999/`, `http://[::1:9/`). */
function requestUrl(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://local');
  } catch {
    throw new HttpError(400, 'malformed request target');
  }
}

/** One HTTP request: the token, then the Origin for the API, then the endpoint or a static file. */
async function route(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = requestUrl(req);
  const via = requestTokenSource(req, url, ctx.token, ctx.port);
  if (!via) throw new HttpError(401, 'unauthorised: open the URL tatra serve printed (it carries the token)');
  const isApi = url.pathname.startsWith('/api/');
  if (isApi && !originAllowed(req.headers.origin, req.headers.host, ctx.origins, ctx.hostname)) {
    throw new HttpError(403, `forbidden origin ${req.headers.origin ?? ''}`);
  }
  if (via === 'query' && !isApi) return tradeTokenForCookie(ctx, res, url);
  if (url.pathname === '/api/invoke') return handleInvoke(ctx, req, res);
  if (url.pathname === '/api/upload') return handleUpload(ctx, req, res, url);
  if (url.pathname === '/api/download') return handleDownload(ctx, req, res, url);
  if (isApi) throw new HttpError(404, 'no such endpoint');
  return serveStatic(ctx, req, res, url);
}

/** Trade the URL's token for a cookie and drop it from the address bar and history. */
function tradeTokenForCookie(ctx: ServerContext, res: ServerResponse, url: URL): void {
  url.searchParams.delete(TOKEN_QUERY);
  res.writeHead(303, {
    Location: url.pathname + (url.search || ''),
    'Set-Cookie': `${cookieName(ctx.port)}=${encodeURIComponent(ctx.token)}; HttpOnly; SameSite=Strict; Path=/`,
    'Cache-Control': 'no-store',
    ...SECURITY_HEADERS,
  });
  res.end();
}

// How Node reports a peer that went away: the request body ended early ('aborted', ECONNRESET),
// a write met a closed socket (EPIPE), a stream was cut (ERR_STREAM_PREMATURE_CLOSE).
const CLOSED_CODES = new Set(['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/**
 * Whether a request failed only because its client closed the connection (a tab closed, a
 * reload, an upload cancelled, a download stopped): normal traffic, nothing to log or answer.
 */
export function clientWentAway(req: IncomingMessage, res: ServerResponse, e: unknown): boolean {
  if (isClosedConnection(e)) return true;
  // The socket is gone and the error is not a bug of ours (those are logged whoever is listening).
  const bug = e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError || e instanceof SyntaxError;
  // A destroyed request has had its socket detached (`req.socket` is null then): gone as well.
  return !bug && (req.destroyed || req.socket?.destroyed !== false || res.destroyed);
}

function isClosedConnection(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return (typeof code === 'string' && CLOSED_CODES.has(code)) || (e instanceof Error && e.message === 'aborted');
}

/**
 * A failed request: its HTTP error as text, anything else logged and answered 500; mid-stream, the
 * connection is cut; a client that went away is no error at all. It never throws: it runs where
 * nothing else would catch (a throw here was an unhandled rejection that ended the process).
 */
function failRequest(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, e: unknown): void {
  try {
    // An HTTP error is answered even when its body was left unread (a 413): Node closes the
    // connection after the answer rather than read the rest.
    if (e instanceof HttpError && !res.headersSent && !res.destroyed) return sendText(res, e.status, e.message, { Connection: 'close' });
    if (clientWentAway(req, res, e) || res.headersSent) {
      res.destroy();
      return;
    }
    ctx.log(`tatra serve: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    sendText(res, 500, 'internal error');
  } catch (again) {
    ctx.log(`tatra serve: could not answer a failed request: ${again instanceof Error ? again.message : String(again)}`);
    res.destroy();
  }
}

async function serveStatic(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method not allowed');
  // The same lookup as the desktop app's protocol (web/static.ts); only the transport differs.
  const file = await findStaticFile(ctx.staticDir, url.pathname);
  if (!file.ok) throw new HttpError(file.status, file.status === 503 ? `${file.reason} and restart tatra serve` : file.reason);
  res.writeHead(200, file.headers);
  if (req.method === 'HEAD') return void res.end();
  await pipeline(createReadStream(file.path), res);
}

async function handleInvoke(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') throw new HttpError(405, 'use POST');
  const ct = req.headers['content-type'] ?? '';
  // A JSON content type forces a CORS preflight on cross-site requests, a second wall after Origin.
  if (!ct.startsWith('application/json')) throw new HttpError(415, 'send application/json');
  const body = await readBody(req, ctx.maxInvoke);
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
  if (!msg || typeof msg !== 'object' || typeof (msg as { method?: unknown }).method !== 'string') {
    throw new HttpError(400, 'expected {"method": string, "input": …}');
  }
  const { method, input } = msg as { method: string; input?: unknown };
  sendJson(res, 200, await ctx.host.invoke(method, input));
}

async function handleUpload(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (req.method !== 'POST') throw new HttpError(405, 'use POST');
  const dest = await uploadDestination(ctx.uploadsDir, url.searchParams.get('name') ?? 'upload');
  let bytes = 0;
  const counter = async function* (src: AsyncIterable<Buffer>) {
    for await (const chunk of src) {
      bytes += chunk.length;
      if (bytes > ctx.maxUpload) throw new HttpError(413, `upload over ${ctx.maxUpload} bytes`);
      yield chunk;
    }
  };
  const out = createWriteStream(dest, { flags: 'wx' });
  try {
    await pipeline(req, counter, out);
  } catch (e) {
    // A request that ends before the file is even open (the client went away at once) would
    // otherwise have the file created after it is removed, and left behind. The folder is this
    // upload's own (uploadDestination): it goes too.
    if (!out.closed) await new Promise<void>((r) => out.once('close', () => r()));
    await rm(dirname(dest), { recursive: true, force: true }).catch(() => undefined);
    throw e;
  }
  sendJson(res, 200, { path: dest, bytes });
}

async function handleDownload(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (req.method !== 'GET') throw new HttpError(405, 'use GET');
  const wanted = url.searchParams.get('path');
  if (!wanted) throw new HttpError(400, 'give ?path=');
  const file = await realpath(resolve(wanted)).catch(() => null);
  // Only exports may leave the server this way; never an arbitrary file.
  const root = await realpath(ctx.exportsDir).catch(() => null);
  if (!file || !root || !isInside(root, file)) throw new HttpError(404, 'no such export');
  // The folder itself (or a folder in it) is no export: answer before any header is sent,
  // rather than fail mid-stream with an empty reply.
  const info = await stat(file);
  if (!info.isFile()) throw new HttpError(404, 'no such export');
  res.writeHead(200, {
    'Content-Type': mimeTypeFor(file),
    'Content-Length': String(info.size),
    'Content-Disposition': `attachment; filename="${safeFileName(basename(file))}"`,
    'Cache-Control': 'no-store',
    ...SECURITY_HEADERS,
  });
  await pipeline(createReadStream(file), res);
}

/** The event socket (/api/events): the same token and Origin checks as the API, then the host's events out. */
function attachEventSocket(ctx: ServerContext, server: Server): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  // An 'error' event nobody listens to is thrown by EventEmitter and ends the process (every job
  // it runs with it). A protocol error (frame over maxPayload, invalid UTF-8, a bad opcode) is one
  // client's fault: ws closes that socket itself (1009/1007/1002); we only note it.
  wss.on('error', (e) => ctx.log(`tatra serve: event socket server: ${e.message}`));
  const sockets = new Set<WebSocket>();
  server.on('upgrade', (req, socket, head) => {
    // The raw socket can fail (reset) before the handshake completes.
    socket.on('error', () => socket.destroy());
    const refuse = (status: number, text: string) => {
      socket.write(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${text}\n`);
      socket.destroy();
    };
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://local');
    } catch {
      return refuse(400, 'Bad Request');
    }
    if (url.pathname !== '/api/events') return refuse(404, 'Not Found');
    if (!requestTokenSource(req, url, ctx.token, ctx.port)) return refuse(401, 'Unauthorized');
    if (!originAllowed(req.headers.origin, req.headers.host, ctx.origins, ctx.hostname)) return refuse(403, 'Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => serveEvents(ctx, ws, sockets));
  });
  return {
    close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
    },
  };
}

/** One event socket: the host's events out, kept alive by pings; anything the page sends is ignored. */
function serveEvents(ctx: ServerContext, ws: WebSocket, sockets: Set<WebSocket>): void {
  sockets.add(ws);
  ws.on('error', (e) => {
    // A page that went away is normal; a protocol error (ws closes the socket itself) is noted.
    if (!isClosedConnection(e)) ctx.log(`tatra serve: closed an event socket: ${e.message}`);
    ws.terminate();
  });
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
    sockets.delete(ws);
  });
  ws.on('message', () => undefined);
  ws.send(JSON.stringify({ event: 'hello', payload: { ok: true } }));
}
