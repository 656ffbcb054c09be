// The app's classify warns of no listener leak: every model request in flight waits on the run's
// one signal, and a batch of evaluations has r × (n + 1) of them, past the warning's 10 in ordinary
// settings. They wait through common/abort.ts onAbort, one listener per signal, so Node has
// nothing to warn of (it used to be silenced with setMaxListeners(0, …)).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createApiHost } from '../../../electron/api/host';
import { DEFAULT_SETTINGS } from '../../../electron/common/tatra';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';

const dir = mkdtempSync(join(tmpdir(), 'tatra-listeners-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a classification with more requests in flight than the warning allows warns of no leak', async () => {
  // A delay makes each request listen on its signal while it waits, as LlamaBackend's do.
  const backend = new ScriptedBackend(politeScript({ firstLabel: 'negative' }), { delayMs: 1 });
  const host = await createApiHost({ dataDir: dir, mode: 'test', backendProvider: { acquire: async () => ({ backend, release: async () => undefined }) } });
  const warnings: Error[] = [];
  const onWarning = (w: Error) => void warnings.push(w);
  process.on('warning', onWarning);
  try {
    const done = new Promise<unknown>((resolve) => host.subscribe((event, payload) => event === 'classify.event' && ((payload as { event?: { type: string }; error?: unknown }).event?.type === 'done' || (payload as { error?: unknown }).error) && resolve(payload)));
    const model = join(import.meta.dirname, 'classify-listeners.test.ts');
    const started = await host.invoke('classify.start', { taskId: 'sst2', input: 'A warm and funny film.', generator: model, evaluator: model, settings: { ...DEFAULT_SETTINGS, r: 2, n: 8, k: 2, earlyStop: false } });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    expect(await done).toMatchObject({ event: { type: 'done' } });
    // r × (n + 1) = 18 evaluations were sent together.
    expect(Math.max(...backend.batches.map((b) => b.length))).toBeGreaterThan(10);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  } finally {
    process.off('warning', onWarning);
    await host.dispose();
  }
});
