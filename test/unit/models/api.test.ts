// The models API through the real host (as the UI and `tatra serve` use it): library with an
// unusable file, hardware, fit, catalog, a download streamed as download.progress events from a
// local server, and comparison errors answered by the call itself.
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import type { DownloadState, LibraryListing } from '../../../electron/common/contract/models';
import { recordHostEvents, type EventLog } from '../../helpers/events';
import { tinyFullModelPath, tinyModelPath } from '../../helpers/models';
import { serveBuffer, type TestServer } from './http-fixture';

let dir: string;
let host: ApiHost;
let server: TestServer | undefined;
let events: EventLog<[string, unknown]>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-models-api-'));
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test', log: () => undefined });
  events = recordHostEvents(host);
});
afterEach(async () => {
  await host.dispose();
  await server?.close();
  server = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function call<T>(method: string, input: unknown): Promise<T> {
  const r = await host.invoke(method, input);
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value as T;
}

describe('models API', () => {
  it('lists an added folder with a valid model and an unusable one, and estimates fit', async () => {
    const folder = join(dir, 'mine');
    await mkdir(folder);
    await copyFile(await tinyModelPath(), join(folder, 'tiny.gguf'));
    await writeFile(join(folder, 'broken.gguf'), 'GGUF but not really');
    const listing = await call<LibraryListing>('models.addFolder', { path: folder });
    expect(listing.folders).toEqual([folder]);
    const mine = listing.models.filter((m) => m.path.startsWith(folder));
    expect(mine.map((m) => m.fileName)).toEqual(['tiny.gguf']);
    const broken = listing.invalid.find((i) => i.path === join(folder, 'broken.gguf'));
    expect(broken?.reason).toBeTruthy();

    const again = await call<LibraryListing>('models.list', {});
    expect(again.folders).toEqual([folder]);

    const hw = await call<{ cpuCores: number; ram: { total: number } }>('models.hardware', {});
    expect(hw.cpuCores).toBeGreaterThan(0);
    const fit = await call<{ fits: boolean; totalBytes: number; contextSize: number }>('models.fit', { path: join(folder, 'tiny.gguf'), contextSize: 1024 });
    expect(fit.contextSize).toBe(1024);
    expect(fit.totalBytes).toBeGreaterThan(0);
    const info = await call<{ model: { architecture: string } }>('models.info', { path: join(folder, 'tiny.gguf') });
    expect(info.model.architecture).toBe('qwen2');

    const bad = await host.invoke('models.addFolder', { path: join(dir, 'nope') });
    expect(bad).toMatchObject({ ok: false, error: { code: 'library_missing' } });
  });

  it('serves the catalog', async () => {
    const catalog = await call<{ id: string; paper: boolean }[]>('models.catalog', {});
    expect(catalog.filter((c) => c.paper).map((c) => c.id)).toEqual(['qwen2.5-7b-instruct-q4_k_m', 'llama-3.1-8b-instruct-q4_k_m']);
    expect(catalog.length).toBeGreaterThanOrEqual(5);
  });

  it('starts a download, streams progress events and ends with a verified file', async () => {
    const model = await readFile(await tinyFullModelPath());
    server = await serveBuffer({ '/tiny.gguf': model }, { throttle: { bytes: 256 * 1024, everyMs: 15 } });
    const target = join(dir, 'dl');
    const first = await call<DownloadState>('models.download', { source: server.url('/tiny.gguf'), dir: target });
    expect(first.status).toBe('queued');
    // The download's last progress event says how it ended.
    const progressOf = (log: readonly [string, unknown][]) => log.filter(([event]) => event === 'download.progress').map(([, payload]) => payload as DownloadState);
    await events.until((log) => progressOf(log).some((d) => d.id === first.id && ['done', 'error', 'cancelled'].includes(d.status)));
    const last = (await call<DownloadState[]>('models.downloads', {})).find((d) => d.id === first.id);
    expect(last?.status).toBe('done');
    const progress = progressOf(events.events);
    expect(progress.some((p) => p.status === 'downloading' && p.bytes > 0 && p.bytes < model.length)).toBe(true);
    expect(progress.at(-1)?.status).toBe('done');
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    expect(sha(await readFile(join(target, 'tiny.gguf')))).toBe(sha(model));
  });

  it('answers a comparison with a bad model as a user error, and lists none', async () => {
    await writeFile(join(dir, 'x.csv'), 'text,label\nhello,1\n');
    await writeFile(join(dir, 'bad.gguf'), 'nope');
    const r = await host.invoke('experiments.start', {
      kind: 'compare',
      spec: {
        taskId: 'sst2',
        dataPath: join(dir, 'x.csv'),
        generators: [join(dir, 'bad.gguf')],
        evaluators: [join(dir, 'bad.gguf')],
        settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' },
      },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'gguf_invalid' } });
    expect(await call<unknown[]>('experiments.list', { kind: 'compare' })).toEqual([]);
    // One id form for every kind: an id that names no sweep and no comparison is one error.
    for (const method of ['experiments.get', 'experiments.pause', 'experiments.resume', 'experiments.cancel'] as const) {
      expect(await host.invoke(method, { id: 'nope' })).toMatchObject({ ok: false, error: { code: 'experiment_unknown', message: 'no experiment "nope"' } });
    }
  });
});
