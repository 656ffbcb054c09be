// The renderer's models slice over the real API host (an in-process transport standing in for
// IPC): a download started from the slice is followed through download.progress events to done,
// the library is re-read and pickers are told (modelsVersion); errors land as notices or as the
// comparison's error (experimentsSlice).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import { createApiClient, setApi, type Transport } from '../../../renderer/src/api/client';
import { connectStore, createAppStore } from '../../../renderer/src/store';
import { whenState } from '../../helpers/events';
import { tinyFullModelPath } from '../../helpers/models';
import { serveBuffer, type TestServer } from './http-fixture';

let dir: string;
let host: ApiHost;
let server: TestServer | undefined;
const cleanup: string[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-slice-'));
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test', log: () => undefined });
  const transport: Transport = {
    kind: 'electron',
    invoke: (method, input) => host.invoke(method, input),
    subscribe: (listener) => host.subscribe(listener),
    upload: () => Promise.reject(new Error('no uploads here')),
    downloadUrl: () => null,
    onConnection: () => () => undefined,
  };
  setApi(createApiClient(transport));
});
afterEach(async () => {
  setApi(null);
  await host.dispose();
  for (const p of cleanup.splice(0)) await rm(p, { force: true });
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('models slice', () => {
  it('follows a download to done through events and refreshes the library', async () => {
    const store = createAppStore();
    // Download events reach the store the one way every long work's do (connectStore).
    const stop = connectStore(store);
    const body = await readFile(await tinyFullModelPath());
    server = await serveBuffer({ '/x/slice.gguf': body }, { throttle: { bytes: 512 * 1024, everyMs: 10 } });
    // The slice downloads into the app's models/ folder (git-ignored); afterEach removes the file.
    const started = await store.getState().startDownload(server.url('/x/slice.gguf'));
    expect(started?.status).toBe('queued');
    const id = started!.id;
    cleanup.push(join(process.cwd(), 'models', 'slice.gguf'), join(process.cwd(), 'models', 'slice.gguf.partial'), join(process.cwd(), 'models', 'slice.gguf.partial.json'));
    const version0 = store.getState().modelsVersion;
    const seen = new Set<string>();
    const unsub = store.subscribe((s) => {
      const d = s.downloads[id];
      if (d) seen.add(d.status);
    });
    await whenState(store, (s) => ['done', 'error', 'cancelled'].includes(s.downloads[id]?.status ?? ''));
    unsub();
    stop();
    const final = store.getState().downloads[id]!;
    expect(final.status).toBe('done');
    expect(seen.has('downloading')).toBe(true);
    expect(store.getState().modelsVersion).toBe(version0 + 1);
    // The slice re-read the library after the download finished.
    await whenState(store, (s) => (s.library?.models ?? []).some((m) => m.path === final.dest));
    expect(final.dest).toBe(join(process.cwd(), 'models', 'slice.gguf'));
  }, 60_000);

  it('reports bad input as a notice and keeps the library as it was', async () => {
    const store = createAppStore();
    await store.getState().loadLibrary();
    const before = store.getState().library;
    expect(await store.getState().addModelPath('folder', join(dir, 'missing'))).toBe(false);
    expect(store.getState().notices.at(-1)).toMatchObject({ kind: 'error', message: expect.stringMatching(/folder not found/) });
    expect(store.getState().library).toEqual(before);
    await store.getState().startExperiment({ kind: 'compare', spec: { taskId: 'sst2', dataPath: join(dir, 'none.csv'), generators: ['a.gguf'], evaluators: ['a.gguf'], settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' } } });
    expect(store.getState().experimentError.compare).toMatch(/model file not found/);
    expect(store.getState().experimentError.sweep).toBeNull();
  });
});
