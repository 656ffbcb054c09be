// Downloads against a local HTTP server: resume after a cut connection, Range ignored, truncated
// and corrupt files rejected, unreachable hosts failing fast, cancel, hf: resolution.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DownloadManager, downloadModel, resolveHfUri, resolveModelUri } from '../../../electron/models';
import { UserError } from '../../../electron/common/errors';
import type { DownloadState } from '../../../electron/common/contract/models';
import { tinyFullModelPath, tinyModelBPath } from '../../helpers/models';
import { serveBuffer, type TestServer } from './http-fixture';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let model: Buffer;
let dir: string;
let server: TestServer | undefined;

beforeAll(async () => {
  model = await readFile(await tinyFullModelPath());
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});
const fresh = async () => (dir = await mkdtemp(join(tmpdir(), 'tatra-dl-')));

describe('downloadModel', () => {
  it('downloads a GGUF, reports progress and leaves only the verified file', async () => {
    await fresh();
    server = await serveBuffer({ '/m/tiny.gguf': model }, { throttle: { bytes: 1 << 20, everyMs: 20 } });
    const events: DownloadState[] = [];
    const done = await downloadModel(server.url('/m/tiny.gguf'), { dir, onProgress: (s) => events.push(s), progressIntervalMs: 10 });
    expect(done.status).toBe('done');
    expect(done.bytes).toBe(model.length);
    expect(sha(await readFile(join(dir, 'tiny.gguf')))).toBe(sha(model));
    expect(await readdir(dir)).toEqual(['tiny.gguf']);
    const mid = events.filter((e) => e.status === 'downloading' && e.bytes > 0 && e.bytes < model.length);
    expect(mid.length).toBeGreaterThan(2);
    expect(mid.every((e) => e.total === model.length)).toBe(true);
    expect(mid.some((e) => e.rate > 0 && e.etaSeconds !== null)).toBe(true);
    expect(events.some((e) => e.status === 'verifying')).toBe(true);
  });

  it('a connection cut mid-transfer leaves a partial that never looks finished, and the next run resumes with Range to an identical file', async () => {
    await fresh();
    const cutAt = 5_000_000;
    server = await serveBuffer({ '/tiny.gguf': model }, { cutAfter: cutAt });
    const err = await downloadModel(server.url('/tiny.gguf'), { dir, retries: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/interrupted after .* of .*run it again to resume/);
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(['tiny.gguf.partial', 'tiny.gguf.partial.json']);
    expect(existsSync(join(dir, 'tiny.gguf'))).toBe(false);
    const partialSize = (await readFile(join(dir, 'tiny.gguf.partial'))).length;
    expect(partialSize).toBeGreaterThan(0);
    expect(partialSize).toBeLessThanOrEqual(cutAt);

    // "After a restart": a new call with nothing but what is on disk.
    const done = await downloadModel(server.url('/tiny.gguf'), { dir, retries: 0 });
    expect(done.resumedFrom).toBe(partialSize);
    const second = server.requests[1];
    expect(second?.range).toBe(`bytes=${partialSize}-`);
    expect(second?.ifRange).toBe('"v1"');
    expect(second?.status).toBe(206);
    expect(sha(await readFile(join(dir, 'tiny.gguf')))).toBe(sha(model));
    expect(await readdir(dir)).toEqual(['tiny.gguf']);
  });

  it('resumes by itself within one call when the connection drops', async () => {
    await fresh();
    server = await serveBuffer({ '/tiny.gguf': model }, { cutAfter: 3_000_000, cuts: 2 });
    const done = await downloadModel(server.url('/tiny.gguf'), { dir, retries: 3 });
    expect(done.status).toBe('done');
    expect(server.requests.filter((r) => r.status === 206).length).toBe(2);
    expect(sha(await readFile(join(dir, 'tiny.gguf')))).toBe(sha(model));
  });

  it('restarts from zero when the server ignores Range (200 instead of 206)', async () => {
    await fresh();
    server = await serveBuffer({ '/tiny.gguf': model }, { cutAfter: 4_000_000, ignoreRange: true });
    await expect(downloadModel(server.url('/tiny.gguf'), { dir, retries: 0 })).rejects.toThrow(/interrupted/);
    const done = await downloadModel(server.url('/tiny.gguf'), { dir, retries: 0 });
    expect(server.requests[1]?.range).toMatch(/^bytes=\d+-$/);
    expect(server.requests[1]?.status).toBe(200);
    expect(done.bytes).toBe(model.length);
    expect(sha(await readFile(join(dir, 'tiny.gguf')))).toBe(sha(model));
  });

  it('rejects a truncated GGUF (complete transfer of a cut file) and leaves nothing that looks like a model', async () => {
    await fresh();
    server = await serveBuffer({ '/cut.gguf': model.subarray(0, Math.floor(model.length / 2)) });
    const err = await downloadModel(server.url('/cut.gguf'), { dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/cut\.gguf is not a usable model \(.*truncated.*\); discarded/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('rejects a file that is not GGUF', async () => {
    await fresh();
    server = await serveBuffer({ '/fake.gguf': Buffer.from('<html>login required</html>'.repeat(100)) });
    await expect(downloadModel(server.url('/fake.gguf'), { dir })).rejects.toThrow(/fake\.gguf is not a usable model \(not a GGUF model .*\); discarded/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('discards a partial whose sidecar names another URL instead of splicing it', async () => {
    await fresh();
    server = await serveBuffer({ '/tiny.gguf': model });
    await writeFile(join(dir, 'tiny.gguf.partial'), Buffer.alloc(1000, 7));
    await writeFile(join(dir, 'tiny.gguf.partial.json'), JSON.stringify({ url: 'http://elsewhere/tiny.gguf', total: model.length, etag: null }));
    await downloadModel(server.url('/tiny.gguf'), { dir });
    expect(server.requests[0]?.range).toBeUndefined();
    expect(sha(await readFile(join(dir, 'tiny.gguf')))).toBe(sha(model));
  });

  it('refuses a download that cannot fit on the disk before writing anything', async () => {
    await fresh();
    const { createServer: createHttpServer } = await import('node:http');
    const huge = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(10 ** 15) });
      res.write(Buffer.alloc(16));
    });
    await new Promise<void>((r) => huge.listen(0, '127.0.0.1', r));
    const port = (huge.address() as { port: number }).port;
    try {
      await expect(downloadModel(`http://127.0.0.1:${port}/huge.gguf`, { dir })).rejects.toThrow(/^not enough disk space in .* for huge\.gguf: needs 909\.5 TiB, .* free$/);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      huge.closeAllConnections();
      await new Promise<void>((r) => huge.close(() => r()));
    }
  });

  it('does not overwrite an existing file, and says when it is unusable', async () => {
    await fresh();
    server = await serveBuffer({ '/tiny.gguf': model });
    await writeFile(join(dir, 'tiny.gguf'), 'junk');
    await expect(downloadModel(server.url('/tiny.gguf'), { dir })).rejects.toThrow(/tiny\.gguf already exists and is not a usable model \(not a GGUF model .*\); delete it to download again/);
    expect(server.requests).toEqual([]);
    await rm(join(dir, 'tiny.gguf'));
    await downloadModel(server.url('/tiny.gguf'), { dir });
    const again = await downloadModel(server.url('/tiny.gguf'), { dir });
    expect(again.status).toBe('done');
    expect(server.requests).toHaveLength(1);
  });

  it('follows redirects and reports a 404 clearly', async () => {
    await fresh();
    server = await serveBuffer({ '/tiny.gguf': model });
    await downloadModel(server.url('/redirect/tiny.gguf'), { dir });
    expect(existsSync(join(dir, 'tiny.gguf'))).toBe(true);
    await expect(downloadModel(server.url('/nothing.gguf'), { dir })).rejects.toThrow(/nothing\.gguf failed: not found/);
  });

  it('fails with a clear message on a closed port', async () => {
    await fresh();
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    await expect(downloadModel(`http://127.0.0.1:${port}/x.gguf`, { dir })).rejects.toThrow(/^cannot reach 127\.0\.0\.1:\d+: connection refused$/);
  });

  it('fails after its 5 s answer timeout with a clear message when a host accepts but never answers', async () => {
    await fresh();
    // A black hole: TCP connects, no HTTP answer ever comes (what a captive or dead proxy does).
    const sockets: Socket[] = [];
    const hole = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    const port = (hole.address() as { port: number }).port;
    // The timeout's own clock is faked and moved by hand once the request has reached the hole, so
    // the test neither waits 5 s nor depends on how fast the machine is: not a millisecond before 5 s.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const connected = once(hole, 'connection');
      let settled = false;
      const result = downloadModel(`http://127.0.0.1:${port}/model.gguf`, { dir })
        .catch((e: unknown) => e)
        .finally(() => (settled = true));
      await connected;
      await vi.advanceTimersByTimeAsync(4_999);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const err = await result;
      expect(err).toBeInstanceOf(UserError);
      expect((err as Error).message).toBe(`cannot reach 127.0.0.1:${port}: no answer within 5 s`);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      vi.useRealTimers();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => hole.close(() => r()));
    }
  });

  it('fails with a one-line error on a non-routable address (10.255.255.1)', async () => {
    await fresh();
    // Where the network is open this times out after 5 s; in a sandbox that intercepts all
    // connections it gets that proxy's answer. Either way: one clear line, nothing left.
    const err = await downloadModel('http://10.255.255.1/model.gguf', { dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/^(cannot reach 10\.255\.255\.1: |download of model\.gguf failed: )/);
    expect((err as Error).message).not.toContain('\n');
    expect(await readdir(dir)).toEqual([]);
  });

  it('stops on abort and keeps the partial for a later resume', async () => {
    await fresh();
    server = await serveBuffer({ '/tiny.gguf': model }, { throttle: { bytes: 256 * 1024, everyMs: 20 } });
    const ac = new AbortController();
    const p = downloadModel(server.url('/tiny.gguf'), {
      dir,
      signal: ac.signal,
      progressIntervalMs: 0,
      onProgress: (s) => {
        if (s.bytes > 1_000_000) ac.abort();
      },
    });
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect(existsSync(join(dir, 'tiny.gguf'))).toBe(false);
    expect(existsSync(join(dir, 'tiny.gguf.partial'))).toBe(true);
  });
});

describe('DownloadManager', () => {
  it('runs a download in the background with progress, done and cancel', async () => {
    await fresh();
    server = await serveBuffer({ '/a.gguf': model, '/b.gguf': model }, { throttle: { bytes: 512 * 1024, everyMs: 10 } });
    const mgr = new DownloadManager({ dir });
    const progress: DownloadState[] = [];
    mgr.on('progress', (s) => progress.push(s));
    const a = mgr.start(server.url('/a.gguf'));
    expect(a.status).toBe('queued');
    expect(() => mgr.start(server!.url('/a.gguf'))).toThrow(/already downloading/);
    const finalA = await mgr.wait(a.id);
    expect(finalA.status).toBe('done');
    expect(progress.some((s) => s.id === a.id && s.status === 'downloading')).toBe(true);
    const b = mgr.start(server.url('/b.gguf'));
    // Cancelled mid-transfer (the throttled server takes over a second to send it).
    await new Promise<void>((resolve) => mgr.on('progress', (s) => s.id === b.id && s.status === 'downloading' && resolve()));
    mgr.cancel(b.id);
    const finalB = await mgr.wait(b.id);
    expect(finalB.status).toBe('cancelled');
    expect(mgr.list().map((s) => s.status).sort()).toEqual(['cancelled', 'done']);
    await mgr.dispose();
  });
});

describe('DownloadManager after a restart', () => {
  it('a cancelled download resumes in a new manager from the partial file', async () => {
    await fresh();
    server = await serveBuffer({ '/r.gguf': model }, { throttle: { bytes: 256 * 1024, everyMs: 10 } });
    const first = new DownloadManager({ dir });
    const a = first.start(server.url('/r.gguf'));
    await new Promise<void>((resolve) => first.on('progress', (s) => s.bytes > 2_000_000 && resolve()));
    first.cancel(a.id);
    expect((await first.wait(a.id)).status).toBe('cancelled');
    await first.dispose();
    const second = new DownloadManager({ dir });
    const b = second.start(server.url('/r.gguf'));
    const end = await second.wait(b.id);
    expect(end.status).toBe('done');
    expect(end.resumedFrom).toBeGreaterThan(2_000_000);
    expect(server.requests.at(-1)?.status).toBe(206);
    expect(sha(await readFile(join(dir, 'r.gguf')))).toBe(sha(model));
    await second.dispose();
  });
});

describe('hostile servers and names', () => {
  it('a URL whose name decodes to ../../escaped.gguf lands inside --dir as escaped.gguf', async () => {
    await fresh();
    const target = join(dir, 'a', 'b');
    // The fixture decodes the path as a naive server would: it serves the bytes at that name.
    server = await serveBuffer({ '/x/../../escaped.gguf': model });
    const done = await downloadModel(server.url('/x/..%2f..%2fescaped.gguf'), { dir: target });
    expect(done.dest).toBe(join(target, 'escaped.gguf'));
    expect(await readdir(target)).toEqual(['escaped.gguf']);
    expect(await readdir(dir)).toEqual(['a']);
    expect(await readdir(join(dir, 'a'))).toEqual(['b']);
    expect(sha(await readFile(join(target, 'escaped.gguf')))).toBe(sha(model));
  });

  it('reduces decoded separators to a base name and refuses names that are none', async () => {
    expect((await resolveModelUri('http://h/a%5c..%5cwin.gguf')).fileName).toBe('win.gguf');
    expect((await resolveModelUri('http://h/x/%2e%2e%2fup.gguf')).fileName).toBe('up.gguf');
    await expect(resolveModelUri('http://h/x/..%2f..')).rejects.toThrow(/does not end in a \.gguf file name/);
    await expect(resolveModelUri('http://h/x/%2e%2e')).rejects.toThrow(/does not end in a \.gguf file name/);
    await expect(resolveModelUri('http://h/x/bad%0a.gguf')).rejects.toThrow(/does not end in a \.gguf file name/);
  });

  it('a file that changed on a server without ETag is not spliced: a resumed 206 with another total starts over', async () => {
    await fresh();
    const other = await readFile(await tinyModelBPath());
    expect(other.length).not.toBe(model.length);
    const files: Record<string, Buffer> = { '/m.gguf': model };
    server = await serveBuffer(files, { etag: null, cutAfter: 3_000_000 });
    await expect(downloadModel(server.url('/m.gguf'), { dir, retries: 0 })).rejects.toThrow(/interrupted/);
    files['/m.gguf'] = other;
    const done = await downloadModel(server.url('/m.gguf'), { dir, retries: 0 });
    expect(server.requests.map((r) => [r.range === undefined ? 'whole' : 'range', r.status])).toEqual([
      ['whole', 200],
      ['range', 206],
      ['whole', 200],
    ]);
    expect(done.bytes).toBe(other.length);
    expect(sha(await readFile(join(dir, 'm.gguf')))).toBe(sha(other));
    expect(await readdir(dir)).toEqual(['m.gguf']);
  });

  it('a same-size file with a new Last-Modified is not spliced either; the old date travels in If-Range', async () => {
    await fresh();
    const changed = Buffer.from(model);
    changed.writeUInt8(changed.readUInt8(changed.length - 1) ^ 0xff, changed.length - 1);
    const files: Record<string, Buffer> = { '/m.gguf': model };
    let date = 'Mon, 02 Nov 2026 10:00:00 GMT';
    // This server ignores If-Range, like the ones that caused the bug.
    server = await serveBuffer(files, { etag: null, lastModified: () => date, cutAfter: 3_000_000 });
    await expect(downloadModel(server.url('/m.gguf'), { dir, retries: 0 })).rejects.toThrow(/interrupted/);
    files['/m.gguf'] = changed;
    date = 'Mon, 23 Nov 2026 10:00:00 GMT';
    await downloadModel(server.url('/m.gguf'), { dir, retries: 0 });
    expect(server.requests[1]).toMatchObject({ ifRange: 'Mon, 02 Nov 2026 10:00:00 GMT', status: 206 });
    expect(server.requests[2]).toMatchObject({ range: undefined, status: 200 });
    expect(sha(await readFile(join(dir, 'm.gguf')))).toBe(sha(changed));
  });
});

describe('model URIs', () => {
  afterAll(() => undefined);
  it('resolves hf:user/repo/file.gguf without the network', () => {
    expect(resolveHfUri('hf:bartowski/Qwen2.5-7B-Instruct-GGUF/Qwen2.5-7B-Instruct-Q4_K_M.gguf')).toEqual({
      url: 'https://huggingface.co/bartowski/Qwen2.5-7B-Instruct-GGUF/resolve/main/Qwen2.5-7B-Instruct-Q4_K_M.gguf',
      fileName: 'Qwen2.5-7B-Instruct-Q4_K_M.gguf',
    });
    expect(() => resolveHfUri('hf:just-a-user')).toThrow(UserError);
    expect(() => resolveHfUri('hf:u/r/readme.md')).toThrow(/does not name a \.gguf file/);
  });

  it('resolves catalog ids and rejects unknown sources', async () => {
    const r = await resolveModelUri('qwen2.5-0.5b-instruct-q4_k_m');
    expect(r.url).toBe('https://huggingface.co/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/Qwen2.5-0.5B-Instruct-Q4_K_M.gguf');
    expect(r.expectedSize).toBeGreaterThan(1e8);
    await expect(resolveModelUri('no-such-model')).rejects.toThrow(/not a catalog id, an hf: URI or an https URL/);
  });

  it('resolves hf:user/repo:QUANT through the (local) Hugging Face API', async () => {
    await fresh();
    const api = { siblings: [{ rfilename: 'README.md' }, { rfilename: 'M-Q8_0.gguf' }, { rfilename: 'M-Q4_K_M-00001-of-00002.gguf' }, { rfilename: 'M-Q4_K_M.gguf' }] };
    server = await serveBuffer({ '/api/models/u/m': Buffer.from(JSON.stringify(api)), '/u/m/resolve/main/M-Q4_K_M.gguf': model });
    const endpoint = server.url('');
    const r = await resolveModelUri('hf:u/m:q4_k_m', { hfEndpoint: endpoint });
    expect(r.fileName).toBe('M-Q4_K_M.gguf');
    const done = await downloadModel('hf:u/m:Q4_K_M', { dir, hfEndpoint: endpoint });
    expect(done.dest).toBe(join(dir, 'M-Q4_K_M.gguf'));
    await expect(resolveModelUri('hf:u/m:Q2_K', { hfEndpoint: endpoint })).rejects.toThrow(/no single-file \.gguf with quantisation Q2_K/);
  });
});
