// A real `tatra serve` server (startServer over a real ApiHost on a temp data folder, port 0):
// token, cookie trade, Origin, static files, uploads, exports and the event socket.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import { cookieName } from '../../../electron/server/auth';
import { startServer, type RunningServer } from '../../../electron/server/server';
import { SECURITY_HEADERS } from '../../../electron/web/headers';

let dir: string;
let host: ApiHost;
let server: RunningServer;
const logs: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tatra-serve-'));
  const web = join(dir, 'web');
  mkdirSync(join(web, 'assets'), { recursive: true });
  writeFileSync(join(web, 'index.html'), '<!doctype html><title>t</title><p>page</p>');
  writeFileSync(join(web, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'secret.txt'), 'secret');
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test' });
  server = await startServer({ host, port: 0, staticDir: web, log: (l) => logs.push(l) });
});

afterAll(async () => {
  await server.close();
  await host.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const invoke = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.origin}/api/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

function wsOpen(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket | null; status: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve({ ws, status: 101 }));
    ws.once('unexpected-response', (_req, res) => {
      ws.terminate();
      resolve({ ws: null, status: res.statusCode ?? 0 });
    });
    ws.once('error', reject);
  });
}

interface RawAnswer {
  status: number;
  /** The headers that describe the answer (transport headers such as Date and Connection left out). */
  headers: Record<string, string>;
  body: string;
}

/** Writes `head` on a raw connection and reads the answer until the server closes it (an upgrade refused or not). */
function rawAnswer(head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => void (text += d.toString('latin1')));
    socket.on('close', () => {
      const [top = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = top.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const [name = '', ...value] = line.split(':');
        if (!['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name.toLowerCase())) headers[name.toLowerCase()] = value.join(':').trim();
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: body.replace(/^[0-9a-f]+\r\n|\r\n0\r\n$/g, '') });
    });
    socket.on('connect', () => socket.write(head));
  });
}

describe('tatra serve', () => {
  it('prints a loopback URL with a long random token on a random port', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/);
    expect(server.port).toBeGreaterThan(0);
    expect(logs.some((l) => l.includes('WARNING'))).toBe(false);
  });

  it('refuses every request without the token with 401', async () => {
    for (const path of ['/', '/index.html', '/assets/app.js', '/api/download?path=x']) {
      expect((await fetch(`${server.origin}${path}`)).status, path).toBe(401);
    }
    expect((await invoke({ method: 'tasks.list', input: {} })).status).toBe(401);
    expect((await wsOpen(`${server.origin.replace('http', 'ws')}/api/events`, { Origin: server.origin })).status).toBe(401);
  });

  it('trades the URL token for an HttpOnly per-port cookie and serves the page with CSP', async () => {
    const first = await fetch(server.url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toContain(`${cookieName(server.port)}=${server.token}`);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const page = await fetch(`${server.origin}/`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<p>page</p>');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const asset = await fetch(`${server.origin}/assets/app.js`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(asset.headers.get('content-type')).toContain('text/javascript');
    // Client-side routes fall back to the page; missing assets do not.
    expect((await fetch(`${server.origin}/evaluate/x`, { headers: { 'x-tatra-token': server.token } })).status).toBe(200);
    expect((await fetch(`${server.origin}/assets/nope.js`, { headers: { 'x-tatra-token': server.token } })).status).toBe(404);
  });

  it('never serves a file outside the renderer folder', async () => {
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt']) {
      const res = await fetch(`${server.origin}${path}`, { headers: { 'x-tatra-token': server.token } });
      expect(await res.text(), path).not.toContain('secret');
    }
  });

  it('answers API calls with the token, refuses a foreign Origin with 403', async () => {
    const ok = await invoke({ method: 'app.info', input: {} }, { 'x-tatra-token': server.token, Origin: server.origin });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, value: { mode: 'test', threads: 1 } });
    const foreign = await invoke({ method: 'app.info', input: {} }, { 'x-tatra-token': server.token, Origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    const unknown = await invoke({ method: 'nope', input: {} }, { 'x-tatra-token': server.token });
    expect(await unknown.json()).toMatchObject({ ok: false, error: { code: 'unknown_method' } });
    const notJson = await fetch(`${server.origin}/api/invoke`, { method: 'POST', headers: { 'x-tatra-token': server.token, 'content-type': 'text/plain' }, body: '{}' });
    expect(notJson.status).toBe(415);
    // The body is the contract's InvokeRequest: what is wrong with it is said in a line; the input may be left out.
    for (const [body, text] of [[{ input: {} }, 'Method is missing'], [{ method: 3 }, 'Method must be text'], [[], 'the body must be a JSON object'], [null, 'the body must be a JSON object']] as const) {
      const bad = await invoke(body, { 'x-tatra-token': server.token });
      expect({ status: bad.status, text: await bad.text() }, JSON.stringify(body)).toEqual({ status: 400, text: `${text}\n` });
    }
    expect(await (await invoke({ method: 'app.info' }, { 'x-tatra-token': server.token })).json()).toMatchObject({ ok: true });
  });

  it('refuses, as tatra api does, a Host that is not this machine (DNS rebinding), before the token', async () => {
    const head = (hostName: string) => `GET /api/download?path=x HTTP/1.1\r\nhost: ${hostName}:${server.port}\r\nx-tatra-token: ${server.token}\r\nconnection: close\r\n\r\n`;
    const rebound = await rawAnswer(head('rebound.example'));
    expect({ status: rebound.status, body: rebound.body }).toEqual({ status: 403, body: 'this server answers only to its loopback name (127.0.0.1 or localhost)\n' });
    expect((await rawAnswer(head('localhost'))).status).toBe(404);
  });

  it('says no-store on every answer but the renderer’s assets, which say how long they keep', async () => {
    const auth = { 'x-tatra-token': server.token };
    mkdirSync(join(dir, 'data', 'exports'), { recursive: true });
    writeFileSync(join(dir, 'data', 'exports', 'cached.csv'), 'a\n');
    const answers = {
      invoke: await invoke({ method: 'app.info', input: {} }, auth),
      upload: await fetch(`${server.origin}/api/upload?name=c.csv`, { method: 'POST', headers: auth, body: 'a\n' }),
      download: await fetch(`${server.origin}/api/download?path=${encodeURIComponent(join(dir, 'data', 'exports', 'cached.csv'))}`, { headers: auth }),
      trade: await fetch(server.url, { redirect: 'manual' }),
      page: await fetch(`${server.origin}/`, { headers: auth }),
      refused: await fetch(`${server.origin}/`),
      unknown: await fetch(`${server.origin}/api/nope`, { headers: auth }),
    };
    for (const [name, res] of Object.entries(answers)) expect(res.headers.get('cache-control'), name).toBe('no-store');
    expect((await fetch(`${server.origin}/assets/app.js`, { headers: auth })).headers.get('cache-control')).toBe('private, max-age=3600');
  });

  it('streams events over the WebSocket to an allowed origin only', async () => {
    const url = `${server.origin.replace('http', 'ws')}/api/events?token=${server.token}`;
    expect((await wsOpen(url, { Origin: 'http://evil.example' })).status).toBe(403);
    const { ws, status } = await wsOpen(url, { Origin: server.origin });
    expect(status).toBe(101);
    const got = new Promise<{ event: string; payload: { theme: string } }>((resolve) => {
      ws!.on('message', (m) => {
        const msg = JSON.parse(String(m)) as { event: string; payload: { theme: string } };
        if (msg.event === 'settings.changed') resolve(msg);
      });
    });
    await invoke({ method: 'settings.set', input: { theme: 'dark' } }, { 'x-tatra-token': server.token });
    expect((await got).payload.theme).toBe('dark');
    ws!.close();
  });

  it('refuses an event socket without the token or from a foreign Origin as it refuses any request: the same status, headers and text', async () => {
    const hostLine = `host: 127.0.0.1:${server.port}\r\n`;
    const upgrade = 'connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    const cases: [string, string, number][] = [
      ['no token', '', 401],
      ['a foreign Origin', `x-tatra-token: ${server.token}\r\norigin: http://evil.example\r\n`, 403],
    ];
    for (const [what, credentials, status] of cases) {
      const socket = await rawAnswer(`GET /api/events HTTP/1.1\r\n${hostLine}${credentials}${upgrade}\r\n`);
      const request = await rawAnswer(`GET /api/events HTTP/1.1\r\n${hostLine}${credentials}connection: close\r\n\r\n`);
      const invoke = await rawAnswer(`POST /api/invoke HTTP/1.1\r\n${hostLine}${credentials}content-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`);
      expect(socket.status, what).toBe(status);
      expect(socket, what).toEqual(request);
      expect(socket, what).toEqual(invoke);
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(socket.headers[k.toLowerCase()], `${what}: ${k}`).toBe(v);
    }
  });

  it('stores uploads in the data folder and serves only exports for download', async () => {
    const up = await fetch(`${server.origin}/api/upload?name=../../my%20file.csv`, { method: 'POST', headers: { 'x-tatra-token': server.token }, body: 'text,label\nhi,1\n' });
    expect(up.status).toBe(200);
    const { path, bytes } = (await up.json()) as { path: string; bytes: number };
    expect(path.startsWith(join(dir, 'data', 'uploads'))).toBe(true);
    // In a folder of its own, under the name the user knows (made safe), with no prefix.
    expect(basename(path)).toBe('my_file.csv');
    expect(basename(dirname(path))).toMatch(/^[0-9a-f]{8}$/);
    expect(bytes).toBe(16);
    const preview = await invoke({ method: 'jobs.preview', input: { path, taskId: 'sst2' } }, { 'x-tatra-token': server.token });
    expect(await preview.json()).toMatchObject({ ok: true, value: { columns: ['text', 'label'], rowCount: 1, goldValues: [{ value: '1', suggested: 'positive' }] } });
    // An upload is not an export: not downloadable, nor is any other file.
    for (const p of [path, join(dir, 'secret.txt'), '/etc/passwd']) {
      expect((await fetch(`${server.origin}/api/download?path=${encodeURIComponent(p)}`, { headers: { 'x-tatra-token': server.token } })).status).toBe(404);
    }
    mkdirSync(join(dir, 'data', 'exports'), { recursive: true });
    writeFileSync(join(dir, 'data', 'exports', 'x.csv'), 'a,b\n');
    const dl = await fetch(`${server.origin}/api/download?path=${encodeURIComponent(join(dir, 'data', 'exports', 'x.csv'))}`, { headers: { 'x-tatra-token': server.token } });
    expect(dl.status).toBe(200);
    expect(dl.headers.get('content-disposition')).toContain('attachment; filename="x.csv"');
    // A streamed download leaves with the headers of any answer.
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(dl.headers.get(k), k).toBe(v);
    // The exports folder itself, and a folder inside it, are no export: a clear 404, not an empty reply.
    mkdirSync(join(dir, 'data', 'exports', 'sub'), { recursive: true });
    for (const p of [join(dir, 'data', 'exports'), join(dir, 'data', 'exports', 'sub'), `${join(dir, 'data', 'exports')}/`]) {
      const res = await fetch(`${server.origin}/api/download?path=${encodeURIComponent(p)}`, { headers: { 'x-tatra-token': server.token } });
      expect(res.status, p).toBe(404);
      expect(await res.text()).toBe('no such export\n');
    }
    // A link in the exports folder that leads out, a path that climbs out of it, and an export that
    // is not there are the same 404, whatever lies at the other end.
    writeFileSync(join(dir, 'secret.txt'), 'no');
    symlinkSync(join(dir, 'secret.txt'), join(dir, 'data', 'exports', 'link.csv'));
    for (const p of [join(dir, 'data', 'exports', 'link.csv'), `${join(dir, 'data', 'exports')}/../../secret.txt`, join(dir, 'data', 'exports', 'gone.csv')]) {
      const res = await fetch(`${server.origin}/api/download?path=${encodeURIComponent(p)}`, { headers: { 'x-tatra-token': server.token } });
      expect(res.status, p).toBe(404);
      expect(await res.text()).toBe('no such export\n');
    }
  });

  it('says how to build the renderer when it is missing', async () => {
    const bare = await startServer({ host, port: 0, staticDir: join(dir, 'nothing-here'), token: 't0ken' });
    try {
      const res = await fetch(`${bare.origin}/`, { headers: { 'x-tatra-token': 't0ken' } });
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build:renderer');
    } finally {
      await bare.close();
    }
  });

  it('warns loudly when listening beyond loopback', async () => {
    const lines: string[] = [];
    const open = await startServer({ host, port: 0, hostname: '0.0.0.0', staticDir: dir, log: (l) => lines.push(l) });
    await open.close();
    expect(lines.join('\n')).toMatch(/WARNING: listening on 0\.0\.0\.0, not loopback/);
  });
});
