// One request must never stop a server. Each of the requests that once ended `tatra serve` or
// `tatra api` (a body over the limit, a body cut short, a request target no URL can be made of, a
// malformed percent-escape) goes through every route of both faces, on raw sockets; afterwards
// each server still answers, nothing was an unhandled rejection, and a client's mistake is a 4xx.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../../electron/server/server';
import type { RunningApiService } from '../../../electron/service';
import { startBothFaces, type BothFaces } from '../../helpers/both-faces';

let faces: BothFaces;
let serve: RunningServer;
let api: RunningApiService;
let key = '';
const logs: string[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => void unhandled.push(e);

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  // The default invoke limit (40 MB), so the body over it is the one that ended the process.
  faces = await startBothFaces('tatra-one-request-', { web: { 'assets/app.js': 'console.log(1)' }, serve: { log: (l) => logs.push(l) }, api: { log: (l) => logs.push(l) } });
  ({ serve, api, key } = faces);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await faces?.close();
});

/**
 * Writes `head` then `body` on a raw connection. `cutAfter`: bytes of the body after which the
 * client destroys the socket (an aborted body). Resolves with the status line's code (0: none came).
 */
function send(port: number, head: string, body: Buffer | null = null, cutAfter: number | null = null): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const done = () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0));
    socket.on('error', () => undefined);
    socket.on('close', done);
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      // The status line is all we read; the client then goes, as a browser closing a tab would.
      if (/\r\n\r\n/.test(answer)) socket.destroy();
    });
    socket.on('connect', () => {
      socket.write(head);
      if (!body) return;
      if (cutAfter === null) return void socket.write(body);
      socket.write(body.subarray(0, cutAfter), () => socket.destroy());
    });
  });
}

const OVER_40_MB = Buffer.alloc(41 * 1024 * 1024, 0x20);
const serveAuth = () => `x-tatra-token: ${serve.token}\r\nhost: 127.0.0.1:${serve.port}\r\norigin: ${serve.origin}\r\n`;
const apiAuth = () => `authorization: Bearer ${key}\r\nhost: 127.0.0.1:${api.port}\r\n`;

const SERVE_ROUTES = ['/', '/assets/app.js', '/api/invoke', '/api/upload?name=x.csv', '/api/download?path=x', '/api/events', '/api/nothing'];
const API_ROUTES = ['/healthz', '/metrics', '/v1/models', '/v1/models/tatra%2Fsst2', '/v1/chat/completions', '/v1/classify', '/v1/nothing'];

/** Two requests that must succeed: the server is still there and still itself. */
async function bothStillAnswer(): Promise<void> {
  const invoked = await fetch(`${serve.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': serve.token, origin: serve.origin },
    body: JSON.stringify({ method: 'tasks.list', input: {} }),
  });
  expect(invoked.status).toBe(200);
  await invoked.arrayBuffer();
  const models = await fetch(`${api.origin}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  expect(models.status).toBe(200);
  await models.arrayBuffer();
}

describe('one request never stops a server', () => {
  it('tatra serve: a body over the 40 MB limit, declared or chunked, is a 413 on every route and the server answers on', async () => {
    for (const route of SERVE_ROUTES) {
      const declared = await send(serve.port, `POST ${route} HTTP/1.1\r\n${serveAuth()}content-type: application/json\r\ncontent-length: ${OVER_40_MB.length}\r\n\r\n`, OVER_40_MB);
      // Uploads take up to 2 GB; every other route refuses the method or the body first.
      if (route === '/api/invoke') expect(declared, route).toBe(413);
      else expect(declared, route).not.toBeGreaterThanOrEqual(500);
    }
    // Chunked: no length to refuse up front; the limit is met while reading.
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const chunked = Buffer.concat([...Array.from({ length: 41 }, () => Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])), Buffer.from('0\r\n\r\n')]);
    const status = await send(serve.port, `POST /api/invoke HTTP/1.1\r\n${serveAuth()}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`, chunked);
    // The answer is a 413, or the connection closed under a client still sending: never a 5xx.
    expect([0, 413]).toContain(status);
    await bothStillAnswer();
    expect(unhandled).toEqual([]);
  });

  it('tatra api: a body over its route limit is a 413, on every route, and the server answers on', async () => {
    const big = Buffer.alloc(33 * 1024 * 1024, 0x20);
    for (const route of API_ROUTES) {
      const status = await send(api.port, `POST ${route} HTTP/1.1\r\n${apiAuth()}content-type: application/json\r\ncontent-length: ${big.length}\r\n\r\n`, big);
      expect(status, route).toBeGreaterThanOrEqual(400);
      expect(status, route).toBeLessThan(500);
    }
    await bothStillAnswer();
    expect(unhandled).toEqual([]);
  });

  it('a body cut short on every route of both faces leaves both answering', async () => {
    const half = Buffer.alloc(64 * 1024, 0x7b);
    for (const route of SERVE_ROUTES) await send(serve.port, `POST ${route} HTTP/1.1\r\n${serveAuth()}content-type: application/json\r\ncontent-length: ${half.length * 4}\r\n\r\n`, half, half.length / 2);
    for (const route of API_ROUTES) await send(api.port, `POST ${route} HTTP/1.1\r\n${apiAuth()}content-type: application/json\r\ncontent-length: ${half.length * 4}\r\n\r\n`, half, half.length / 2);
    await bothStillAnswer();
    expect(unhandled).toEqual([]);
  });

  it('a request target no URL can be made of is a 400 on both faces, with or without credentials, and no stack is logged', async () => {
    const before = logs.length;
    const targets = ['//x:99999/', 'http://[::1:99999/v1/models', '//[/', 'http://:/'];
    for (const target of targets) {
      for (const method of ['GET', 'POST']) {
        expect(await send(serve.port, `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1:${serve.port}\r\n\r\n`), `serve ${method} ${target}`).toBe(400);
        expect(await send(serve.port, `${method} ${target} HTTP/1.1\r\n${serveAuth()}\r\n`), `serve ${method} ${target} (token)`).toBe(400);
        expect(await send(api.port, `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1:${api.port}\r\n\r\n`), `api ${method} ${target}`).toBe(400);
        expect(await send(api.port, `${method} ${target} HTTP/1.1\r\n${apiAuth()}\r\n`), `api ${method} ${target} (key)`).toBe(400);
      }
      // The event socket's upgrade path parses the target too.
      expect(await send(serve.port, `GET ${target} HTTP/1.1\r\n${serveAuth()}connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`), `upgrade ${target}`).toBe(400);
    }
    // A malformed percent-escape is refused by the framework before any hook: the upgrade too.
    expect(await send(serve.port, `GET /%E0%A4%A HTTP/1.1\r\n${serveAuth()}connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`), 'upgrade /%E0%A4%A').toBe(400);
    await bothStillAnswer();
    expect(unhandled).toEqual([]);
    expect(logs.slice(before)).toEqual([]);
  });

  it('a malformed percent-escape in a model id is the client\'s error, not a 500', async () => {
    const before = logs.length;
    const res = await fetch(`${api.origin}/v1/models/%E0%A4%A`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string } };
    expect(body.error.code).toBe('invalid_url');
    expect(logs.slice(before)).toEqual([]);
    await bothStillAnswer();
  });
});
