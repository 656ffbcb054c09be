// Where `jobs export --out` writes: a new path or a regular file is replaced atomically; a
// symbolic link keeps its link; a device, a named pipe or a link to one is written in place and
// never renamed over or removed (as root, `--out /dev/null` replaced the system's /dev/null with a
// regular file). Devices here are private nodes made in a temporary folder, never /dev itself.
import { execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobManager, openJobStore, type JobStore } from '../../../electron/jobs';
import { storePausedJob } from '../../helpers/stored-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-export-targets-'));
let store: JobStore;
let manager: JobManager;
let jobId = '';

beforeAll(async () => {
  store = openJobStore(join(dir, 'data'));
  manager = new JobManager({ store, backends: { acquire: () => Promise.reject(new Error('no models here')) } });
  jobId = await storePausedJob(store, { name: 'targets', rows: 30, input: (i) => `row ${i}` });
});
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A private character device like /dev/null (1,3), or null where this process may not make one. */
function privateNullDevice(path: string): string | null {
  try {
    execFileSync('mknod', [path, 'c', '1', '3'], { stdio: 'ignore' });
    return statSync(path).isCharacterDevice() ? path : null;
  } catch {
    return null;
  }
}

describe('jobs export onto what is already there', () => {
  it('a regular file is replaced, and a new path created', async () => {
    const file = join(dir, 'plain.csv');
    writeFileSync(file, 'old\n');
    await manager.export(jobId, 'csv', file);
    expect(readFileSync(file, 'utf8')).toMatch(/^index,line,input/);
    await manager.export(jobId, 'json', join(dir, 'new.json'));
    expect(JSON.parse(readFileSync(join(dir, 'new.json'), 'utf8')).rows).toHaveLength(30);
  });

  it('a symbolic link to a regular file stays a link; its target gets the export', async () => {
    const target = join(dir, 'target.csv');
    const link = join(dir, 'link.csv');
    writeFileSync(target, 'old\n');
    symlinkSync(target, link);
    await manager.export(jobId, 'csv', link);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(readFileSync(target, 'utf8')).toMatch(/^index,line,input/);
  });

  it('a named pipe (and a link to it) is written in place: the reader gets the export, the pipe stays', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const link = join(dir, 'pipe-link.csv');
    symlinkSync(fifo, link);
    for (const out of [fifo, link]) {
      const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
      let got = '';
      reader.stdout.on('data', (d: Buffer) => (got += d.toString()));
      const closed = new Promise((res) => reader.on('close', res));
      try {
        await manager.export(jobId, 'csv', out);
        await closed;
      } finally {
        reader.kill();
      }
      expect(got).toMatch(/^index,line,input/);
      expect(got.trim().split('\r\n')).toHaveLength(31);
      expect(lstatSync(fifo).isFIFO()).toBe(true);
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });

  it('a device node (and a link to it) is written in place and stays a device', async (ctx) => {
    const node = privateNullDevice(join(dir, 'null'));
    if (node === null) ctx.skip();
    const link = join(dir, 'null-link');
    symlinkSync(node!, link);
    for (const out of [node!, link]) {
      await manager.export(jobId, 'json', out);
      expect(statSync(node!).isCharacterDevice()).toBe(true);
    }
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    // Nothing was left beside them either.
    expect(() => lstatSync(`${node}.partial`)).toThrow();
  });

  it('a failed write into a device removes nothing', async (ctx) => {
    const node = privateNullDevice(join(dir, 'null-2'));
    if (node === null) ctx.skip();
    const ac = new AbortController();
    ac.abort();
    await expect(manager.export(jobId, 'csv', node!, ac.signal)).rejects.toThrow();
    expect(statSync(node!).isCharacterDevice()).toBe(true);
  });
});
