// How many requests the remote backend keeps in flight on each endpoint: what the server says about
// itself by default (llama-server: twice its slots; vLLM: its default batch of 256), what the user
// sets (entry, inline ?inflight=N) above that, fewer when the server answers busy, and failover
// still exact with a long queue of waiting requests. Real HTTP against scripted servers.
import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { connectRemote, connectRemoteBackend, type RemoteBackend } from '../../../electron/remote';
import { chatCompletion, fakeServerScope, json, type RecordedRequest } from './fake-server';
import { parseModelSpec, type RemoteModelSpec } from '../../../electron/common/model-spec';

const { serve, track } = fakeServerScope();
const models = { object: 'list', data: [{ id: 'm', object: 'model' }] };
const vllmModels = { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'vllm', max_model_len: 8192 }] };

function userOf(req: RecordedRequest): string {
  return ((req.body as { messages: { content: string }[] }).messages.at(-1) as { content: string }).content;
}

/** A chat server holding every answer until `release()`, which answers them and all later ones at once. */
async function holdingServer(listing: unknown, extra: Record<string, unknown> = {}) {
  const held: (() => void)[] = [];
  let holding = true;
  const server = await serve({
    'GET /v1/models': listing,
    ...extra,
    'POST /v1/chat/completions': (req: RecordedRequest, res: ServerResponse) => {
      const answer = () => json(res, 200, chatCompletion(`echo ${userOf(req)}`, 'm'));
      if (holding) held.push(answer);
      else answer();
    },
  });
  return {
    server,
    get held() {
      return held.length;
    },
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const answer of held.splice(0)) answer();
    },
  };
}

/** How many of `requests` the backend has sent before any is answered: what it keeps in flight. */
async function inFlightOf(b: RemoteBackend, s: Awaited<ReturnType<typeof holdingServer>>, requests: number): Promise<number> {
  s.hold();
  const all = b.generate(Array.from({ length: requests }, (_, i) => ({ prompt: { system: '', user: `r${i}` }, maxTokens: 4 })));
  // The endpoint's in-flight count stops at its limit: wait for that many to arrive.
  await expect.poll(() => s.held, { timeout: 20_000, interval: 20 }).toBe(Math.min(requests, b.stats().endpoints[0]!.limit));
  const most = s.held;
  s.release();
  await all;
  return most;
}

describe('requests in flight per endpoint', () => {
  it('vLLM: its default batch of 256 at once', async () => {
    const s = await holdingServer(vllmModels, { 'GET /version': { version: '0.12.0' } });
    const b = track(await connectRemoteBackend({ urls: [`${s.server.origin}/v1`], model: 'm' }));
    expect(b.kind).toBe('vllm');
    expect(b.stats().endpoints[0]).toMatchObject({ limit: 256, maxInFlight: 256 });
    expect(await inFlightOf(b, s, 300)).toBe(256);
  });

  it('llama-server: twice its slots; an unknown server: 8; what the user sets wins (inline ?inflight=N)', async () => {
    const llama = await holdingServer(models, { 'GET /props': { default_generation_settings: { n_ctx: 4096 }, total_slots: 3, build_info: 'b1' } });
    const lb = track(await connectRemoteBackend({ urls: [`${llama.server.origin}/v1`], model: 'm' }));
    expect(lb.kind).toBe('llama-server');
    expect(lb.stats().endpoints[0]?.maxInFlight).toBe(6);
    const generic = await holdingServer(models);
    const gb = track(await connectRemoteBackend({ urls: [`${generic.server.origin}/v1`], model: 'm' }));
    expect(gb.stats().endpoints[0]?.maxInFlight).toBe(8);
    expect(await inFlightOf(gb, generic, 20)).toBe(8);
    const mine = track(await connectRemote(parseModelSpec(`openai+${generic.server.origin}/v1#m?inflight=40`) as RemoteModelSpec));
    expect(mine.stats().endpoints[0]?.maxInFlight).toBe(40);
    expect(mine.describe().maxInFlight).toBe(40);
    expect(await inFlightOf(mine, generic, 100)).toBe(40);
  });

  it('a server that answers 429 beyond its capacity: fewer in flight, every request answered once', async () => {
    const CAPACITY = 4;
    let open = 0;
    const answered = new Map<string, number>();
    let refused = 0;
    const s = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': (req: RecordedRequest, res: ServerResponse) => {
        if (open >= CAPACITY) {
          refused++;
          return json(res, 429, { error: { message: 'busy' } });
        }
        open++;
        setTimeout(() => {
          open--;
          const user = userOf(req);
          answered.set(user, (answered.get(user) ?? 0) + 1);
          json(res, 200, chatCompletion(`echo ${user}`, 'm'));
        }, 2);
      },
    });
    const b = track(await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'm', maxInFlight: 64, backoffBaseMs: 1, backoffMaxMs: 5, maxAttempts: 100 }));
    const inputs = Array.from({ length: 400 }, (_, i) => `row ${i}`);
    const results = await b.generate(inputs.map((user) => ({ prompt: { system: '', user }, maxTokens: 4 })));
    expect(results.map((r) => r.text)).toEqual(inputs.map((u) => `echo ${u}`));
    expect([...answered.values()].every((n) => n === 1)).toBe(true);
    expect(answered.size).toBe(400);
    expect(refused).toBeGreaterThan(0);
    const e = b.stats().endpoints[0]!;
    expect(e.backoffs).toBeGreaterThan(0);
    expect(e.limit).toBeLessThan(64);
  });

  it('failover stays exact with hundreds of requests waiting: each answered once, by the endpoint that stayed up', async () => {
    const answered = new Map<string, number>();
    const good = await serve({
      'GET /v1/models': models,
      'POST /v1/chat/completions': (req: RecordedRequest, res: ServerResponse) => {
        const user = userOf(req);
        answered.set(user, (answered.get(user) ?? 0) + 1);
        setTimeout(() => json(res, 200, chatCompletion(`echo ${user}`, 'm')), 1);
      },
    });
    let dead = false;
    let sentToFlaky = 0;
    const flaky = await serve({
      'GET /v1/models': (_req: unknown, res: ServerResponse) => (dead ? res.socket?.destroy() : json(res, 200, models)),
      // Takes requests, then dies with them in flight: none is answered.
      'POST /v1/chat/completions': (_req: unknown, res: ServerResponse) => {
        sentToFlaky++;
        if (sentToFlaky >= 3) dead = true;
        setTimeout(() => res.socket?.destroy(), 5);
      },
    });
    const b = track(await connectRemoteBackend({ urls: [`${good.origin}/v1`, `${flaky.origin}/v1`], model: 'm', maxInFlight: 4, reprobeMs: 20 }));
    const inputs = Array.from({ length: 600 }, (_, i) => `row ${i}`);
    const results = await b.generate(inputs.map((user) => ({ prompt: { system: '', user }, maxTokens: 4 })));
    expect(results.map((r) => r.text)).toEqual(inputs.map((u) => `echo ${u}`));
    expect(answered.size).toBe(600);
    expect([...answered.values()].every((n) => n === 1)).toBe(true);
    expect(sentToFlaky).toBeGreaterThan(0);
    expect(b.stats().endpoints[1]).toMatchObject({ up: false });
  });
});
