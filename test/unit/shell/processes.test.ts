// Temp folders left by a SIGKILLed process (tatra-prefix-*, a test run's tatra-e2e-csv-*) are swept
// by the next process that makes one; a live process's folder is never touched.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ownedTempDir, pidAlive, sweepStaleTempDirs, UNOWNED_TEMP_MAX_AGE_MS } from '../../../electron/processes';

const parent = mkdtempSync(join(tmpdir(), 'tatra-processes-test-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));

/** The pid of a process that has exited (spawnSync waits for it). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  expect(child.pid).toBeGreaterThan(0);
  expect(pidAlive(child.pid!)).toBe(false);
  return child.pid!;
}

function folder(name: string, ageMs = 0): string {
  const path = join(parent, name);
  mkdirSync(path);
  writeFileSync(join(path, 'prefix-1.bin'), 'snapshot');
  if (ageMs > 0) {
    const then = (Date.now() - ageMs) / 1000;
    utimesSync(path, then, then);
  }
  return path;
}

describe('temp folders owned by a process', () => {
  it("a dead pid's folder is removed when the next one is made; a live one's and this process's are kept", () => {
    const dead = folder(`tatra-prefix-${deadPid()}-abc123`);
    // The parent of this test process lives (and is not this process).
    const live = folder(`tatra-prefix-${process.ppid}-def456`);
    const mine = folder(`tatra-prefix-${process.pid}-ghi789`);
    const other = folder(`tatra-other-${deadPid()}-jkl012`);
    const made = ownedTempDir('tatra-prefix-', parent);
    expect(basename(made)).toMatch(new RegExp(`^tatra-prefix-${process.pid}-`));
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(mine)).toBe(true);
    // Another prefix is not this sweep's business.
    expect(existsSync(other)).toBe(true);
  });

  it('pid-less folders (named before they carried one) go only once older than the bound', () => {
    const old = folder('tatra-gguf-Xy12Ab', UNOWNED_TEMP_MAX_AGE_MS + 60 * 60 * 1000);
    const recent = folder('tatra-gguf-Qw34Er');
    expect(sweepStaleTempDirs('tatra-gguf-', { parent })).toEqual([old]);
    expect(existsSync(recent)).toBe(true);
  });
});
