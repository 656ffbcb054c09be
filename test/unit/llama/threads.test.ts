// One thread default (llama/threads.ts), read by every face: $TATRA_THREADS wins; small machines
// use every core; the app's host and `tatra serve` (which pass no threads) follow it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApiHost } from '../../../electron/api/host';
import { UserError } from '../../../electron/common/errors';
import { defaultThreads, threadsFor } from '../../../electron/llama/threads';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('thread default', () => {
  it('uses every core up to 4, then all but one', () => {
    expect([1, 2, 3, 4, 5, 8, 16].map((c) => threadsFor(c, undefined))).toEqual([1, 2, 3, 4, 4, 7, 15]);
    expect(threadsFor(0, undefined)).toBe(1);
  });

  it('$TATRA_THREADS wins; a bad value is one clear error, not silently ignored', () => {
    expect(threadsFor(2, '6')).toBe(6);
    expect(threadsFor(16, ' 1 ')).toBe(1);
    expect(threadsFor(2, '')).toBe(2);
    for (const bad of ['0', '-2', 'many', '1.5']) {
      expect(() => threadsFor(2, bad)).toThrow(new UserError(`TATRA_THREADS must be a whole number of at least 1, got "${bad}"`, 'bad_env'));
    }
  });

  it('the API host (desktop app, tatra serve) honours $TATRA_THREADS when given no threads', async () => {
    vi.stubEnv('TATRA_THREADS', '3');
    expect(defaultThreads()).toBe(3);
    const dir = mkdtempSync(join(tmpdir(), 'tatra-threads-'));
    const host = await createApiHost({ dataDir: dir, mode: 'test' });
    try {
      expect(await host.invoke('app.info', {})).toMatchObject({ ok: true, value: { threads: 3 } });
    } finally {
      await host.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });

});
