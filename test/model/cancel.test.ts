// A cancel is one error wherever it surfaces (abort errors were once built four ways):
// every layer rejects with the signal's own reason (signal.throwIfAborted() / signal.reason), so
// the engine, the llama backend and its loader, the model pool and the jobs' data reader all give
// the caller the very object it aborted with, which the API reports as code "cancelled".
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toApiError } from '../../electron/api/errors';
import { isAbortError } from '../../electron/common/errors';
import { classify, type GenerateRequest, type TatraBackend } from '../../electron/engine';
import { readDataset } from '../../electron/jobs';
import { ModelPool } from '../../electron/hold';
import { loadLlamaBackend, type LlamaBackend } from '../../electron/llama';
import { resolveTask } from '../../electron/tasks';
import { tinyModelPath } from '../helpers/models';
import { parseModelSpec } from '../../electron/common/model-spec';

const dir = mkdtempSync(join(tmpdir(), 'tatra-cancel-'));
let tiny = '';
let backend: LlamaBackend;

beforeAll(async () => {
  tiny = await tinyModelPath();
  backend = await loadLlamaBackend({ modelPath: tiny, threads: 1, contextSize: 2048, sequences: 2 });
});
afterAll(async () => {
  await backend?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** A controller aborted the usual way (abort() with no argument: a DOMException named AbortError). */
function aborted(): AbortController {
  const ac = new AbortController();
  ac.abort();
  return ac;
}

/** What every layer must reject with: the signal's reason itself, reported as "cancelled". */
async function expectCancel(p: Promise<unknown>, ac: AbortController): Promise<void> {
  const e = await p.then(
    () => expect.unreachable('should have been cancelled'),
    (err: unknown) => err,
  );
  expect(e).toBe(ac.signal.reason);
  expect(isAbortError(e)).toBe(true);
  expect(toApiError(e).code).toBe('cancelled');
}

const request = (signal: AbortSignal): GenerateRequest => ({ prompt: { system: 'Write a long story.', user: 'Once upon a time' }, maxTokens: 400, temperature: 0.8, seed: 1, signal });

describe('a cancel is the signal reason, from every layer', () => {
  it('llama backend: an aborted request, and one aborted while queued or decoding', async () => {
    const before = aborted();
    await expectCancel(backend.generate([request(before.signal)]), before);
    const during = new AbortController();
    const pending = backend.generate([request(during.signal), request(during.signal), request(during.signal)]);
    during.abort();
    await expectCancel(pending, during);
  });

  it('llama loader and model pool', async () => {
    const load = aborted();
    await expectCancel(loadLlamaBackend({ modelPath: tiny, threads: 1, signal: load.signal }), load);
    const pool = new ModelPool({ defaults: { threads: 1 } });
    try {
      const acquire = aborted();
      await expectCancel(pool.acquire(parseModelSpec(tiny), { signal: acquire.signal }), acquire);
    } finally {
      await pool.dispose();
    }
  });

  it('engine: classify aborted once the first generation is back', async () => {
    const task = await resolveTask('sst2');
    const ac = new AbortController();
    // Abort from inside the run, at a known point, rather than after a delay.
    const aborting: TatraBackend = {
      id: backend.id,
      contextSize: backend.contextSize,
      countPromptTokens: (p) => backend.countPromptTokens(p),
      generate: async (requests, onResult) => {
        const results = await backend.generate(requests, onResult);
        ac.abort();
        return results;
      },
    };
    await expectCancel(classify({ task, input: 'a fine film', settings: { n: 2, k: 2, r: 2, seed: 1, scope: 'run' }, generator: aborting, evaluator: aborting, signal: ac.signal }), ac);
  });

  it("jobs: the data reader stops with the signal's reason", async () => {
    const csv = join(dir, 'rows.csv');
    writeFileSync(csv, 'text,label\n"a fine film",1\n"a dull film",0\n');
    const ac = aborted();
    const reader = readDataset(csv, { textColumn: 'text', labelColumn: 'label' }, { signal: ac.signal });
    await expectCancel((async () => {
      for await (const row of reader) void row;
    })(), ac);
  });
});
