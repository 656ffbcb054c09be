// httpJson's transport (node:http with a keep-alive pool): connections are reused, hundreds of
// calls on one signal hold one abort listener and all stop when it aborts, a timeout and a
// connection dropped mid-answer are classified, a GET follows redirects and a POST does not.
// A real server on a real socket.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpFailure, httpJson } from '../../../electron/net/http';
import { failure } from '../../helpers/failure';

/** These tests are about the transport: any JSON answer will do. */
const anything = z.unknown();

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        }),
    ),
  );
  servers = [];
});

async function serve(handler: (path: string, res: ServerResponse) => void): Promise<{ origin: string; connections: () => number; open: () => number }> {
  let connections = 0;
  let open = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req.url ?? '/', res));
  });
  server.on('connection', (socket) => {
    connections++;
    open++;
    socket.on('close', () => open--);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, open: () => open };
}

function answer(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

describe('JSON calls', () => {
  it('reuse their connections: 40 calls one after another open one', async () => {
    const s = await serve((_path, res) => answer(res, 200, { ok: true }));
    for (let i = 0; i < 40; i++) expect(await httpJson({ answer: anything, method: 'POST', url: `${s.origin}/x`, body: { i }, timeoutMs: 10_000 })).toEqual({ ok: true });
    expect(s.connections()).toBe(1);
  });

  it('300 calls in flight on one signal hold one abort listener; aborting stops them all with its reason', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const ac = new AbortController();
    const calls = Array.from({ length: 300 }, (_, i) => failure(httpJson({ answer: anything, method: 'POST', url: `${s.origin}/x`, body: { i }, timeoutMs: 60_000, signal: ac.signal })));
    await expect.poll(() => s.open(), { timeout: 20_000 }).toBe(300);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    const reason = new Error('stop');
    ac.abort(reason);
    for (const e of await Promise.all(calls)) expect(e).toBe(reason);
    // The requests were cut, not left to finish: the server sees every connection close.
    await expect.poll(() => s.open(), { timeout: 20_000 }).toBe(0);
    await expect(httpJson({ answer: anything, method: 'GET', url: `${s.origin}/x`, timeoutMs: 1000, signal: ac.signal })).rejects.toBe(reason);
  });

  it('a call without an answer in time is a timeout; one whose answer is cut off is a connection failure', async () => {
    const s = await serve((path, res) => {
      if (path === '/cut') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"partial": ');
        setTimeout(() => res.socket?.destroy(), 20);
      }
    });
    const slow = (await failure(httpJson({ answer: anything, method: 'GET', url: `${s.origin}/slow`, timeoutMs: 200 }))) as HttpFailure;
    expect(slow).toBeInstanceOf(HttpFailure);
    expect(slow).toMatchObject({ kind: 'timeout', message: 'no answer within 0 s', retryable: true, endpointDown: true });
    const cut = (await failure(httpJson({ answer: anything, method: 'GET', url: `${s.origin}/cut`, timeoutMs: 10_000 }))) as HttpFailure;
    expect(cut).toBeInstanceOf(HttpFailure);
    expect(cut.kind).toBe('connect');
    expect(cut.message).toMatch(/connection (reset|closed)/);
  });

  it('a request on a kept-alive connection that the server drops unanswered goes again on a new one', async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      const socket = req.socket as typeof req.socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      req.resume();
      // The server closing an idle connection just as the next request arrives on it.
      if (socket.served === 2) return void socket.destroy();
      req.on('end', () => answer(res, 200, { n: requests }));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    expect(await httpJson({ answer: anything, method: 'POST', url, body: {}, timeoutMs: 10_000 })).toEqual({ n: 1 });
    expect(await httpJson({ answer: anything, method: 'POST', url, body: {}, timeoutMs: 10_000 })).toEqual({ n: 3 });
  });

  it('a GET follows redirects; a POST answers with the redirect status', async () => {
    const s = await serve((path, res) => {
      if (path === '/v1/models') return answer(res, 301, {}, { location: '/v1/models/' });
      if (path === '/v1/models/') return answer(res, 200, { data: [] });
      if (path === '/post') return answer(res, 307, {}, { location: '/elsewhere' });
      answer(res, 404, { error: 'no' });
    });
    expect(await httpJson({ answer: anything, method: 'GET', url: `${s.origin}/v1/models`, timeoutMs: 10_000 })).toEqual({ data: [] });
    // To another origin, without the key.
    let elsewhere: string | undefined = 'unset';
    const other = createServer((req, res) => {
      elsewhere = req.headers.authorization;
      req.resume();
      req.on('end', () => answer(res, 200, { moved: true }));
    });
    servers.push(other);
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const away = await serve((_path, res) => answer(res, 302, {}, { location: `http://127.0.0.1:${(other.address() as AddressInfo).port}/there` }));
    expect(await httpJson({ answer: anything, method: 'GET', url: `${away.origin}/v1/models`, key: 'sk-secret', timeoutMs: 10_000 })).toEqual({ moved: true });
    expect(elsewhere).toBeUndefined();
    const post = (await failure(httpJson({ answer: anything, method: 'POST', url: `${s.origin}/post`, body: {}, timeoutMs: 10_000 }))) as HttpFailure;
    expect(post).toMatchObject({ kind: 'status', status: 307 });
  });

  it('the key goes in the Authorization header, and a status answer keeps its JSON error and Retry-After', async () => {
    let seen: string | undefined;
    const server = createServer((req, res) => {
      seen = req.headers.authorization;
      req.resume();
      req.on('end', () => answer(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '2' }));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    const e = (await failure(httpJson({ answer: anything, method: 'POST', url, body: {}, key: 'sk-test', timeoutMs: 10_000 }))) as HttpFailure;
    expect(seen).toBe('Bearer sk-test');
    expect(e).toMatchObject({ kind: 'status', status: 429, retryAfterMs: 2000, serverMessage: 'slow down', busy: true });
  });
});
