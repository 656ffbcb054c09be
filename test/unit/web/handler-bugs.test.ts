// A handler's bug is a 500, never an exit. Each face gets test-only routes (the `testRoutes`
// option, behind the face's own checks) whose handlers throw, reject, or throw something that is
// not an Error; each is answered 500 in the face's shape, logged once with its control characters
// escaped, nothing is an unhandled rejection, and the server answers the next request.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../../electron/server/server';
import type { RunningApiService } from '../../../electron/service';
import { startBothFaces, type BothFaces } from '../../helpers/both-faces';

let faces: BothFaces;
let serve: RunningServer;
let api: RunningApiService;
let key = '';
const serveLogs: string[] = [];
const apiLogs: string[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => void unhandled.push(e);

// A terminal escape (retitles the window) and a carriage return in the error's message: the log must show them escaped.
const HOSTILE = 'bug \x1b]0;pwned\x07 here\r';

/** Routes whose handlers fail in every way a handler can. */
function buggyRoutes(prefix: string) {
  return (app: FastifyInstance) => {
    app.get(`${prefix}/throws`, () => {
      throw new TypeError(`${HOSTILE} (throws)`);
    });
    app.get(`${prefix}/rejects`, async () => {
      await new Promise((r) => setImmediate(r));
      throw new Error(`${HOSTILE} (rejects)`);
    });
    app.get(`${prefix}/throws-a-string`, async () => {
      throw `${HOSTILE} (a string)`;
    });
    app.post(`${prefix}/rejects-after-body`, async (request) => {
      await new Promise((r) => setImmediate(r));
      throw new RangeError(`${HOSTILE} (after ${JSON.stringify(request.body).length} bytes)`);
    });
  };
}

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  faces = await startBothFaces('tatra-handler-bugs-', {
    serve: { log: (l) => serveLogs.push(l), testRoutes: buggyRoutes('/api/test') },
    api: { log: (l) => apiLogs.push(l), testRoutes: buggyRoutes('/v1/test') },
  });
  ({ serve, api, key } = faces);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await faces?.close();
});

const ROUTES: [path: string, method: 'GET' | 'POST', kind: string][] = [
  ['throws', 'GET', '(throws)'],
  ['rejects', 'GET', '(rejects)'],
  ['throws-a-string', 'GET', '(a string)'],
  ['rejects-after-body', 'POST', '(after'],
];

/** The one log line about `kind`, checked for escaping. */
function oneEscapedLine(logs: string[], kind: string): string {
  const lines = logs.filter((l) => l.includes(kind));
  expect(lines).toHaveLength(1);
  const line = lines[0]!;
  // eslint-disable-next-line no-control-regex
  expect(line).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
  expect(line).toContain('\\u001b]0;pwned\\u0007');
  return line;
}

describe("a handler's bug", () => {
  it.each(ROUTES)('tatra serve: %s is a 500 in text, logged once, escaped; the server answers on', async (path, method, kind) => {
    const res = await fetch(`${serve.origin}/api/test/${path}`, {
      method,
      headers: { 'x-tatra-token': serve.token, 'content-type': 'application/json' },
      body: method === 'POST' ? JSON.stringify({ some: 'body' }) : undefined,
    });
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('internal error; the server logged the details\n');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const line = oneEscapedLine(serveLogs, kind);
    expect(line.startsWith('tatra serve: ')).toBe(true);
    const next = await fetch(`${serve.origin}/api/invoke`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-tatra-token': serve.token }, body: JSON.stringify({ method: 'tasks.list', input: {} }) });
    expect(next.status).toBe(200);
    expect(unhandled).toEqual([]);
  });

  it.each(ROUTES)("tatra api: %s is a 500 in OpenAI's shape, logged once, escaped; the server answers on", async (path, method, kind) => {
    const res = await fetch(`${api.origin}/v1/test/${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: method === 'POST' ? JSON.stringify({ some: 'body' }) : undefined,
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(body.error).toMatchObject({ type: 'server_error', code: 'internal' });
    // The caller learns nothing of the bug; the operator's log has it.
    expect(body.error.message).not.toContain('pwned');
    const line = oneEscapedLine(apiLogs, kind);
    expect(line.startsWith('tatra api: ')).toBe(true);
    const next = await fetch(`${api.origin}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(next.status).toBe(200);
    expect(unhandled).toEqual([]);
  });

  it('is answered only behind the face\'s own checks: no token or key, no handler', async () => {
    expect((await fetch(`${serve.origin}/api/test/throws`)).status).toBe(401);
    expect((await fetch(`${api.origin}/v1/test/throws`)).status).toBe(401);
  });
});
