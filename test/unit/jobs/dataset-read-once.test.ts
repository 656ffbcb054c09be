// Creating a job reads its data file once: the fingerprint is hashed from the bytes the rows are
// read from, not by a second pass over the file (issue 10.9). Every byte read from the file goes
// through node:fs's createReadStream, which is wrapped here to count them.
import { createHash } from 'node:crypto';
import type * as fs from 'node:fs';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';

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

// Format detection looks at the first 64 KiB, twice (the job's and the reader's); the rows and
// the hash must share one pass over the rest. Counted from each stream's bytesRead once it has
// closed (a 'data' listener would switch the stream to flowing mode and change what it reads).
const HEAD_READS = 2 * 64 * 1024;
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

  it('a row limit stops the parsing, and the rest of the file is hashed from where it stopped', async () => {
    // (What the stream had read ahead past the last parsed row is read again; the file is not.)
    counted.path = file;
    const job = await manager().create(spec({ limit: 3 }));
    await Promise.all(counted.closed.splice(0));
    expect(job.rowsTotal).toBe(3);
    expect(job.dataset.fingerprint).toBe(sha);
  });
});
