// One 'abort' listener per signal, however many requests wait on it (common/abort.ts): the cause
// the setMaxListeners(0, …) calls used to silence. A long job's rows, a remote model's requests in
// flight and the helper itself each leave one listener on the signal they share, and none once
// nothing waits.
import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { joinSignals, onAbort } from '../../../electron/common/abort';
import { raceAbort } from '../../../electron/common/errors';
import { parseModelSpec, type RemoteModelSpec } from '../../../electron/common/model-spec';
import type { GenerateRequest } from '../../../electron/engine/backend';
import { JobManager, openJobStore, plainModelRef, type BackendProvider } from '../../../electron/jobs';
import { connectRemote } from '../../../electron/remote';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { chatCompletion, fakeServerScope, json, type RecordedRequest } from '../remote/fake-server';

const dir = mkdtempSync(join(tmpdir(), 'tatra-abort-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('onAbort', () => {
  it('a thousand waiters are one listener, gone with the last; an abort calls each once', () => {
    const ac = new AbortController();
    const called: number[] = [];
    const forgets = Array.from({ length: 1000 }, (_, i) => onAbort(ac.signal, () => called.push(i)));
    expect(listeners(ac.signal)).toBe(1);
    for (const f of forgets) f();
    expect(listeners(ac.signal)).toBe(0);

    const again = [onAbort(ac.signal, () => called.push(-1)), onAbort(ac.signal, () => called.push(-2))];
    again[0]!();
    again[0]!();
    ac.abort();
    expect(called).toEqual([-2]);
    expect(listeners(ac.signal)).toBe(0);
  });

  it('joinSignals aborts with the first source, and once forgotten leaves nothing on a long-lived source', () => {
    const life = new AbortController();
    const calls = Array.from({ length: 1000 }, () => new AbortController());
    const joins = calls.map((c) => joinSignals(c.signal, life.signal));
    expect(listeners(life.signal)).toBe(1);
    calls[3]!.abort('caller gone');
    expect(joins[3]!.signal.aborted).toBe(true);
    expect(joins[3]!.signal.reason).toBe('caller gone');
    expect(joins[4]!.signal.aborted).toBe(false);
    for (const j of joins) j.forget();
    expect(listeners(life.signal)).toBe(0);
    expect(calls.every((c) => listeners(c.signal) === 0)).toBe(true);

    // A source already aborted: the join is born aborted with its reason.
    const born = joinSignals(new AbortController().signal, AbortSignal.abort('too late'));
    expect(born.signal.reason).toBe('too late');
    // The long-lived one aborting reaches every join still held, with its reason.
    const held = joinSignals(new AbortController().signal, life.signal);
    life.abort('shutdown');
    expect(held.signal.reason).toBe('shutdown');
    expect(joins[4]!.signal.aborted).toBe(false);
  });

  it('raceAbort leaves no listener behind, however many race at once', async () => {
    const ac = new AbortController();
    const settle: (() => void)[] = [];
    const races = Array.from({ length: 50 }, () => raceAbort(new Promise<void>((res) => settle.push(res)), ac.signal));
    expect(listeners(ac.signal)).toBe(1);
    for (const s of settle) s();
    await Promise.all(races);
    expect(listeners(ac.signal)).toBe(0);
  });
});

describe('no listener per request', () => {
  it('a long job: its rows in flight share one listener on the job signal', async () => {
    const data = join(dir, 'rows.csv');
    writeFileSync(data, 'text,label\n' + Array.from({ length: 24 }, (_, i) => `"a ${i % 2 ? 'good' : 'dull'} film ${i}",${i % 2}`).join('\n') + '\n');
    let peak = 0;
    let widest = 0;
    const backend = new ScriptedBackend(politeScript({ answer: (c) => (c.includes('good') ? 'positive' : 'negative') }), { delayMs: 2 });
    const generate = backend.generate.bind(backend);
    backend.generate = (requests: readonly GenerateRequest[], cb) => {
      const running = generate(requests, cb);
      // Sampled once every request of the batch waits on its signal.
      const signal = requests[0]?.signal;
      if (signal) peak = Math.max(peak, listeners(signal));
      widest = Math.max(widest, requests.length);
      return running;
    };
    const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
    const store = openJobStore(join(dir, 'job'));
    try {
      const manager = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
      const job = await manager.create({
        task: 'sst2',
        settings: { n: 4, k: 2, r: 3, seed: 1, scope: 'input' },
        generatorPath: 'gen.gguf',
        evaluatorPath: 'eval.gguf',
        dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } },
        concurrency: 6,
      });
      await manager.start(job.id);
      const end = await manager.wait(job.id);
      expect(end.status, end.error ?? '').toBe('done');
    } finally {
      store.close();
    }
    // r × (n + 1) = 15 evaluations of a row go together, more than Node's warning allows.
    expect(widest).toBeGreaterThan(10);
    expect(peak).toBe(1);
  });

  describe('a remote model', () => {
    const { serve, track } = fakeServerScope();

    it('64 requests on one signal, in flight or queued for the endpoint: one listener', async () => {
      const held: (() => void)[] = [];
      const server = await serve({
        'GET /v1/models': { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'vllm', max_model_len: 8192 }] },
        'POST /v1/chat/completions': (_req: RecordedRequest, res: ServerResponse) => void held.push(() => json(res, 200, chatCompletion('positive', 'm'))),
      });
      const backend = track(await connectRemote(parseModelSpec(`openai+${server.origin}/v1#m`) as RemoteModelSpec));
      const ac = new AbortController();
      const all = backend.generate(Array.from({ length: 64 }, (_, i) => ({ prompt: { system: '', user: `r${i}` }, maxTokens: 4, signal: ac.signal })));
      // As many as the endpoint keeps in flight reach the server; the rest wait in its queue.
      const limit = backend.stats().endpoints[0]!.limit;
      await expect.poll(() => held.length, { timeout: 20_000, interval: 20 }).toBe(Math.min(64, limit));
      expect(listeners(ac.signal)).toBeLessThanOrEqual(1);
      // Answered as they arrive until every request is.
      const answering = setInterval(() => {
        for (const answer of held.splice(0)) answer();
      }, 5);
      try {
        await all;
      } finally {
        clearInterval(answering);
      }
      expect(listeners(ac.signal)).toBeLessThanOrEqual(1);
    });
  });
});
