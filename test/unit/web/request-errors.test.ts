// A fault of the request itself, found by the framework (a body that is not JSON or is empty, a body
// over the route's limit, a malformed percent-escape in the target), is one HttpError with one
// status and one message (web/http-error.ts), whichever face answers: `tatra serve` sends it as
// text, `tatra api` as OpenAI's error, with the security headers on both.
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
