// electron/main.ts over the real API host (no model needed): a call from the app's frame goes
// through main's IPC handler into createApiHost() and back, bad input comes back as a clear
// error, and quitting disposes the real host before the app exits. Only Electron is stood in for
// (fake-electron.ts), since its binary cannot run here.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { INVOKE_CHANNEL, type BridgeReply } from '../../../electron/common/contract/bridge';
import { fakeEvent, installFakeElectron, type FakeState } from './fake-electron';

vi.mock('electron', async () => (await import('./fake-electron')).electronModule);

let fake: FakeState;
let userData: string;

beforeAll(async () => {
  userData = mkdtempSync(join(tmpdir(), 'tatra-shell-host-'));
  delete process.env.TATRA_DATA_DIR;
  fake = installFakeElectron({ userData });
  await import('../../../electron/main');
  // main.ts wires its IPC handler once the app is ready.
  await fake.logged(`ipcMain.handle ${INVOKE_CHANNEL}`);
});

afterAll(() => rmSync(userData, { recursive: true, force: true }));

function invoke(method: string, input: unknown, url = 'app://tatra/index.html'): Promise<BridgeReply> {
  return fake.ipcHandlers.get(INVOKE_CHANNEL)!({ senderFrame: { url, parent: null } }, method, input) as Promise<BridgeReply>;
}

describe('main.ts over the real API host', () => {
  it('lists the built-in tasks through the IPC handler', async () => {
    const reply = await invoke('tasks.list', {});
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    const ids = (reply as Extract<BridgeReply, { ok: true }>).value as { task: { id: string } }[];
    expect(ids.map((e) => e.task.id)).toEqual(expect.arrayContaining(['sst2', 'cr', 'mr', 'sst5', 'news', 'trec', 'subj', 'medqa', 'gsm8k', 'deepmath', 'math500']));
  });

  it('answers an unknown task and an unknown method with clear errors', async () => {
    const unknownTask = await invoke('tasks.get', { id: 'no-such-task' });
    expect(unknownTask).toMatchObject({ ok: false, error: { message: expect.stringContaining('no-such-task') } });
    const unknownMethod = await invoke('nope.nothing', {});
    expect(unknownMethod).toMatchObject({ ok: false, error: { code: 'unknown_method' } });
    const badInput = await invoke('tasks.get', { id: 42 });
    expect(badInput).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
  });

  it('keeps the host in the user-data folder', async () => {
    const reply = await invoke('tasks.save', {
      task: await invoke('tasks.get', { id: 'sst2' }).then((r) => ({ ...((r as { value: { task: object } }).value.task), id: 'my-sst2', name: 'Mine' })),
    });
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    const again = await invoke('tasks.get', { id: 'my-sst2' });
    expect(again).toMatchObject({ ok: true, value: { source: 'user' } });
    // With no TATRA_DATA_DIR, main hands the host app.getPath('userData').
    expect((readdirSync(userData, { recursive: true }) as string[]).some((f) => f.includes('my-sst2'))).toBe(true);
  });

  it('refuses a foreign frame even with a valid call', async () => {
    expect(await invoke('tasks.list', {}, 'file:///etc/passwd')).toMatchObject({ ok: false, error: { code: 'forbidden' } });
  });

  it('quits only after disposing the real host', async () => {
    const e = fakeEvent();
    fake.app.emit('before-quit', e);
    expect(e.defaultPrevented).toBe(true);
    await fake.logged('quit');
    expect(fake.log.at(-1)).toBe('quit');
    expect(fake.quitCalls).toBe(1);
  });
});
