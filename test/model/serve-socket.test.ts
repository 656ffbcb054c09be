// A real `tatra serve` process against hostile WebSocket clients on /api/events: a frame over the
// payload limit and a text frame that is not UTF-8 cost the sender its own socket; the process,
// its HTTP API and every other client stay up. (Before, either killed the process with an
// unhandled 'error' event.) Lives with the model tests because it spawns the built CLI.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tatra-serve-ws-'));
let child: ChildProcess;
let origin = '';
let token = '';
let stderr = '';
let exitCode: number | null | undefined;

beforeAll(async () => {
  const web = join(dir, 'web');
  mkdirSync(web, { recursive: true });
  writeFileSync(join(web, 'index.html'), '<!doctype html><title>t</title>');
  child = spawn(process.execPath, [join(repoRoot, 'bin', 'tatra.js'), 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--static-dir', web, '--threads', '1'], {
    cwd: repoRoot,
    env: { ...process.env, TATRA_THREADS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.on('exit', (code) => (exitCode = code));
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving at (http:\/\/\S+)/.exec(out);
      if (m) res(m[1]!);
    });
    child.once('exit', (code) => rej(new Error(`tatra serve exited ${code}: ${stderr}`)));
  });
  const u = new URL(url);
  origin = u.origin;
  token = u.searchParams.get('token')!;
});

afterAll(async () => {
  if (exitCode === undefined) {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  rmSync(dir, { recursive: true, force: true });
});

function connect(): Promise<WebSocket> {
  return new Promise((res, rej) => {
    const ws = new WebSocket(`${origin.replace('http', 'ws')}/api/events`, { headers: { 'x-tatra-token': token } });
    // The server greets every client; waiting for it means the socket is fully set up.
    ws.once('message', () => res(ws));
    ws.once('error', rej);
  });
}

function closed(ws: WebSocket): Promise<number> {
  return new Promise((res) => {
    ws.on('error', () => undefined);
    ws.once('close', (code) => res(code));
  });
}

async function apiAlive(): Promise<boolean> {
  const r = await fetch(`${origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': token },
    body: JSON.stringify({ method: 'tasks.list', input: {} }),
  });
  return r.status === 200 && ((await r.json()) as { ok: boolean }).ok;
}

it('a frame over the payload limit closes only that client (1009); the server and other clients live on', async () => {
  const bystander = await connect();
  const attacker = await connect();
  const attackerClosed = closed(attacker);
  attacker.send(Buffer.alloc(200 * 1024, 0x61));
  expect(await attackerClosed).toBe(1009);
  expect(await apiAlive()).toBe(true);
  expect(exitCode).toBeUndefined();
  expect(bystander.readyState).toBe(WebSocket.OPEN);
  // The bystander still talks to the same process: a ping round trip.
  await new Promise<void>((res) => {
    bystander.once('pong', () => res());
    bystander.ping();
  });
  const again = await connect();
  again.close();
  bystander.close();
});

it('a text frame of invalid UTF-8 closes only that client (1007); the server lives on', async () => {
  const bystander = await connect();
  const attacker = await connect();
  const attackerClosed = closed(attacker);
  // ws sends a Buffer as it is; binary: false makes it a text frame the server must validate.
  attacker.send(Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28, 0x7d]), { binary: false });
  expect(await attackerClosed).toBe(1007);
  expect(await apiAlive()).toBe(true);
  expect(exitCode).toBeUndefined();
  expect(bystander.readyState).toBe(WebSocket.OPEN);
  bystander.close();
  expect(stderr).not.toMatch(/Unhandled|TypeError|RangeError: Invalid/);
});
