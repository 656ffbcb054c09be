// A local HTTP server with Range support for download tests: serves one buffer and can cut the
// connection after N bytes, ignore Range, or lie about the length.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ServeOptions {
  /** Destroy the socket after this many body bytes, for the first `cuts` responses. */
  cutAfter?: number;
  cuts?: number;
  /** Answer every request with 200 and the whole body, ignoring Range. */
  ignoreRange?: boolean;
  /** Send the body slowly: bytes per tick and ms between ticks. */
  throttle?: { bytes: number; everyMs: number };
  /** The ETag sent (default "v1"); null sends none; a function is asked per request (a file that changes). */
  etag?: string | null | (() => string | null);
  /** Answer a Range whose If-Range no longer matches with 200 and the whole file (default: If-Range is ignored, as some servers do). */
  honourIfRange?: boolean;
  /** Last-Modified to send, asked per request (so a test can change the file and its date). */
  lastModified?: () => string;
}

export interface TestServer {
  url: (path: string) => string;
  requests: { path: string; range: string | undefined; ifRange: string | undefined; status: number }[];
  close: () => Promise<void>;
  server: Server;
}

export async function serveBuffer(files: Record<string, Buffer>, options: ServeOptions = {}): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  let cutsLeft = options.cuts ?? (options.cutAfter !== undefined ? 1 : 0);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (path.startsWith('/redirect/')) {
      res.writeHead(302, { location: path.replace('/redirect', '') });
      res.end();
      requests.push({ path, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined, status: 302 });
      return;
    }
    const body = files[path];
    if (!body) {
      res.writeHead(404);
      res.end('not found');
      requests.push({ path, range: req.headers.range, ifRange: undefined, status: 404 });
      return;
    }
    let start = 0;
    let status = 200;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const headers: Record<string, string | number> = { 'accept-ranges': 'bytes' };
    const etag = typeof options.etag === 'function' ? options.etag() : options.etag === undefined ? '"v1"' : options.etag;
    if (etag !== null) headers.etag = etag;
    if (options.lastModified) headers['last-modified'] = options.lastModified();
    const ifRange = req.headers['if-range'];
    const stale = options.honourIfRange === true && typeof ifRange === 'string' && ifRange !== headers.etag && ifRange !== headers['last-modified'];
    if (range && !options.ignoreRange && !stale) {
      start = Number(range[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` });
        res.end();
        requests.push({ path, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined, status: 416 });
        return;
      }
      status = 206;
      headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
    }
    const slice = body.subarray(start);
    headers['content-length'] = slice.length;
    requests.push({ path, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined, status });
    res.writeHead(status, headers);
    const cut = cutsLeft > 0 && options.cutAfter !== undefined ? options.cutAfter : undefined;
    if (cut !== undefined) cutsLeft--;
    const limit = cut ?? slice.length;
    const step = options.throttle?.bytes ?? 64 * 1024;
    let sent = 0;
    const pump = () => {
      if (res.destroyed) return;
      if (sent >= limit) {
        if (cut !== undefined) {
          // Let the written bytes reach the client, then drop the connection mid-body.
          res.socket?.end(() => res.socket?.destroy());
          setTimeout(() => res.socket?.destroy(), 50);
        } else res.end();
        return;
      }
      const n = Math.min(step, limit - sent);
      res.write(slice.subarray(sent, sent + n));
      sent += n;
      if (options.throttle) setTimeout(pump, options.throttle.everyMs);
      else setImmediate(pump);
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (p) => `http://127.0.0.1:${port}${p}`,
    requests,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
