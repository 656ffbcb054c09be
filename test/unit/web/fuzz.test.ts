// HTTP fuzzing of both faces, in process, on raw sockets: random and mutated requests against
// `tatra serve` and `tatra api` (methods, paths, duplicated, huge and malformed headers, bodies of
// the wrong type, size and length, chunked bodies that stop, clients that go away at every stage,
// WebSocket frames, streams whose reader stops reading). Afterwards each server still answers, its
// memory stayed bounded, nothing logged a stack trace, nothing was an unhandled rejection, and no
// answer was a 5xx but the documented 503 of a shutdown.
//
// Its own vitest project (`npx vitest run --project fuzz`). Budget: TATRA_FUZZ_SECONDS (default 60)
// of new cases, drawn from a fixed seed: every run plays the same cases in the same order, and the
// cases a run reaches within its budget are a prefix of that sequence. TATRA_FUZZ_SEED=N plays seed
// N's cases instead, TATRA_FUZZ_SEED=random draws a seed; the seed is printed and named in every
// failure, with the number of the case that failed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../../electron/server/server';
import type { RunningApiService } from '../../../electron/service';
import { startBothFaces, type BothFaces } from '../../helpers/both-faces';

const SECONDS = Number(process.env.TATRA_FUZZ_SECONDS ?? 60);
const SEED = fuzzSeed(process.env.TATRA_FUZZ_SEED);
/** Clients at once: enough to overlap requests, few enough for a shared two-core machine. */
const CLIENTS = 4;

/** mulberry32: a small seeded PRNG, so a failing run can be repeated exactly. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]!, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof prng>;

function fuzzSeed(setting: string | undefined): number {
  if (setting === undefined || setting === '') return 1;
  if (setting === 'random') return Math.floor(Math.random() * 2 ** 31);
  const seed = Number(setting);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`TATRA_FUZZ_SEED must be a whole number or "random", not ${JSON.stringify(setting)}`);
  return seed;
}

let faces: BothFaces;
let dir = '';
let serve: RunningServer;
let api: RunningApiService;
let key = '';
const logs: { face: string; line: string }[] = [];
const unhandled: unknown[] = [];
/** Every client connection still open: an unhandled rejection ends them all (the request that caused it would never be answered). */
const live = new Set<Socket>();
const onUnhandled = (e: unknown) => {
  unhandled.push(e);
  for (const socket of live) socket.destroy();
};

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  faces = await startBothFaces('tatra-fuzz-', {
    web: { 'assets/app.js': 'console.log(1)', 'assets/big.js': Buffer.alloc(2 * 1024 * 1024, 0x61) },
    // A small upload limit, so uploads reach it within the budget.
    serve: { maxUploadBytes: 256 * 1024, maxInvokeBytes: 256 * 1024, log: (line) => logs.push({ face: 'serve', line }) },
    api: {
      answer: (c) => (/good/.test(c) ? 'positive' : 'negative'),
      contextSize: 2048,
      maxQueue: 6,
      concurrency: 2,
      log: (line) => logs.push({ face: 'api', line }),
    },
  });
  ({ dir, serve, api, key } = faces);
  mkdirSync(join(dir, 'serve', 'exports'), { recursive: true });
  writeFileSync(join(dir, 'serve', 'exports', 'big.csv'), Buffer.alloc(2 * 1024 * 1024, 0x62));
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await faces?.close();
});

// ---------------------------------------------------------------------------------------------
// What a case is made of

const METHODS = ['GET', 'GET', 'POST', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'FOO', 'get', 'CONNECT', 'PROPFIND'];
const SERVE_PATHS = ['/', '/index.html', '/assets/app.js', '/assets/big.js', '/assets/nope.js', '/evaluate/x', '/api/invoke', '/api/upload?name=x.csv', '/api/upload?name=../../../etc/passwd', '/api/download?path=x', '/api/events', '/api/nothing', '/?token=wrong'];
const API_PATHS = ['/healthz', '/metrics', '/v1/models', '/v1/models/tatra%2Fsst2', '/v1/models/nope', '/v1/chat/completions', '/v1/classify', '/v1/embeddings', '/'];
const HOSTILE_PATHS = ['//x:99999/', 'http://[::1:99999/v1/models', '//[/', 'http://:/', '*', '/%E0%A4%A', '/%', '/%00', '/..%2f..%2fetc%2fpasswd', '/a%5cb', '/\u00e9', `/${'a'.repeat(9000)}`, '/v1/models/%E0%A4%A', '/api/download?path=%2Fetc%2Fpasswd', '/?&&&==&', 'http://127.0.0.1/v1/models'];
const SAFE_INVOKE = ['tasks.list', 'app.info', 'settings.get', 'jobs.list', 'jobs.get', 'jobs.preview', 'classify.get', 'experiments.list', 'models.list', 'no.such', '__proto__', 'constructor'];

function randomText(rng: Rng, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(rng.chance(0.9) ? 32 + rng.int(95) : rng.int(0x3000));
  return s;
}

function randomJson(rng: Rng, depth = 0): unknown {
  const k = rng.int(depth > 3 ? 5 : 8);
  switch (k) {
    case 0:
      return null;
    case 1:
      return rng.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, NaN]);
    case 2:
      return randomText(rng, rng.int(20));
    case 3:
      return rng.chance(0.5);
    case 4:
      return rng.pick(['', 'positive', 'tatra/sst2', 'a good film', '\u0000\u001b[2J']);
    case 5:
      return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: rng.int(4) }, () => [rng.pick(['model', 'messages', 'inputs', 'seed', 'stream', 'tatra', 'n', 'role', 'content', 'method', 'input', '__proto__', 'x']), randomJson(rng, depth + 1)]));
  }
}

/** A body for `path`: often well-formed for the route, often mutated, sometimes nonsense. */
function bodyFor(rng: Rng, path: string): Buffer {
  let value: unknown;
  const valid = rng.chance(0.5);
  if (path.startsWith('/v1/chat')) {
    value = valid
      ? { model: rng.pick(['tatra/sst2', 'tatra/nope', 'gpt-4o']), messages: [{ role: 'user', content: rng.pick(['a good film', 'a dull film', '', 'x'.repeat(3000)]) }], stream: rng.chance(0.5), seed: rng.pick([1, 2, 1.5, -1, 'x']), tatra: rng.chance(0.3) ? { r: rng.int(4), early_stop: true } : undefined }
      : randomJson(rng);
  } else if (path.startsWith('/v1/classify')) {
    value = valid ? { model: 'tatra/sst2', inputs: Array.from({ length: 1 + rng.int(rng.chance(0.1) ? 200 : 5) }, (_, i) => (i % 3 === 0 ? 'a good one' : `meh ${i}`)), stream: rng.chance(0.5) } : randomJson(rng);
  } else if (path.startsWith('/api/invoke')) {
    value = valid ? { method: rng.pick(SAFE_INVOKE), input: rng.chance(0.5) ? {} : randomJson(rng) } : randomJson(rng);
  } else {
    value = randomJson(rng);
  }
  let text = JSON.stringify(value) ?? 'undefined';
  // Mutations: cut, flip a byte, wrap in garbage, or random bytes altogether.
  const m = rng.int(10);
  if (m === 0) text = text.slice(0, rng.int(text.length + 1));
  else if (m === 1 && text.length > 0) {
    const i = rng.int(text.length);
    text = text.slice(0, i) + String.fromCharCode(rng.int(256)) + text.slice(i + 1);
  } else if (m === 2) return Buffer.from(Array.from({ length: rng.int(4096) }, () => rng.int(256)));
  else if (m === 3) text = `${'['.repeat(rng.int(5000))}1`;
  return Buffer.from(text, 'utf8');
}

interface Case {
  face: 'serve' | 'api';
  port: number;
  /** What to write, in parts (the client may stop between any two). */
  parts: Buffer[];
  /**
   * complete: read the whole answer (the request says Connection: close); status: read the status
   * line, then go; cut: go after writing `cutAfter` parts; stall: read a little, stop reading,
   * then go (a stream whose reader stops).
   */
  mode: 'complete' | 'status' | 'cut' | 'stall';
  cutAfter: number;
  /** Seeds the client's own choices while it plays (reset or close, how long to stall). */
  seed: number;
  describe: string;
}

function headerLines(rng: Rng, face: 'serve' | 'api', port: number): string[] {
  const h: string[] = [];
  const hostHeader = rng.chance(0.9) ? `127.0.0.1:${port}` : rng.pick(['evil.example', '', 'localhost', '[::1]:1', 'a:b:c', '\u00ff']);
  if (rng.chance(0.95)) h.push(`Host: ${hostHeader}`);
  if (face === 'serve') {
    if (rng.chance(0.75)) h.push(rng.chance(0.8) ? `x-tatra-token: ${serve.token}` : `Cookie: tatra_token_${port}=${rng.chance(0.5) ? serve.token : 'x'}; a=%E0%A4%A`);
    if (rng.chance(0.3)) h.push(`Origin: ${rng.pick([serve.origin, 'http://evil.example', 'null', ''])}`);
  } else {
    if (rng.chance(0.75)) h.push(`Authorization: ${rng.chance(0.85) ? `Bearer ${key}` : rng.pick(['Bearer', 'Basic abc', `Bearer ${key} extra`, 'bearer    x'])}`);
    if (rng.chance(0.05)) h.push('Origin: http://evil.example');
  }
  if (rng.chance(0.7)) h.push(`Content-Type: ${rng.pick(['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '@@@', 'application/json; charset=latin-1'])}`);
  // Duplicated, huge and malformed headers.
  if (rng.chance(0.05)) h.push(`X-Big: ${'b'.repeat(rng.pick([100, 8000, 20000, 70000]))}`);
  if (rng.chance(0.05)) h.push('Content-Type: text/plain', 'Content-Type: application/json');
  if (rng.chance(0.03)) h.push('Authorization: Bearer a', 'Authorization: Bearer b');
  // (A Transfer-Encoding here announces a body the case may not send: such a client only ever cuts.)
  if (rng.chance(0.03)) h.push(rng.pick(['no colon here', ': empty name', 'X-Ctl: a\u0001b', 'X-Sp ace: 1', 'X-Nl: a\rb', 'Transfer-Encoding: gzip, chunked', 'Expect: 100-continue', 'Upgrade: h2c', 'Connection: Upgrade, HTTP2-Settings']));
  if (rng.chance(0.02)) for (let i = 0; i < 300; i++) h.push(`X-Many-${i}: ${i}`);
  return h;
}

function makeCase(rng: Rng): Case {
  const face = rng.chance(0.5) ? 'serve' : 'api';
  const port = face === 'serve' ? serve.port : api.port;
  const paths = face === 'serve' ? SERVE_PATHS : API_PATHS;
  let path = rng.chance(0.85) ? rng.pick(paths) : rng.pick(HOSTILE_PATHS);
  if (rng.chance(0.1)) path += rng.pick(['?', '#x', '/', '//', '/..', '%2F', `?token=${serve.token}`, '?a=1&a=2']);
  const method = rng.chance(0.9) ? rng.pick(METHODS) : randomText(rng, 1 + rng.int(8)).replace(/[\s]/g, 'X');
  const version = rng.chance(0.95) ? 'HTTP/1.1' : rng.pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 extra', 'http/1.1', '']);
  const headers = headerLines(rng, face, port);
  const wantsBody = method === 'POST' || method === 'PUT' || method === 'PATCH' || rng.chance(0.1);
  const body = wantsBody ? bodyFor(rng, path) : Buffer.alloc(0);
  const framing = rng.int(10);
  const parts: Buffer[] = [];
  let honest = true;
  let bodyParts: Buffer[] = [];
  if (wantsBody && framing < 6) {
    headers.push(`Content-Length: ${body.length}`);
    bodyParts = [body];
  } else if (wantsBody && framing < 8) {
    headers.push('Transfer-Encoding: chunked');
    const chunks: Buffer[] = [];
    for (let i = 0; i < body.length; i += 1 + rng.int(512)) {
      const c = body.subarray(i, i + 1 + rng.int(512));
      chunks.push(Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]));
    }
    // A chunked body that stops: no last chunk.
    if (rng.chance(0.3)) honest = false;
    else chunks.push(Buffer.from(rng.chance(0.95) ? '0\r\n\r\n' : 'zz\r\n\r\n'));
    bodyParts = chunks;
  } else if (wantsBody && framing === 8) {
    // A length that lies: longer than the body (the server waits for the rest), or shorter.
    const longer = rng.chance(0.5);
    headers.push(`Content-Length: ${longer ? body.length + 1 + rng.int(10_000) : Math.max(0, body.length - 1 - rng.int(10))}`);
    if (longer) honest = false;
    bodyParts = [body];
  } else if (wantsBody) {
    headers.push(rng.pick([`Content-Length: ${body.length}`, 'Content-Length: -1', 'Content-Length: 1e3', `Content-Length: ${body.length}, ${body.length + 1}`, 'Content-Length: 99999999999999999999']));
    if (rng.chance(0.5)) headers.push('Content-Length: 3');
    honest = false;
    bodyParts = [body];
  }
  headers.push('Connection: close');
  parts.push(Buffer.from(`${method} ${path} ${version}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'));
  // A head sent in two pieces now and then (a client that stops in the middle of it).
  if (rng.chance(0.1)) {
    const head = parts.pop()!;
    const at = rng.int(head.length);
    parts.push(head.subarray(0, at), head.subarray(at));
  }
  parts.push(...bodyParts);
  if (headers.some((l) => l.startsWith('Transfer-Encoding: gzip'))) honest = false;
  const mode = !honest ? 'cut' : rng.pick(['complete', 'complete', 'complete', 'status', 'cut', 'stall'] as const);
  return { face, port, parts, mode, cutAfter: 1 + rng.int(parts.length), seed: rng.int(2 ** 31), describe: `${face} ${method} ${path.slice(0, 80)} ${version} [${mode}]` };
}

/** A WebSocket client on `tatra serve`'s /api/events that sends random frames. */
function wsCase(rng: Rng): Case {
  const key64 = Buffer.from(Array.from({ length: 16 }, () => rng.int(256))).toString('base64');
  const auth = rng.chance(0.85) ? `x-tatra-token: ${serve.token}\r\n` : '';
  const origin = rng.chance(0.8) ? `origin: ${serve.origin}\r\n` : rng.chance(0.5) ? 'origin: http://evil.example\r\n' : '';
  const head = Buffer.from(`GET /api/events HTTP/1.1\r\nhost: 127.0.0.1:${serve.port}\r\n${auth}${origin}connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: ${rng.chance(0.9) ? 13 : 8}\r\nsec-websocket-key: ${key64}\r\n\r\n`);
  const frames: Buffer[] = [];
  for (let i = rng.int(5); i > 0; i--) {
    const kind = rng.int(6);
    const mask = Buffer.from([rng.int(256), rng.int(256), rng.int(256), rng.int(256)]);
    const masked = (opcode: number, payload: Buffer, fin = true) => {
      const len = payload.length;
      const lenBytes = len < 126 ? Buffer.from([0x80 | len]) : len < 65536 ? Buffer.from([0x80 | 126, len >> 8, len & 0xff]) : Buffer.concat([Buffer.from([0x80 | 127, 0, 0, 0, 0]), Buffer.from([(len >>> 24) & 0xff, (len >>> 16) & 0xff, (len >>> 8) & 0xff, len & 0xff])]);
      const out = Buffer.from(payload.map((b, j) => b ^ mask[j % 4]!));
      return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode]), lenBytes, mask, out]);
    };
    if (kind === 0) frames.push(masked(1, Buffer.from(JSON.stringify(randomJson(rng)))));
    else if (kind === 1) frames.push(masked(1, Buffer.alloc(70 * 1024, 0x61))); // over maxPayload (64 KiB)
    else if (kind === 2) frames.push(masked(rng.pick([3, 4, 5, 11, 15]), Buffer.from('x'))); // reserved opcodes
    else if (kind === 3) frames.push(Buffer.from([0x81, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f])); // unmasked: a protocol error
    else if (kind === 4) frames.push(masked(1, Buffer.from([0xff, 0xfe, 0xfd]))); // invalid UTF-8
    else frames.push(masked(9, Buffer.from('ping')), masked(1, Buffer.from('part'), false));
  }
  return { face: 'serve', port: serve.port, parts: [head, ...frames], mode: rng.pick(['status', 'cut', 'stall'] as const), cutAfter: 1 + rng.int(frames.length + 1), seed: rng.int(2 ** 31), describe: `serve websocket, ${frames.length} frames` };
}

/** A stream whose reader stops reading: a big static file or export, a streamed batch or chat. */
function stalledStreamCase(rng: Rng): Case {
  const which = rng.int(4);
  const serveHead = (path: string) => `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${serve.port}\r\nx-tatra-token: ${serve.token}\r\nconnection: close\r\n\r\n`;
  const apiPost = (path: string, body: unknown) => {
    const text = JSON.stringify(body);
    return `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${api.port}\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
  };
  const head =
    which === 0
      ? serveHead('/assets/big.js')
      : which === 1
        ? serveHead(`/api/download?path=${encodeURIComponent(join(dir, 'serve', 'exports', 'big.csv'))}`)
        : which === 2
          ? apiPost('/v1/classify', { model: 'tatra/sst2', inputs: Array.from({ length: 300 }, (_, i) => `a good input ${i} ${'x'.repeat(200)}`), stream: true })
          : apiPost('/v1/chat/completions', { model: 'tatra/sst2', messages: [{ role: 'user', content: `a good film ${rng.int(1000)}` }], stream: true });
  return { face: which < 2 ? 'serve' : 'api', port: which < 2 ? serve.port : api.port, parts: [Buffer.from(head)], mode: 'stall', cutAfter: 1, seed: rng.int(2 ** 31), describe: `stalled reader #${which}` };
}

// ---------------------------------------------------------------------------------------------
// Running a case

/**
 * Plays a case on a raw socket and resolves with the status of the first answer (0: none came).
 * Every wait is on the server's progress (an answer, a close) or on our own writes; the client
 * itself decides when to go.
 */
function play(c: Case): Promise<number> {
  const rng = prng(c.seed);
  return new Promise((resolve) => {
    const socket: Socket = connect(c.port, '127.0.0.1');
    live.add(socket);
    socket.once('close', () => live.delete(socket));
    let answer = Buffer.alloc(0);
    let finished = false;
    const status = () => Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer.subarray(0, 64).toString('latin1'))?.[1] ?? 0);
    const finish = () => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve(status());
    };
    socket.on('error', () => undefined);
    socket.on('close', finish);
    let stalled = false;
    socket.on('data', (d: Buffer) => {
      if (answer.length < 64 * 1024) answer = Buffer.concat([answer, d]);
      if (c.mode === 'status' && /\r\n\r\n/.test(answer.toString('latin1'))) finish();
      if (c.mode === 'stall' && !stalled) {
        // The reader stops: nothing more is read for a while (the server's writes back up), then it goes.
        stalled = true;
        socket.pause();
        setTimeout(finish, 50 + rng.int(200));
      }
    });
    socket.on('connect', () => {
      const write = (i: number) => {
        if (finished) return;
        if (c.mode === 'cut' && i >= c.cutAfter) {
          if (rng.chance(0.5)) socket.resetAndDestroy();
          else finish();
          return;
        }
        if (i >= c.parts.length) {
          // A half-close now and then: the client is done sending but still reads.
          if (c.mode === 'complete' && rng.chance(0.2)) socket.end();
          return;
        }
        socket.write(c.parts[i]!, () => write(i + 1));
      };
      write(0);
    });
  });
}

async function stillAnswers(): Promise<void> {
  const invoked = await fetch(`${serve.origin}/api/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-tatra-token': serve.token }, body: JSON.stringify({ method: 'tasks.list', input: {} }) });
  expect(invoked.status).toBe(200);
  await invoked.arrayBuffer();
  const page = await fetch(`${serve.origin}/`, { headers: { 'x-tatra-token': serve.token } });
  expect(page.status).toBe(200);
  await page.arrayBuffer();
  const models = await fetch(`${api.origin}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  expect(models.status).toBe(200);
  await models.arrayBuffer();
  const chat = await fetch(`${api.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tatra/sst2', messages: [{ role: 'user', content: 'a good film, after the fuzz' }] }),
  });
  expect(chat.status).toBe(200);
  await chat.arrayBuffer();
}

describe('fuzzing both faces', () => {
  it(`random and mutated requests for ${SECONDS} s leave both servers answering, bounded and quiet (seed ${SEED})`, { timeout: (SECONDS + 240) * 1000 }, async () => {
    console.log(`HTTP fuzz: seed ${SEED} (TATRA_FUZZ_SEED=${SEED} repeats this run), ${SECONDS} s (TATRA_FUZZ_SECONDS)`);
    const rng = prng(SEED);
    const failures: string[] = [];
    let made = 0;
    let cases = 0;
    const counts = new Map<number, number>();
    /** Plays a case just drawn from the seed's one generator: the nth case drawn is the same in every run, whichever client draws it. */
    const run = async (c: Case) => {
      const number = ++made;
      const status = await play(c);
      cases++;
      counts.set(status, (counts.get(status) ?? 0) + 1);
      if (status >= 500) failures.push(`${status} for case #${number}: ${c.describe}`);
    };
    // Warm up (first requests load code and fill caches), then measure memory from here.
    await stillAnswers();
    for (let i = 0; i < 100; i++) await run(makeCase(rng));
    const before = process.memoryUsage();
    const until = Date.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < until && failures.length < 20 && unhandled.length === 0) {
          const kind = rng.int(20);
          await run(kind === 0 ? wsCase(rng) : kind === 1 ? stalledStreamCase(rng) : makeCase(rng));
        }
      }),
    );
    const after = process.memoryUsage();
    console.log(`HTTP fuzz: ${cases} cases; statuses ${JSON.stringify(Object.fromEntries([...counts].sort((a, b) => a[0] - b[0])))}; rss ${(before.rss / 2 ** 20).toFixed(0)} -> ${(after.rss / 2 ** 20).toFixed(0)} MiB, heap ${(before.heapUsed / 2 ** 20).toFixed(0)} -> ${(after.heapUsed / 2 ** 20).toFixed(0)} MiB`);

    expect(unhandled.map(String), `seed ${SEED}`).toEqual([]);
    expect(failures, `seed ${SEED}`).toEqual([]);
    await stillAnswers();
    // Every admitted request is released: nothing is stuck holding a queue slot (else this waits
    // until the test's timeout and fails there).
    await api.admission.idle();
    // Bounded memory: a generous factor (the test runner's own memory is in these numbers too).
    expect(after.rss, `seed ${SEED}`).toBeLessThan(before.rss * 2 + 256 * 2 ** 20);
    expect(after.heapUsed, `seed ${SEED}`).toBeLessThan(before.heapUsed * 3 + 128 * 2 ** 20);
    expect(unhandled, `seed ${SEED}`).toEqual([]);
    // Nothing logged a stack trace (a bug); only notes such as a protocol error on the event socket.
    const stacks = logs.filter((l) => /\n\s+at /.test(l.line) || /Error:/.test(l.line));
    expect(stacks.map((l) => `${l.face}: ${l.line.slice(0, 300)}`), `seed ${SEED}`).toEqual([]);
  });

  it('during a shutdown, answers are the documented 503 or complete, never another 5xx', async () => {
    const statuses: number[] = [];
    const burst = Array.from({ length: 12 }, (_, i) =>
      play(
        {
          face: 'api',
          port: api.port,
          parts: [
            Buffer.from(
              (() => {
                const text = JSON.stringify({ model: 'tatra/sst2', messages: [{ role: 'user', content: `a good film at shutdown ${i}` }], stream: i % 2 === 0 });
                return `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${api.port}\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
              })(),
            ),
          ],
          mode: 'complete',
          cutAfter: 1,
          seed: i,
          describe: `shutdown ${i}`,
        },
      ).then((s) => void statuses.push(s)),
    );
    await api.close(0);
    await Promise.all(burst);
    // 0: the connection was refused or closed once the server had stopped listening.
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
    expect(statuses.length).toBe(12);
  });
});
