// A client that goes away mid-request is normal traffic for `tatra serve` (a tab closed, a reload,
// an upload or a download stopped): nothing is logged, nothing is left behind, and the server
// answers the next request. Every endpoint, cut at every stage (headers, body, answer), closed
// three ways (FIN, destroy, TCP reset), on a real server over a real ApiHost.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import { startServer, type RunningServer } from '../../../electron/server/server';
import { clientWentAway } from '../../../electron/web/http-app';
import { whenFolder } from '../../helpers/events';

let dir: string;
let host: ApiHost;
let server: RunningServer;
const logs: string[] = [];
const BIG = 8 * 1024 * 1024;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tatra-serve-closed-'));
  const web = join(dir, 'web');
  mkdirSync(join(web, 'assets'), { recursive: true });
  writeFileSync(join(web, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(web, 'assets', 'big.js'), Buffer.alloc(BIG, 0x61));
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test' });
  mkdirSync(join(dir, 'data', 'exports'), { recursive: true });
  writeFileSync(join(dir, 'data', 'exports', 'big.csv'), Buffer.alloc(BIG, 0x62));
  server = await startServer({ host, port: 0, staticDir: web, log: (l) => logs.push(l) });
});

afterAll(async () => {
  await server.close();
  await host.dispose();
  rmSync(dir, { recursive: true, force: true });
});

type Close = 'end' | 'destroy' | 'reset';

/** Opens a raw connection, writes `head` (+ `body`), reads `readBytes` of the answer (0: none), then closes it `how`; resolves once the socket is closed. */
function cut(head: string, body: Buffer | null, readBytes: number, how: Close): Promise<void> {
  return new Promise((resolve) => {
    const socket: Socket = connect(server.port, '127.0.0.1');
    let got = 0;
    const close = () => {
      if (how === 'end') socket.end();
      else if (how === 'destroy') socket.destroy();
      else socket.resetAndDestroy();
    };
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    socket.on('connect', () => {
      socket.write(head);
      if (body) socket.write(body);
      if (readBytes === 0) setImmediate(close);
    });
    socket.on('data', (d: Buffer) => {
      got += d.length;
      if (readBytes > 0 && got >= readBytes) {
        socket.pause();
        close();
      }
    });
    if (how === 'end') socket.on('end', () => socket.destroy());
  });
}

const auth = () => `x-tatra-token: ${server.token}\r\nhost: 127.0.0.1:${server.port}\r\norigin: ${server.origin}\r\n`;

/** The stages at which a client can go away, per endpoint. */
const STAGES: Array<[name: string, head: () => string, body: Buffer | null, readBytes: number]> = [
  ['invoke: headers only, body promised', () => `POST /api/invoke HTTP/1.1\r\n${auth()}content-type: application/json\r\ncontent-length: 5000\r\n\r\n`, null, 0],
  ['invoke: half the body', () => `POST /api/invoke HTTP/1.1\r\n${auth()}content-type: application/json\r\ncontent-length: 5000\r\n\r\n`, Buffer.from('{"method":"tasks.list","input":{'.padEnd(2500, ' ')), 0],
  ['invoke: chunked, no last chunk', () => `POST /api/invoke HTTP/1.1\r\n${auth()}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`, Buffer.from('10\r\n{"method":"tasks\r\n'), 0],
  ['upload: 1 MiB of a promised 64 MiB', () => `POST /api/upload?name=x.csv HTTP/1.1\r\n${auth()}content-length: ${64 * 1024 * 1024}\r\n\r\n`, Buffer.alloc(1024 * 1024, 0x63), 0],
  ['upload: chunked, cut', () => `POST /api/upload?name=y.csv HTTP/1.1\r\n${auth()}transfer-encoding: chunked\r\n\r\n`, Buffer.from(`100000\r\n${'d'.repeat(0x100000)}\r\n1000\r\n${'d'.repeat(100)}`), 0],
  ['static: a big file, stopped after 64 KiB', () => `GET /assets/big.js HTTP/1.1\r\n${auth()}\r\n`, null, 64 * 1024],
  ['download: a big export, stopped after 64 KiB', () => `GET /api/download?path=${encodeURIComponent(join(dir, 'data', 'exports', 'big.csv'))} HTTP/1.1\r\n${auth()}\r\n`, null, 64 * 1024],
  ['download: closed before the answer', () => `GET /api/download?path=${encodeURIComponent(join(dir, 'data', 'exports', 'big.csv'))} HTTP/1.1\r\n${auth()}\r\n`, null, 0],
  ['half a request line', () => 'GET /assets/bi', null, 0],
  ['headers cut in the middle', () => `GET / HTTP/1.1\r\n${auth()}x-long: ${'z'.repeat(2000)}`, null, 0],
  ['event socket: upgraded, then gone', () => `GET /api/events HTTP/1.1\r\n${auth()}connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`, null, 20],
  ['event socket: half a frame, then gone', () => `GET /api/events HTTP/1.1\r\n${auth()}connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`, Buffer.from([0x81, 0xfe, 0x10, 0x00, 1, 2, 3, 4, 5]), 20],
];

async function stillServes(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    const r = await fetch(`${server.origin}/api/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-tatra-token': server.token, origin: server.origin }, body: JSON.stringify({ method: 'tasks.list', input: {} }) });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
}

describe('a client that goes away', () => {
  // A half-close (FIN) while reading would keep the answer flowing (legal HTTP): only while sending.
  const cases = STAGES.flatMap(([name, head, body, read]) => (read > 0 ? (['destroy', 'reset'] as const) : (['end', 'destroy', 'reset'] as const)).map((how) => [`${name} (${how})`, head, body, read, how] as const));
  it.each(cases)('%s: nothing logged, nothing left, the next request answered', async (_name, head, body, read, how) => {
    const before = logs.length;
    await cut(head(), body, read, how);
    await stillServes();
    // An upload cut short leaves no file behind (removed once the server has seen the close).
    await whenFolder(join(dir, 'data', 'uploads'), (left) => left.length === 0);
    expect(logs.slice(before)).toEqual([]);
  });
});

describe('clientWentAway', () => {
  const req = (destroyed: boolean) => ({ req: { socket: { destroyed }, destroyed }, res: { destroyed: false } });
  it('is true for the ways Node reports a closed peer', () => {
    for (const code of ['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNABORTED']) expect(clientWentAway(req(false), Object.assign(new Error('x'), { code }))).toBe(true);
    expect(clientWentAway(req(false), new Error('aborted'))).toBe(true);
    expect(clientWentAway(req(true), Object.assign(new Error('read failed'), { code: 'EIO' }))).toBe(true);
  });
  it('is false for a bug of ours, even when the client has gone too, and for other failures', () => {
    expect(clientWentAway(req(true), new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
    expect(clientWentAway(req(false), new Error('disk full'))).toBe(false);
  });
});
