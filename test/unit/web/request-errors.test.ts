// A fault of the request itself, found by the framework (a body that is not JSON or is empty, a body
// over the route's limit, a malformed percent-escape in the target), is one HttpError with one
// status and one message (web/http-error.ts), whichever face answers: `tatra serve` sends it as
// text, `tatra api` as OpenAI's error, with the security headers on both. Both faces read JSON with
// the one parser (web/http-app.ts readJsonBodies), which refuses a body that would poison a
// prototype (a `__proto__` key, a `constructor.prototype`) wherever it sits in the body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../../electron/web/headers';
import { startBothFaces, type BothFaces } from '../../helpers/both-faces';

let faces: BothFaces;
const SERVE_LIMIT = 1024;

beforeAll(async () => {
  faces = await startBothFaces('tatra-request-errors-', { serve: { maxInvokeBytes: SERVE_LIMIT } });
});

afterAll(() => faces?.close());

interface Answer {
  status: number;
  message: string;
  code: string | null;
}

async function viaServe(path: string, body?: string): Promise<Answer> {
  const { serve } = faces;
  const init = body === undefined ? {} : { method: 'POST', body };
  const res = await fetch(`${serve.origin}${path}`, { ...init, headers: { 'x-tatra-token': serve.token, 'content-type': 'application/json' } });
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(res.headers.get(k), k).toBe(v);
  expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  return { status: res.status, message: (await res.text()).trimEnd(), code: null };
}

async function viaApi(path: string, body?: string): Promise<Answer> {
  const { api, key } = faces;
  const init = body === undefined ? {} : { method: 'POST', body };
  const res = await fetch(`${api.origin}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(res.headers.get(k), k).toBe(v);
  const { error } = (await res.json()) as { error: { message: string; code: string | null } };
  return { status: res.status, message: error.message, code: error.code };
}

describe("a request's own fault", () => {
  it.each([
    ['a body that is not JSON', '{"method": "tasks.list", ', 400, 'the request body is not JSON', 'invalid_json'],
    ['an empty body', '', 400, 'the request body is not JSON', 'invalid_json'],
  ])('%s: the same status and message from both faces', async (_what, body, status, message, code) => {
    expect(await viaServe('/api/invoke', body)).toEqual({ status, message, code: null });
    expect(await viaApi('/v1/chat/completions', body)).toEqual({ status, message, code });
  });

  const chat = (extra: string) => `{"model": "tatra/sst2", "messages": [{"role": "user", "content": "a good film"}], ${extra}}`;
  const invoke = (extra: string) => `{"method": "tasks.list", "input": {}, ${extra}}`;
  it.each([
    ['a __proto__ key', '"__proto__": {"polluted": true}'],
    ['a __proto__ key deep inside', '"tatra": {"__proto__": {"r": 9}}'],
    ['a constructor.prototype', '"constructor": {"prototype": {"polluted": true}}'],
  ])('a body with %s is refused by both faces alike, and nothing is polluted', async (_what, extra) => {
    const refused = { status: 400, message: 'the request body is not JSON' };
    expect(await viaServe('/api/invoke', invoke(extra))).toEqual({ ...refused, code: null });
    expect(await viaApi('/v1/chat/completions', chat(extra))).toEqual({ ...refused, code: 'invalid_json' });
    expect(await viaApi('/v1/classify', `{"model": "tatra/sst2", "inputs": ["x"], ${extra}}`)).toEqual({ ...refused, code: 'invalid_json' });
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    // The same bodies without the poison are answered.
    expect((await fetch(`${faces.api.origin}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${faces.key}` }, body: chat('"seed": 1') })).status).toBe(200);
  });

  it('a body over the route limit: a 413 naming the limit, from both faces', async () => {
    expect(await viaServe('/api/invoke', ' '.repeat(2 * SERVE_LIMIT))).toEqual({ status: 413, message: `the request body is over ${SERVE_LIMIT} bytes`, code: null });
    expect(await viaApi('/v1/chat/completions', ' '.repeat(5 * 1024 * 1024))).toEqual({ status: 413, message: `the request body is over ${4 * 1024 * 1024} bytes`, code: 'request_too_large' });
  });

  it.each(['/%E0%A4%A', '/api/%', '/v1/models/%E0%A4%A'])('a malformed percent-escape (%s): the same 400 from both faces', async (path) => {
    const message = 'the request target has a malformed percent-escape';
    expect(await viaServe(path)).toEqual({ status: 400, message, code: null });
    expect(await viaApi(path)).toEqual({ status: 400, message, code: 'invalid_url' });
  });
});
