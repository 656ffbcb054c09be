// A second instance must not open a window or touch the data folder (the first one owns its
// SQLite database): it quits at once and hands over to the first through `second-instance`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { installFakeElectron } from './fake-electron';

vi.mock('electron', async () => (await import('./fake-electron')).electronModule);
const created = vi.hoisted(() => ({ hosts: 0 }));
vi.mock('../../../electron/api/host', () => ({
  createApiHost: async () => {
    created.hosts += 1;
    throw new Error('a second instance must not start a host');
  },
}));

const userData = mkdtempSync(join(tmpdir(), 'tatra-shell-lock-'));
afterAll(() => rmSync(userData, { recursive: true, force: true }));

it('quits without a window, an IPC handler or a host when another instance holds the lock', async () => {
  const fake = installFakeElectron({ userData, lock: false });
  await import('../../../electron/main');
  await fake.logged('quit');
  expect(fake.quitCalls).toBe(1);
  expect(fake.windows).toHaveLength(0);
  expect(fake.ipcHandlers.size).toBe(0);
  expect(created.hosts).toBe(0);
});
