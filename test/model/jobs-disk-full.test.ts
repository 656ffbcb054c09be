// A job database on a disk that fills up, for real: a 2 MiB tmpfs holds the data
// folder, `tatra eval` imports a CSV that cannot fit, and `tatra jobs delete` must still work
// with the disk full to the last byte. Mounting needs root (or CAP_SYS_ADMIN); elsewhere the test
// says why it skipped.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
const WAL_LIMIT_BYTES = 1024 * 1024;
import { openJobStore } from '../../electron/jobs';
import { RESERVE_BYTES } from '../../electron/jobs/store-file';
import { storePausedJob } from '../helpers/stored-job';
import { tinyModelPath } from '../helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tatra-disk-full-'));
const dataDir = join(dir, 'data');
const KEPT_ROWS = 2500;
mkdirSync(dataDir);

function mountSmallDisk(): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dataDir], { stdio: 'pipe' });
    return null;
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString().trim();
    return stderr || (e as Error).message;
  }
}
const notMounted = mountSmallDisk();

afterAll(() => {
  if (notMounted === null) execFileSync('umount', [dataDir]);
  rmSync(dir, { recursive: true, force: true });
});

function tatra(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'tatra.js'), ...args, '--data-dir', dataDir], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((res) => child.on('close', (code) => res({ code, stdout, stderr })));
}

/** Writes zeros into the data folder until the file system refuses one more byte. */
function fillDisk(): void {
  const fd = openSync(join(dataDir, 'filler'), 'w');
  try {
    for (const size of [64 * 1024, 4096, 512, 1]) {
      const block = Buffer.alloc(size);
      for (;;) {
        try {
          writeSync(fd, block);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

if (notMounted !== null) {
  it.skip(`disk full: no 2 MiB tmpfs could be mounted for the data folder (${notMounted})`, () => undefined);
} else {
  it('a full disk during an import: one line naming the folder, the partial job undone, the WAL bounded, and jobs delete works on the still-full disk', async () => {
    // A job that fits, to delete later on the full disk: large enough (over twice the full-disk
    // reserve) that deleting it rewrites more pages than a full disk has room for in one transaction.
    const store = openJobStore(dataDir);
    let keptId = '';
    try {
      keptId = await storePausedJob(store, { name: 'kept', rows: KEPT_ROWS, input: (i) => `a kept review of a film that goes on and on, number ${i}` });
    } finally {
      store.close();
    }
    expect(statSync(join(dataDir, 'tatra.db')).size, 'the kept job is larger than the full-disk reserve').toBeGreaterThan(2 * RESERVE_BYTES);

    // About 2.6 MB of rows: more than the whole disk.
    const csv = join(dir, 'big.csv');
    const lines = ['text,label'];
    for (let i = 0; i < 40_000; i++) lines.push(`a long review of a film that goes on and on and on number ${i},${i % 2}`);
    writeFileSync(csv, `${lines.join('\n')}\n`);

    const model = await tinyModelPath();
    const failed = await tatra(['eval', '--task', 'sst2', '--data', csv, '--model', model, '--threads', '1']);
    expect(failed.code, failed.stderr).toBe(2);
    expect(failed.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^tatra: disk full: no space left in ${dataDir}; the import of ${csv} stopped after reading \\d+ rows and was undone; free some space and create the job again$`)),
    ]);
    // Before the fix the WAL held every imported row and filled the disk (2,060,288 bytes of 2 MiB).
    const wal = join(dataDir, 'tatra.db-wal');
    if (existsSync(wal)) expect(statSync(wal).size).toBeLessThanOrEqual(WAL_LIMIT_BYTES);

    // The database still opens and holds exactly the job from before: no 0-row failed job.
    const after = openJobStore(dataDir);
    try {
      expect(after.listJobs().map((j) => [j.id, j.status, j.rowsTotal])).toEqual([[keptId, 'paused', KEPT_ROWS]]);
    } finally {
      after.close();
    }

    fillDisk();
    expect(statfsSync(dataDir).bavail).toBe(0);
    const deleted = await tatra(['jobs', 'delete', keptId]);
    expect(deleted.stderr).toBe('');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toBe(`deleted ${keptId}\n`);
    const listed = await tatra(['jobs', 'list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });
}
