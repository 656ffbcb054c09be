// Failures are normal: unreachable servers, HTML pages, wrong keys, unknown models, 429 with
// Retry-After, 5xx, context overflow, an endpoint dying with requests in flight. Each either ends
// in one clear line or is retried where it can succeed, and no request is answered twice.
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { ContextOverflowError } from '../../../electron/engine/backend';
import { backoffDelay, connectRemoteBackend, parseRetryAfter, type RemoteBackend } from '../../../electron/remote';
import { chatCompletion, fakeServerScope, json } from './fake-server';
import { failure } from '../../helpers/failure';

const prompt = { system: '', user: 'Text: "fine"\nAnswer:' };
const models = { object: 'list', data: [{ id: 'm', object: 'model' }] };

const { serve, track } = fakeServerScope();

async function connect(urls: string[], extra: Partial<Parameters<typeof connectRemoteBackend>[0]> = {}): Promise<RemoteBackend> {
  const b = await connectRemoteBackend({ urls, model: 'm', backoffBaseMs: 5, backoffMaxMs: 20, reprobeMs: 20, ...extra });
  track(b);
  return b;
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const srv = createNetServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('connecting', () => {
  it('an unreachable URL fails fast with one line', async () => {
    const port = await closedPort();
    const e = await failure(connectRemoteBackend({ urls: [`http://127.0.0.1:${port}/v1`], model: 'm' }));
    expect(e).toBeInstanceOf(UserError);
    // Refused at once, not retried: the message says so.
    expect(e.message).toBe(`cannot reach http://127.0.0.1:${port}/v1: connection refused`);
  });

  it('a server that answers HTML is not OpenAI-compatible', async () => {
    const s = await serve({
      'GET /v1/models': (_req: unknown, res: Parameters<typeof json>[0]) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html><html><body>Welcome to nginx!</body></html>');
      },
    });
    const e = await failure(connect([`${s.origin}/v1`]));
    expect(e.message).toBe(`${s.origin}/v1 is not an OpenAI-compatible server: /v1/models answered an HTML page`);
    expect(e.message).not.toContain('\n');
  });

  it('a wrong key is named as such, with the variable to check, and the key is never printed', async () => {
    const s = await serve({ 'GET /v1/models': (_req: unknown, res: Parameters<typeof json>[0]) => json(res, 401, { error: { message: 'Invalid API Key', type: 'invalid_request_error' } }) });
    const e = await failure(connect([`${s.origin}/v1`], { key: 'sk-wrong-secret', keyEnv: 'MY_KEY' }));
    expect(e.message).toBe(`${s.origin}/v1 rejected the API key (HTTP 401: Invalid API Key); check the key in $MY_KEY`);
    expect(e.message).not.toContain('sk-wrong-secret');
  });

  it('a server that takes the connection but never answers fails after the probe’s own limit with one line', async () => {
    // A hung process or a firewall that accepts and drops: the socket opens, no byte comes back.
    const sockets: Socket[] = [];
    const hung = createNetServer((socket) => void sockets.push(socket));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const { port } = hung.address() as AddressInfo;
    try {
      const e = await failure(connectRemoteBackend({ urls: [`http://127.0.0.1:${port}/v1`], model: 'm' }));
      expect(e).toBeInstanceOf(UserError);
      // Its own 4 s limit ended the wait (the message names it), not a TCP timeout of minutes.
      expect(e.message).toBe(`cannot reach http://127.0.0.1:${port}/v1: no answer within 4 s`);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((r) => hung.close(() => r()));
    }
  });

  it('403 (a key without access) is named as a key problem too, without the key', async () => {
    const s = await serve({ 'GET /v1/models': (_req: unknown, res: Parameters<typeof json>[0]) => json(res, 403, { error: { message: 'Project does not have access to model', type: 'invalid_request_error' } }) });
    const e = await failure(connect([`${s.origin}/v1`], { key: 'sk-forbidden-secret' }));
    expect(e.message).toBe(`${s.origin}/v1 rejected the API key (HTTP 403: Project does not have access to model); give one with --key-env VAR (or type it in the app)`);
    expect(e.message).not.toContain('sk-forbidden-secret');
  });

  it('an HTML error page without JSON (a proxy in front) is one line, not the page', async () => {
    const s = await serve({
      'GET /v1/models': (_req: unknown, res: Parameters<typeof json>[0]) => {
        res.writeHead(404, { 'content-type': 'text/html' });
        res.end('<html><head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1></body></html>');
      },
    });
    const e = await failure(connect([`${s.origin}/v1`]));
    expect(e.message).toBe(`${s.origin}/v1 is not an OpenAI-compatible server: /v1/models answered HTTP 404`);
  });

  it('an unknown model lists the models the server has', async () => {
    const s = await serve({ 'GET /v1/models': { object: 'list', data: [{ id: 'qwen2.5-7b' }, { id: 'llama3.1-8b' }] } });
    const e = await failure(connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'gpt-5' }));
    expect(e.message).toBe(`${s.origin}/v1 has no model "gpt-5"; it serves: qwen2.5-7b, llama3.1-8b`);
  });
});

describe('generating', () => {
  it('429 with Retry-After and 500 are retried; the request is answered once', async () => {
    let calls = 0;
    const s = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': (_req: unknown, res: Parameters<typeof json>[0]) => {
        calls++;
        if (calls === 1) return json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '0' });
        if (calls === 2) return json(res, 500, { error: { message: 'oops' } });
        json(res, 200, chatCompletion('ok', 'm'));
      },
    });
    const b = await connect([`${s.origin}/v1`]);
    const [r] = await b.generate([{ prompt, maxTokens: 4 }]);
    expect(r?.text).toBe('ok');
    expect(calls).toBe(3);
    expect(b.stats()).toMatchObject({ requests: 1, retries: 2 });
  });

  it('a context overflow becomes the engine\'s ContextOverflowError (llama-server and vLLM wording)', async () => {
    const s = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': (_req: unknown, res: Parameters<typeof json>[0]) =>
        json(res, 400, { object: 'error', message: "This model's maximum context length is 2048 tokens. However, you requested 4000 tokens (3996 in the messages, 4 in the completion).", type: 'BadRequestError', code: 400 }),
    });
    const b = await connect([`${s.origin}/v1`]);
    const e = await failure(b.generate([{ prompt, maxTokens: 4 }]));
    expect(e).toBeInstanceOf(ContextOverflowError);
    expect(e).toMatchObject({ contextSize: 2048, promptTokens: 4000 });
  });

  it('a server whose models list is JSON but whose completions answer HTML: one line, not retried', async () => {
    let posts = 0;
    const s = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': (_req: unknown, res: Parameters<typeof json>[0]) => {
        posts++;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><html><body>Sign in to continue</body></html>');
      },
    });
    const b = await connect([`${s.origin}/v1`]);
    const e = await failure(b.generate([{ prompt, maxTokens: 4 }]));
    expect(e).toBeInstanceOf(UserError);
    expect(e.message).toBe(`${s.origin}/v1 is not an OpenAI-compatible server: /v1/chat/completions answered an HTML page`);
    expect(posts).toBe(1);
  });

  it('a 401 during generation is one line and not retried', async () => {
    let posts = 0;
    const s = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': (_req: unknown, res: Parameters<typeof json>[0]) => {
        posts++;
        json(res, 401, { error: { message: 'Incorrect API key provided' } });
      },
    });
    const b = await connect([`${s.origin}/v1`]);
    const e = await failure(b.generate([{ prompt, maxTokens: 4 }]));
    expect(e.message).toMatch(/rejected the API key \(HTTP 401: Incorrect API key provided\); give one with --key-env VAR/);
    expect(posts).toBe(1);
  });

  it('an endpoint that dies with requests in flight: they are sent to the other one, each answered exactly once, and it is used again once it answers', async () => {
    const answered: string[] = [];
    const good = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': (req: { body: unknown }, res: Parameters<typeof json>[0]) => {
        const user = ((req.body as { messages: { content: string }[] }).messages.at(-1) as { content: string }).content;
        answered.push(`good:${user}`);
        json(res, 200, chatCompletion(`echo ${user}`, 'm'));
      },
    });
    let dead = false;
    const flaky = await serve({
      'GET /v1/models': (_req: unknown, res: Parameters<typeof json>[0]) => (dead ? res.socket?.destroy() : json(res, 200, models)),
      // Accepts the request, then drops the connection without answering (a crash mid-request).
      'POST /v1/chat/completions': (req: { body: unknown }, res: Parameters<typeof json>[0]) => {
        if (dead) return res.socket?.destroy();
        const user = ((req.body as { messages: { content: string }[] }).messages.at(-1) as { content: string }).content;
        answered.push(`flaky:${user}`);
        json(res, 200, chatCompletion(`echo ${user}`, 'm'));
      },
    });
    const b = await connect([`${good.origin}/v1`, `${flaky.origin}/v1`], { maxInFlight: 2 });
    dead = true;
    const inputs = Array.from({ length: 12 }, (_, i) => `row ${i}`);
    const results = await b.generate(inputs.map((user) => ({ prompt: { system: '', user }, maxTokens: 4 })));
    expect(results.map((r) => r.text)).toEqual(inputs.map((u) => `echo ${u}`));
    // Every row answered once, all by the endpoint that stayed up.
    expect(answered.filter((a) => a.startsWith('good:')).map((a) => a.slice(5)).sort()).toEqual([...inputs].sort());
    const before = b.stats().endpoints;
    expect(before[1]).toMatchObject({ up: false, failures: 1 });

    dead = false;
    await expect.poll(() => b.stats().endpoints[1]?.up, { timeout: 20_000, interval: 20 }).toBe(true);
    await b.generate(Array.from({ length: 8 }, (_, i) => ({ prompt: { system: '', user: `again ${i}` }, maxTokens: 4 })));
    expect(answered.some((a) => a.startsWith('flaky:again'))).toBe(true);
    expect(b.stats().endpoints[1]?.served).toBeGreaterThan(0);
  });

  it('aborting a request aborts its HTTP call', async () => {
    const s = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': () => {
        /* never answers */
      },
    });
    const b = await connect([`${s.origin}/v1`]);
    const ac = new AbortController();
    const p = b.generate([{ prompt, maxTokens: 4, signal: ac.signal }]);
    await expect.poll(() => s.requests.filter((r) => r.method === 'POST').length).toBe(1);
    ac.abort();
    const e = await failure(p);
    expect(e.name).toBe('AbortError');
  });
});

describe('backoff', () => {
  it('doubles with full jitter up to the cap, and Retry-After wins', () => {
    const b = { baseMs: 100, maxMs: 1000 };
    expect(backoffDelay(1, b, undefined, () => 0)).toBe(50);
    expect(backoffDelay(1, b, undefined, () => 1)).toBe(100);
    expect(backoffDelay(3, b, undefined, () => 1)).toBe(400);
    expect(backoffDelay(10, b, undefined, () => 1)).toBe(1000);
    expect(backoffDelay(2, b, 3000)).toBe(3000);
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:59 GMT'))).toBe(1000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
