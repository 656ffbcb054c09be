// Servers that answer what they like, through the one HTTP client (electron/net/http.ts):
// - every answer is checked against a schema: JSON null, arrays, scalars and objects of the wrong
//   shape, at every endpoint the remote backend, the probes and the Hugging Face lookup read, for
//   every server kind, end in one line naming the server and what was wrong (never a TypeError);
// - the API key is redacted from everything a server sends back (errors of every status, HTML
//   pages, headers, answers), in every spelling (as sent, JSON-escaped, URL-encoded).
import { describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { connectRemoteBackend } from '../../../electron/remote';
import { HttpFailure, REDACTED, httpJson, redactKey } from '../../../electron/net/http';
import { resolveModelUri } from '../../../electron/models/resolve';
import { z } from 'zod';
import { chatCompletion, fakeServerScope, json, type RecordedRequest, type Route } from '../remote/fake-server';
import { failure } from '../../helpers/failure';

const { serve, track } = fakeServerScope();
const prompt = { system: '', user: 'Text: "fine"\nAnswer:' };
const models = { object: 'list', data: [{ id: 'm', object: 'model' }] };

/** Answers that are JSON but not what any endpoint promises. */
const BAD_VALUES: unknown[] = [null, [], [null], 'text', 0, -1, true, false, {}, { data: null }, { error: null }, { choices: null }, { choices: [] }, { choices: [null] }, { choices: [{}] }, { choices: [{ message: null }] }, { choices: [{ message: { content: 7 } }] }, { content: null }, { content: ['a'] }, { message: null }, { message: { content: {} } }, { prompt: null }, { tokens: 'abc' }, { count: '3' }, { __proto__: null, constructor: 1 }, JSON.parse('{"__proto__": {"content": "x"}}')];

function expectOneLine(e: Error, where: string): void {
  expect(e, e.stack).toBeInstanceOf(UserError);
  expect(e.message).not.toContain('\n');
  expect(e.message).toContain(where);
  expect(e.message).not.toMatch(/Cannot read|undefined is not|is not a function|TypeError/);
  expect(e.message.length).toBeLessThan(400);
}

/** The routes of one server kind, with `bad` answering the endpoint under test. */
function kindRoutes(kind: 'llama-server' | 'vllm' | 'ollama' | 'generic', endpoint: string, bad: Route): Record<string, Route> {
  const base: Record<string, Route> = { 'GET /v1/models': models };
  if (kind === 'llama-server') {
    Object.assign(base, {
      'GET /props': { default_generation_settings: { n_ctx: 4096 }, total_slots: 2, build_info: 'b1' },
      'POST /apply-template': { prompt: '<s>fine' },
      'POST /tokenize': { tokens: [1, 2, 3] },
      'POST /completion': { content: 'positive', tokens_evaluated: 3, tokens_predicted: 1 },
    });
  } else if (kind === 'vllm') {
    Object.assign(base, {
      'GET /v1/models': { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'vllm', max_model_len: 4096 }] },
      'GET /version': { version: '0.12.0' },
      'POST /tokenize': { count: 3 },
      'POST /v1/chat/completions': chatCompletion('positive', 'm'),
    });
  } else if (kind === 'ollama') {
    Object.assign(base, { 'GET /api/version': { version: '0.6.0' }, 'POST /api/chat': { message: { role: 'assistant', content: 'positive' }, prompt_eval_count: 3, eval_count: 1 } });
  } else {
    base['POST /v1/chat/completions'] = chatCompletion('positive', 'm');
  }
  base[endpoint] = bad;
  return base;
}

const ENDPOINTS: Array<[kind: 'llama-server' | 'vllm' | 'ollama' | 'generic', endpoint: string, call: 'probe' | 'generate' | 'count']> = [
  ['generic', 'GET /v1/models', 'probe'],
  ['generic', 'POST /v1/chat/completions', 'generate'],
  ['llama-server', 'POST /apply-template', 'generate'],
  ['llama-server', 'POST /completion', 'generate'],
  ['llama-server', 'POST /tokenize', 'count'],
  ['vllm', 'POST /v1/chat/completions', 'generate'],
  ['ollama', 'POST /api/chat', 'generate'],
];

describe('every server answer is checked against a schema', () => {
  it.each(ENDPOINTS)('%s %s: each of the bad answers is one line naming the server', async (kind, endpoint, call) => {
    let checked = 0;
    for (const bad of BAD_VALUES) {
      // Values the endpoint accepts as its shape are not bad for it (e.g. {} for the kind probes).
      const s = await serve(kindRoutes(kind, endpoint, bad));
      const where = `${s.origin}/v1`;
      const run = async () => {
        const b = track(await connectRemoteBackend({ urls: [where], model: 'm', maxAttempts: 1, backoffBaseMs: 1, backoffMaxMs: 2, reprobeMs: 5, downTimeoutMs: 200 }));
        if (call === 'generate') await b.generate([{ prompt, maxTokens: 4, grammar: 'root ::= "positive" | "negative"' }]);
        else if (call === 'count') await b.countPromptTokens(prompt);
      };
      const outcome = await run().then(
        () => null,
        (e: unknown) => e as Error,
      );
      if (outcome === null) {
        // Only an answer that fits: the tokenizer endpoint's {"tokens": […]} or an empty object where the answer is optional.
        continue;
      }
      expectOneLine(outcome, where);
      checked++;
    }
    // Most of the bad answers must have been refused (a few fit some endpoint's shape by design).
    expect(checked).toBeGreaterThanOrEqual(BAD_VALUES.length - 4);
  });

  it('JSON null from /v1/models names the server and the problem', async () => {
    const s = await serve({ 'GET /v1/models': null });
    const e = await failure(connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'm' }));
    expect(e.message).toBe(`${s.origin}/v1 sent an answer TATRA Studio cannot use (/v1/models: the answer: expected object, received null)`);
  });

  it('the Hugging Face lookup: null, an array or a wrong siblings list is one line', async () => {
    for (const bad of [null, [], 'x', { siblings: null }, { siblings: [{ rfilename: 3 }] }, { siblings: 'all' }]) {
      const s = await serve({ 'GET /api/models/u/m': bad });
      const e = await failure(resolveModelUri('hf:u/m:Q4_K_M', { hfEndpoint: s.origin }));
      expect(e).toBeInstanceOf(UserError);
      expect(e.message).toMatch(new RegExp(`^127\\.0\\.0\\.1:\\d+ sent an answer TATRA Studio cannot use \\(/api/models/u/m: `));
      expect(e.message).not.toContain('\n');
    }
  });

  it('httpJson: a schema failure is an HttpFailure of kind bad-answer, not retryable', async () => {
    const s = await serve({ 'GET /x': { a: 1 } });
    const e = await failure(httpJson({ method: 'GET', url: `${s.origin}/x`, timeoutMs: 2000, answer: z.object({ a: z.string() }) }));
    expect(e).toBeInstanceOf(HttpFailure);
    expect((e as HttpFailure).kind).toBe('bad-answer');
    expect((e as HttpFailure).retryable).toBe(false);
    expect(e.message).toBe('/x: a: expected string, received number');
  });
});

// Keys with characters that JSON or a URL spell differently.
const KEYS = ['sk-proj-AbCdEf0123456789xyz', 'key/with"quote\\and/slash', 'a b&c=d%e<>', 'tok_9f8e7d6c5b4a'];

/** Ways a server can send the key back. */
const LEAKS: Array<[what: string, route: (key: string) => Route]> = [
  ['401 error.message', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => json(res, 401, { error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error' } })],
  ['403 detail', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => json(res, 403, { detail: `key ${key} has no access` })],
  ['400 message', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => json(res, 400, { message: `bad request from ${key}` })],
  ['400 error string', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => json(res, 400, { error: `unknown model for key ${key}` })],
  ['404 model not found', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => json(res, 404, { error: { message: `The model m does not exist (key ${key})` } })],
  ['500 text body', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(`internal error for ${key}`);
  }],
  ['HTML page', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html>${key}</html>`);
  }],
  ['content type', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => {
    res.writeHead(200, { 'content-type': `application/x-${encodeURIComponent(key)}` });
    res.end('not json');
  }],
  ['URL-encoded in a message', (key) => (_r: RecordedRequest, res: Parameters<typeof json>[0]) => json(res, 401, { error: { message: `see /keys?k=${encodeURIComponent(key)}` } })],
  ['in the answer text', (key) => chatCompletion(`positive, said ${key}`, 'm')],
];

describe('the API key never comes back out of the client', () => {
  it('redactKey: every spelling of the key, and nothing else', () => {
    for (const key of KEYS) {
      for (const text of [key, `x${key}y`, JSON.stringify({ m: key }), encodeURIComponent(key), `${key} and ${key}`]) {
        const out = redactKey(text, key);
        expect(out).not.toContain(key);
        expect(out).toContain(REDACTED);
        if (key !== encodeURIComponent(key)) expect(out).not.toContain(encodeURIComponent(key));
      }
      expect(redactKey('nothing to see', key)).toBe('nothing to see');
    }
    // A "key" too short to be a secret is left alone rather than garbling every answer.
    expect(redactKey('a b c', 'a')).toBe('a b c');
  });

  it.each(LEAKS)('%s: the error line, the failure, its body and the answer carry no key (4 key spellings)', async (_what, leak) => {
    for (const key of KEYS) {
      for (const endpoint of ['GET /v1/models', 'POST /v1/chat/completions']) {
        const s = await serve({ 'GET /v1/models': models, 'POST /v1/chat/completions': chatCompletion('positive', 'm'), [endpoint]: leak(key) });
        const seen: string[] = [];
        try {
          const b = track(await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'm', key, keyEnv: 'MY_KEY', maxAttempts: 1, backoffBaseMs: 1, backoffMaxMs: 2 }));
          const [r] = await b.generate([{ prompt, maxTokens: 8 }]);
          seen.push(JSON.stringify(r));
        } catch (e) {
          seen.push(String((e as Error).message), JSON.stringify(e), String((e as Error).stack), JSON.stringify((e as { cause?: unknown }).cause ?? null));
        }
        // The key did travel (as the bearer token), so the server could have quoted it.
        expect(s.requests.some((r) => r.authorization === `Bearer ${key}`)).toBe(true);
        const all = seen.join('\n');
        expect(all).not.toContain(key);
        expect(all).not.toContain(JSON.stringify(key).slice(1, -1));
        if (key.length > 4 && encodeURIComponent(key) !== key) expect(all).not.toContain(encodeURIComponent(key));
      }
    }
  });

  it('a key no HTTP header can carry is one line naming the problem, not a network failure, and not the key', async () => {
    const s = await serve({ 'GET /v1/models': models });
    for (const key of ['ключ-секрет-1234', 'key\nwith-newline', 'tab\tkey-123']) {
      const e = await failure(connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'm', key }));
      expect(e).toBeInstanceOf(UserError);
      expect(e.message).toMatch(/^the API key holds characters an HTTP header cannot carry/);
      expect(e.message).not.toContain(key);
    }
    expect(s.requests).toHaveLength(0);
  });

  it('HttpFailure bodies and server messages are redacted before anyone reads them', async () => {
    const key = KEYS[0]!;
    const s = await serve({ 'POST /x': (_r: RecordedRequest, res: Parameters<typeof json>[0]) => json(res, 429, { error: { message: `slow down ${key}` } }, { 'retry-after': '1' }) });
    const e = (await failure(httpJson({ method: 'POST', url: `${s.origin}/x`, body: {}, key, timeoutMs: 2000, answer: z.unknown() }))) as HttpFailure;
    expect(e.serverMessage).toBe(`slow down ${REDACTED}`);
    expect(JSON.stringify(e.body)).not.toContain(key);
    expect(e.retryable).toBe(true);
  });
});
