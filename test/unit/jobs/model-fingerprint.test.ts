// A job records the hash of every byte of its model files and resume compares it: a model whose
// weights changed while its size, first MiB and last 64 KiB did not (and whose modification time
// was set back) is refused with one line, unless --accept-model-change, which records the change.
// Real GGUF (a copy of the whole-vocabulary tiny model, 16 MB: the middle of the file lies past the
// first MiB), real job store; no model is loaded (start stops
// at the comparison, before any backend is asked for).
import { copyFileSync, mkdtempSync, openSync, closeSync, readSync, rmSync, statSync, utimesSync, writeSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobManager, openJobStore, type JobStore } from '../../../electron/jobs';
import { modelContentHash } from '../../../electron/llama/content-hash';
import { resolveTask } from '../../../electron/tasks';
import { tinyFullModelPath } from '../../helpers/models';

const dir = mkdtempSync(join(tmpdir(), 'tatra-model-fingerprint-'));
const previousCache = process.env.TATRA_CACHE_DIR;
let store: JobStore;
let manager: JobManager;
let model = '';
let data = '';

beforeAll(async () => {
  process.env.TATRA_CACHE_DIR = join(dir, 'cache');
  model = join(dir, 'model.gguf');
  copyFileSync(await tinyFullModelPath(), model);
  data = join(dir, 'd.csv');
  writeFileSync(data, 'text,label\ngood,positive\nbad,negative\n');
  store = openJobStore(join(dir, 'data'));
  // A model that never finishes loading: the job is paused while it waits (no model is loaded here).
  manager = new JobManager({ store, backends: { acquire: (_path, o) => new Promise((_res, rej) => o?.signal?.addEventListener('abort', () => rej(o.signal!.reason), { once: true })) } });
});
afterAll(async () => {
  await manager.dispose();
  store.close();
  if (previousCache === undefined) delete process.env.TATRA_CACHE_DIR;
  else process.env.TATRA_CACHE_DIR = previousCache;
  rmSync(dir, { recursive: true, force: true });
});

/** Flips one byte in the middle of the file (past its first MiB, before its last 64 KiB) and sets its times back. */
function flipMiddleByte(path: string): void {
  const before = statSync(path);
  expect(before.size).toBeGreaterThan(2 * 1024 * 1024);
  const at = Math.floor(before.size / 2);
  const fd = openSync(path, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0] = b[0]! ^ 0xff;
    writeSync(fd, b, 0, 1, at);
  } finally {
    closeSync(fd);
  }
  utimesSync(path, before.atime, before.mtime);
}

async function newJob(): Promise<string> {
  const job = await manager.create({ task: await resolveTask('sst2'), settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' }, generatorPath: model, evaluatorPath: model, dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } } });
  return job.id;
}

describe('a model whose weights changed is seen on resume', () => {
  it('records the hash of all its bytes, once per version of the file', async () => {
    const id = await newJob();
    const ref = manager.get(id).generator;
    expect(ref.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await modelContentHash(model)).toBe(ref.contentHash);
  });

  it('same size, head, tail and modification time, other weights: refused, then accepted and recorded on request', async () => {
    const id = await newJob();
    const recorded = manager.get(id).generator;
    flipMiddleByte(model);
    const err = await manager.start(id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'model_changed' });
    expect(String((err as Error).message)).toMatch(/^job \S+: the generator model .* is not the one the job started with \(same size and header, other weights: content hash [0-9a-f]{12} → [0-9a-f]{12}\); resume with --accept-model-change/);
    expect((err as Error).message).not.toContain('\n');
    await manager.start(id, { acceptModelChange: true });
    await manager.pause(id);
    const now = manager.get(id).generator;
    expect(now.contentHash).not.toBe(recorded.contentHash);
    expect(now.headerHash).toBe(recorded.headerHash);
    expect(now.replaced?.map((r) => r.contentHash)).toEqual([recorded.contentHash]);
  });

  it('an unchanged file resumes as the same model', async () => {
    const id = await newJob();
    const hash = manager.get(id).generator.contentHash;
    await manager.start(id);
    await manager.pause(id);
    expect(manager.get(id).generator.contentHash).toBe(hash);
    expect(manager.get(id).generator.replaced).toBeUndefined();
  });
});
