// `tatra serve`: the built renderer and the API contract over HTTP (POST /api/invoke) and a
// WebSocket (/api/events), in front of one ApiHost. Everything needs the token; API calls and
// WebSocket upgrades also need an allowed Origin. See auth.ts for the reasoning.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, realpath, stat, unlink } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ApiHost } from '../api/host';
import { SECURITY_HEADERS } from '../web/headers';
import { mimeTypeFor } from '../web/mime';
import { isInside } from '../web/inside';
import { safeFileName } from '../web/file-name';
import { findStaticFile } from '../web/static';
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

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...SECURITY_HEADERS });
  res.end(`${text}\n`);
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `request body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  const hostname = opts.hostname ?? '127.0.0.1';
  const token = opts.token ?? newToken();
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const staticDir = resolve(opts.staticDir);
  const uploadsDir = join(opts.host.dataDir, 'uploads');
  const exportsDir = join(opts.host.dataDir, 'exports');
  const maxInvoke = opts.maxInvokeBytes ?? 40 * 1024 * 1024;
  const maxUpload = opts.maxUploadBytes ?? 2 * 1024 * 1024 * 1024;
  let port = opts.port;
  let origins = new Set<string>();

  const serveStatic = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method not allowed');
    // The same lookup as the desktop app's protocol (web/static.ts); only the transport differs.
    const file = await findStaticFile(staticDir, url.pathname);
    if (!file.ok) throw new HttpError(file.status, file.status === 503 ? `${file.reason} and restart tatra serve` : file.reason);
    res.writeHead(200, file.headers);
    if (req.method === 'HEAD') return void res.end();
    await pipeline(createReadStream(file.path), res);
  };

  const handleInvoke = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST') throw new HttpError(405, 'use POST');
    const ct = req.headers['content-type'] ?? '';
    // A JSON content type forces a CORS preflight on cross-site requests, a second wall after Origin.
    if (!ct.startsWith('application/json')) throw new HttpError(415, 'send application/json');
    const body = await readBody(req, maxInvoke);
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
    sendJson(res, 200, await opts.host.invoke(method, input));
  };

  const handleUpload = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    if (req.method !== 'POST') throw new HttpError(405, 'use POST');
    const name = safeFileName(url.searchParams.get('name') ?? 'upload');
    await mkdir(uploadsDir, { recursive: true });
    const dest = join(uploadsDir, `${randomUUID().slice(0, 8)}-${name}`);
    let bytes = 0;
    const counter = async function* (src: AsyncIterable<Buffer>) {
      for await (const chunk of src) {
        bytes += chunk.length;
        if (bytes > maxUpload) throw new HttpError(413, `upload over ${maxUpload} bytes`);
        yield chunk;
      }
    };
    try {
      await pipeline(req, counter, createWriteStream(dest, { flags: 'wx' }));
    } catch (e) {
      await unlink(dest).catch(() => undefined);
      throw e;
    }
    sendJson(res, 200, { path: dest, bytes });
  };

  const handleDownload = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    if (req.method !== 'GET') throw new HttpError(405, 'use GET');
    const wanted = url.searchParams.get('path');
    if (!wanted) throw new HttpError(400, 'give ?path=');
    const file = await realpath(resolve(wanted)).catch(() => null);
    // Only exports may leave the server this way; never an arbitrary file.
    const root = await realpath(exportsDir).catch(() => null);
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
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://local');
      const via = requestTokenSource(req, url, token, port);
      if (!via) throw new HttpError(401, 'unauthorised: open the URL tatra serve printed (it carries the token)');
      const isApi = url.pathname.startsWith('/api/');
      if (isApi && !originAllowed(req.headers.origin, req.headers.host, origins, hostname)) {
        throw new HttpError(403, `forbidden origin ${req.headers.origin ?? ''}`);
      }
      if (via === 'query' && !isApi) {
        // Trade the URL's token for a cookie and drop it from the address bar and history.
        url.searchParams.delete(TOKEN_QUERY);
        res.writeHead(303, {
          Location: url.pathname + (url.search || ''),
          'Set-Cookie': `${cookieName(port)}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
          'Cache-Control': 'no-store',
          ...SECURITY_HEADERS,
        });
        res.end();
        return;
      }
      if (url.pathname === '/api/invoke') return handleInvoke(req, res);
      if (url.pathname === '/api/upload') return handleUpload(req, res, url);
      if (url.pathname === '/api/download') return handleDownload(req, res, url);
      if (isApi) throw new HttpError(404, 'no such endpoint');
      return serveStatic(req, res, url);
    })().catch((e: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError) return sendText(res, e.status, e.message);
      log(`tatra serve: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      sendText(res, 500, 'internal error');
    });
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  // An 'error' event nobody listens to is thrown by EventEmitter and ends the process (every job
  // it runs with it). A protocol error (frame over maxPayload, invalid UTF-8, a bad opcode) is one
  // client's fault: ws closes that socket itself (1009/1007/1002); we only note it.
  wss.on('error', (e) => log(`tatra serve: event socket server: ${e.message}`));
  const sockets = new Set<WebSocket>();
  server.on('upgrade', (req, socket, head) => {
    // The raw socket can fail (reset) before the handshake completes.
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://local');
    const refuse = (status: number, text: string) => {
      socket.write(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${text}\n`);
      socket.destroy();
    };
    if (url.pathname !== '/api/events') return refuse(404, 'Not Found');
    if (!requestTokenSource(req, url, token, port)) return refuse(401, 'Unauthorized');
    if (!originAllowed(req.headers.origin, req.headers.host, origins, hostname)) return refuse(403, 'Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('error', (e) => {
        log(`tatra serve: closed an event socket: ${e.message}`);
        ws.terminate();
      });
      const off = opts.host.subscribe((event, payload) => {
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
      // The socket only carries events out; anything the page sends is ignored.
      ws.on('message', () => undefined);
      ws.send(JSON.stringify({ event: 'hello', payload: { ok: true } }));
    });
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(opts.port, hostname, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  port = (server.address() as AddressInfo).port;
  origins = allowedOrigins(hostname, port, opts.extraOrigins);
  const shownHost = hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname;
  const origin = `http://${shownHost === '0.0.0.0' || shownHost === '[::]' ? '127.0.0.1' : shownHost}:${port}`;
  if (!isLoopbackHost(hostname)) {
    log(`tatra serve: WARNING: listening on ${hostname}, not loopback; anyone who can reach this machine and learns the token can use your models and files. Prefer an SSH tunnel to 127.0.0.1.`);
  }

  let closing: Promise<void> | null = null;
  return {
    url: `${origin}/?${TOKEN_QUERY}=${token}`,
    origin,
    port,
    token,
    close() {
      closing ??= (async () => {
        for (const ws of sockets) ws.terminate();
        wss.close();
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      })();
      return closing;
    },
  };
}
