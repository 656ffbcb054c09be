// Creating a job reads its data file once: its first bytes once (format and columns, openDataset),
// then one pass for the rows, the fingerprint (hashed from the bytes the rows are read from) and,
// without a label map, the gold values the suggested map is made from. Every byte read from the
// file goes through node:fs's createReadStream, which is wrapped here to count them.
import { createHash } from 'node:crypto';
import type * as fs from 'node:fs';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { JobManager, openDataset, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';

const counted = vi.hoisted(() => ({ path: '', bytes: 0, closed: [] as Promise<void>[] }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  const createReadStream = ((path: fs.PathLike, options?: Parameters<typeof real.createReadStream>[1]) => {
    const stream = real.createReadStream(path, options);
    if (String(path) === counted.path) {
      counted.closed.push(new Promise<void>((resolve) => stream.once('close', () => ((counted.bytes += stream.bytesRead), resolve()))));
    }
    return stream;
  }) as typeof real.createReadStream;
  return { ...real, createReadStream, default: { ...real, createReadStream } };
});

const dir = mkdtempSync(join(tmpdir(), 'tatra-read-once-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

// The format and the columns come from the first 64 KiB, read once; the rows, the hash and the
// gold values share one pass over the whole file. Counted from each stream's bytesRead once it has
// closed (a 'data' listener would switch the stream to flowing mode and change what it reads).
const HEAD_READS = 64 * 1024;
const ROWS = 10_000;
const file = join(dir, 'big.csv');
writeFileSync(file, 'text,label\n' + Array.from({ length: ROWS }, (_, i) => `"review number ${i} of a film that was ${i % 2 ? 'fine' : 'dull'}, written out at some length",${i % 2}`).join('\n') + '\n');
const size = statSync(file).size;
const sha = `sha256:${createHash('sha256').update(readFileSync(file)).digest('hex')}`;

function manager(): JobManager {
  const store = openJobStore(join(dir, `d${stores.length}`));
  stores.push(store);
  const backends: BackendProvider = { acquire: async () => Promise.reject(new Error('not used: the job is only created')) };
  return new JobManager({ store, backends, inspectModel: plainModelRef });
}

const spec = (extra = {}) => ({
  task: 'sst2',
  settings: { n: 2, k: 4, r: 2, seed: 7, scope: 'run' as const },
  generatorPath: 'gen.gguf',
  evaluatorPath: 'eval.gguf',
  dataset: { path: file, mapping: { textColumn: 'text', labelColumn: 'label', labelMap: { '1': 'positive', '0': 'negative' } } },
  ...extra,
});

describe('job creation reads the data file once', () => {
  it('whole file: the fingerprint is the sha256 of the bytes read once', async () => {
    expect(size).toBeGreaterThan(4 * HEAD_READS);
    counted.path = file;
    counted.bytes = 0;
    const job = await manager().create(spec());
    await Promise.all(counted.closed.splice(0));
    expect(job.rowsTotal).toBe(ROWS);
    expect(job.dataset.fingerprint).toBe(sha);
    expect(counted.bytes).toBeGreaterThanOrEqual(size);
    expect(counted.bytes).toBeLessThanOrEqual(size + HEAD_READS);
  });

  it('without a label map: the map is suggested from the gold values of that same pass', async () => {
    counted.path = file;
    counted.bytes = 0;
    const job = await manager().create(spec({ dataset: { path: file, mapping: { textColumn: 'text', labelColumn: 'label' } } }));
    await Promise.all(counted.closed.splice(0));
    expect(job.rowsTotal).toBe(ROWS);
    expect(job.dataset.fingerprint).toBe(sha);
    // 0/1 mapped by index to the task's labels, and every row's gold with it.
    expect(job.dataset.mapping.labelMap).toEqual({ '0': 'negative', '1': 'positive' });
    expect(job.dataset.stats.unmappedGold).toEqual({});
    expect(counted.bytes).toBeGreaterThanOrEqual(size);
    expect(counted.bytes).toBeLessThanOrEqual(size + HEAD_READS);
  });

  it('opened by the caller (tatra eval guesses its columns): the head is not read again', async () => {
    counted.path = file;
    counted.bytes = 0;
    const opened = await openDataset(file);
    expect(opened.columns).toEqual(['text', 'label']);
    expect([opened.suggestedTextColumn, opened.suggestedLabelColumn]).toEqual(['text', 'label']);
    const jobs = manager();
    const job = await jobs.create(spec({ dataset: { path: file, mapping: { textColumn: 'text', labelColumn: 'label' }, opened } }));
    await Promise.all(counted.closed.splice(0));
    expect(job.dataset.fingerprint).toBe(sha);
    expect(counted.bytes).toBeLessThanOrEqual(size + HEAD_READS);
    const gold = jobs.rows(job.id, { limit: 4 }).rows.map((r) => [r.goldRaw, r.gold]);
    expect(gold).toEqual([
      ['0', 'negative'],
      ['1', 'positive'],
      ['0', 'negative'],
      ['1', 'positive'],
    ]);
  });

  it('a row limit stops the parsing, and the rest of the file is hashed from where it stopped', async () => {
    // (What the stream had read ahead past the last parsed row is read again; the file is not.)
    counted.path = file;
    const job = await manager().create(spec({ limit: 3 }));
    await Promise.all(counted.closed.splice(0));
    expect(job.rowsTotal).toBe(3);
    expect(job.dataset.fingerprint).toBe(sha);
  });

  it('a row limit without a label map: the map weighs the whole file\'s gold values, the stats only the rows taken', async () => {
    counted.path = file;
    counted.bytes = 0;
    const job = await manager().create(spec({ limit: 3, dataset: { path: file, mapping: { textColumn: 'text', labelColumn: 'label' } } }));
    await Promise.all(counted.closed.splice(0));
    expect(job.rowsTotal).toBe(3);
    expect(job.dataset.stats.rows).toBe(3);
    expect(job.dataset.mapping.labelMap).toEqual({ '0': 'negative', '1': 'positive' });
    expect(job.dataset.fingerprint).toBe(sha);
    expect(counted.bytes).toBeLessThanOrEqual(size + HEAD_READS);
  });
});
