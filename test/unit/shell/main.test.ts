// electron/main.ts run against a recording Electron (fake-electron.ts) and a scripted API host:
// pins the wiring that no type checker sees. The window really gets webPreferencesFor(); the
// sandbox and the privileged scheme are set up before `ready`; every webContents refuses foreign
// navigation, new windows and webviews; permissions are refused; the IPC handler checks the
// sender before the host sees anything; quitting waits for host.dispose().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CANCEL_CHANNEL, EVENT_CHANNEL, INVOKE_CHANNEL } from '../../../electron/common/contract/bridge';
import { APP_ENTRY_URL, webPreferencesFor } from '../../../electron/security';
import { fakeEvent, installFakeElectron, type FakeState, type FakeWebContents } from './fake-electron';

vi.mock('electron', async () => (await import('./fake-electron')).electronModule);

interface ScriptedHost {
  options: Record<string, unknown>[];
  invoked: [string, unknown][];
  /** The signal each call reached the host with, in order. */
  signals: (AbortSignal | undefined)[];
  /** Woken with the signal of the next 'plans.job' call, which answers once it is aborted. */
  planWaiters: ((signal: AbortSignal | undefined) => void)[];
  listener: ((event: string, payload: unknown) => void) | undefined;
  disposeCalls: number;
  finishDispose: () => void;
  /** Resolves once main.ts has subscribed to the host's events (the host has started). */
  subscribed: Promise<void>;
  /** Resolves once main.ts has called dispose(). */
  disposing: Promise<void>;
  signal: { subscribed: () => void; disposing: () => void };
}

const scripted = vi.hoisted(() => {
  const signal = { subscribed: () => undefined, disposing: () => undefined } as ScriptedHost['signal'];
  const s: ScriptedHost = {
    options: [],
    invoked: [],
    signals: [],
    planWaiters: [],
    listener: undefined,
    disposeCalls: 0,
    finishDispose: () => undefined,
    subscribed: new Promise<void>((r) => void (signal.subscribed = r)),
    disposing: new Promise<void>((r) => void (signal.disposing = r)),
    signal,
  };
  return s;
});

vi.mock('../../../electron/api/host', () => ({
  createApiHost: async (options: Record<string, unknown>) => {
    scripted.options.push(options);
    return {
      dataDir: options.dataDir,
      invoke: async (method: string, input: unknown, options?: { signal?: AbortSignal }) => {
        scripted.invoked.push([method, input]);
        scripted.signals.push(options?.signal);
        if (method === 'plans.job') {
          const signal = options?.signal;
          scripted.planWaiters.shift()?.(signal);
          // A plan answers "cancelled" once its signal is aborted, as the host's planner does.
          if (signal) await new Promise((aborted) => signal.addEventListener('abort', aborted, { once: true }));
          return { ok: false, error: { code: 'cancelled', message: 'cancelled' } };
        }
        return { ok: true, value: { echo: method } };
      },
      subscribe: (listener: (event: string, payload: unknown) => void) => {
        scripted.listener = listener;
        scripted.signal.subscribed();
        return () => undefined;
      },
      dispose: () => {
        scripted.disposeCalls += 1;
        scripted.signal.disposing();
        return new Promise<void>((resolve) => {
          scripted.finishDispose = resolve;
        });
      },
    };
  },
}));

let fake: FakeState;
let userData: string;

beforeAll(async () => {
  userData = mkdtempSync(join(tmpdir(), 'tatra-shell-'));
  delete process.env.TATRA_DATA_DIR;
  fake = installFakeElectron({ userData });
  await import('../../../electron/main');
  // main.ts wires its IPC handler once the app is ready, and starts the host while the window loads.
  await fake.logged(`ipcMain.handle ${INVOKE_CHANNEL}`);
  await scripted.subscribed;
});

afterAll(() => rmSync(userData, { recursive: true, force: true }));

function invoke(senderUrl: string | null, method: unknown, input?: unknown, parent: unknown = null, ...named: [senderId: number, callId: unknown] | []): Promise<unknown> {
  const handler = fake.ipcHandlers.get(INVOKE_CHANNEL);
  if (!handler) throw new Error('no IPC handler');
  const senderFrame = senderUrl === null ? null : { url: senderUrl, parent };
  if (named.length === 0) return handler({ senderFrame, sender: { id: 1 } }, method, input) as Promise<unknown>;
  return handler({ senderFrame, sender: { id: named[0] } }, method, input, named[1]) as Promise<unknown>;
}

/** What the page's bridge.cancel(callId) sends, from `senderUrl` in webContents `senderId`. */
function cancel(senderUrl: string, senderId: number, callId: unknown): void {
  const listener = fake.ipcListeners.get(CANCEL_CHANNEL);
  if (!listener) throw new Error('no cancel listener');
  listener({ senderFrame: { url: senderUrl, parent: null }, sender: { id: senderId } }, callId);
}

describe('electron/main.ts startup', () => {
  it('sandboxes and registers the app scheme before ready, and takes the single-instance lock', () => {
    const at = (entry: string) => fake.log.indexOf(entry);
    expect(at('enableSandbox')).toBeGreaterThanOrEqual(0);
    expect(at('enableSandbox')).toBeLessThan(at('ready'));
    expect(at('registerSchemesAsPrivileged')).toBeGreaterThanOrEqual(0);
    expect(at('registerSchemesAsPrivileged')).toBeLessThan(at('ready'));
    expect(fake.privileged).toEqual([[{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]]);
    expect(at('requestSingleInstanceLock')).toBeGreaterThanOrEqual(0);
    expect(fake.app.has('second-instance')).toBe(true);
  });

  it('creates one window with exactly webPreferencesFor(preload) and loads the app origin', () => {
    expect(fake.windows).toHaveLength(1);
    const win = fake.windows[0]!;
    const prefs = win.options.webPreferences as { preload: string };
    expect(basename(prefs.preload)).toBe('preload.cjs');
    // The preload is looked up beside main (dist/electron/ once bundled).
    expect(dirname(prefs.preload)).toMatch(/electron$/);
    expect(prefs).toEqual(webPreferencesFor(prefs.preload, { devTools: true }));
    expect(win.loadedUrl).toBe(APP_ENTRY_URL);
  });

  it('serves the renderer through the app protocol and installs a menu', () => {
    expect(fake.protocolHandlers.has('app')).toBe(true);
    expect(fake.menu).toBeDefined();
  });

  it('starts the host on the user-data folder with the one thread default (the host applies it, honouring $TATRA_THREADS)', () => {
    expect(scripted.options).toHaveLength(1);
    expect(scripted.options[0]).toMatchObject({ dataDir: userData, mode: 'electron' });
    expect(scripted.options[0]).not.toHaveProperty('threads');
  });

  it('protects API keys typed into the app with safeStorage (the OS keychain) before they reach the disk', () => {
    const protect = (scripted.options[0] as { keyProtection?: { encrypt(s: string): string; decrypt(s: string): string } }).keyProtection;
    expect(protect).toBeDefined();
    const stored = protect!.encrypt('sk-typed');
    expect(stored).not.toContain('sk-typed');
    expect(protect!.decrypt(stored)).toBe('sk-typed');
  });
});

describe('every webContents is hardened', () => {
  let contents: FakeWebContents;
  beforeAll(() => {
    contents = fake.windows[0]!.webContents;
  });

  it.each(['will-navigate', 'will-frame-navigate', 'will-redirect'])('%s refuses foreign URLs and allows the app', (name) => {
    for (const url of ['https://evil.example/', 'file:///etc/passwd', 'app://other/']) {
      const e = fakeEvent({ url });
      contents.emit(name, e);
      expect(e.defaultPrevented, `${name} ${url}`).toBe(true);
    }
    const ok = fakeEvent({ url: 'app://tatra/index.html' });
    contents.emit(name, ok);
    expect(ok.defaultPrevented).toBe(false);
  });

  it('prevents webviews', () => {
    const e = fakeEvent();
    contents.emit('will-attach-webview', e);
    expect(e.defaultPrevented).toBe(true);
  });

  it('denies every new window, opening only validated http(s) links outside', () => {
    const open = contents.windowOpenHandler!;
    expect(open({ url: 'https://huggingface.co/Qwen' })).toEqual({ action: 'deny' });
    expect(open({ url: 'file:///bin/sh' })).toEqual({ action: 'deny' });
    expect(open({ url: 'javascript:alert(1)' })).toEqual({ action: 'deny' });
    expect(fake.opened).toEqual(['https://huggingface.co/Qwen']);
  });

  it('cancels every network and file request of the session', () => {
    expect(fake.requestFilter?.urls).toEqual(expect.arrayContaining(['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*', 'file://*/*']));
    const answers: unknown[] = [];
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    fake.onBeforeRequest!({ url: 'https://evil.example/x' }, (r: unknown) => answers.push(r));
    warn.mockRestore();
    expect(answers).toEqual([{ cancel: true }]);
  });

  it('refuses every permission request and check', () => {
    const answers: boolean[] = [];
    fake.permissionRequest!(null, 'media', (allowed: boolean) => answers.push(allowed));
    fake.permissionRequest!(null, 'notifications', (allowed: boolean) => answers.push(allowed));
    expect(answers).toEqual([false, false]);
    expect(fake.permissionCheck!(null, 'clipboard-read')).toBe(false);
    expect(fake.devicePermission!({})).toBe(false);
  });
});

describe('IPC', () => {
  it('forwards a call from the app frame to the host and returns its answer', async () => {
    const before = scripted.invoked.length;
    await expect(invoke('app://tatra/index.html', 'tasks.list', {})).resolves.toEqual({ ok: true, value: { echo: 'tasks.list' } });
    expect(scripted.invoked.slice(before)).toEqual([['tasks.list', {}]]);
  });

  it.each([
    ['file:///work/main/dist/renderer/index.html', null],
    ['http://evil.example/', null],
    ['devtools://devtools/bundled/inspector.html', null],
    ['app://tatra/index.html', { url: 'app://tatra/index.html' }],
    [null, null],
  ])('refuses sender %s (parent %o) before the host sees it', async (url, parent) => {
    const before = scripted.invoked.length;
    const reply = (await invoke(url, 'tasks.list', {}, parent)) as { ok: boolean; error: { code: string } };
    expect(reply).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(scripted.invoked.length).toBe(before);
  });

  it.each([42, '', 'x'.repeat(101), 'tasks list; rm', null])('refuses method %o', async (method) => {
    const before = scripted.invoked.length;
    const reply = await invoke('app://tatra/', method, {});
    expect(reply).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(scripted.invoked.length).toBe(before);
  });

  it('a call the page names is dropped by that page alone: the host sees its signal aborted; unnamed calls carry none', async () => {
    const before = scripted.signals.length;
    await invoke('app://tatra/', 'tasks.list', {});
    expect(scripted.signals.slice(before)).toEqual([undefined]);

    const reached = new Promise<AbortSignal | undefined>((wake) => void scripted.planWaiters.push(wake));
    const answer = invoke('app://tatra/', 'plans.job', {}, null, 1, 'plan-7');
    const signal = (await reached)!;
    expect(signal.aborted).toBe(false);
    // Another window's page, a foreign frame, another id, a bad id: none of them drops it.
    cancel('app://tatra/', 2, 'plan-7');
    cancel('https://evil.example/', 1, 'plan-7');
    cancel('app://tatra/', 1, 'plan-8');
    cancel('app://tatra/', 1, { toString: () => 'plan-7' });
    expect(signal.aborted).toBe(false);
    cancel('app://tatra/', 1, 'plan-7');
    expect(signal.aborted).toBe(true);
    await expect(answer).resolves.toMatchObject({ ok: false, error: { code: 'cancelled' } });
    // A bad call id is refused before the host sees the call.
    const count = scripted.invoked.length;
    await expect(invoke('app://tatra/', 'plans.job', {}, null, 1, 'no spaces')).resolves.toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(scripted.invoked.length).toBe(count);
  });

  it("a page that reloads, navigates away, crashes or closes drops the calls it named; its own in-page navigation and frames do not", async () => {
    const contents = fake.windows[0]!.webContents;
    const named = async (callId: string) => {
      const reached = new Promise<AbortSignal | undefined>((wake) => void scripted.planWaiters.push(wake));
      const answer = invoke('app://tatra/', 'plans.job', {}, null, contents.id, callId);
      return { signal: (await reached)!, answer };
    };
    const navigate = (details: { isMainFrame: boolean; isSameDocument: boolean }) => contents.emit('did-start-navigation', { ...fakeEvent(), url: 'app://tatra/', ...details });

    const first = await named('plan-reload');
    navigate({ isMainFrame: true, isSameDocument: true });
    navigate({ isMainFrame: false, isSameDocument: false });
    // Another page's reload is not this page's.
    const other = new (contents.constructor as new () => FakeWebContents)();
    fake.app.emit('web-contents-created', fakeEvent(), other);
    other.emit('did-start-navigation', { ...fakeEvent(), isMainFrame: true, isSameDocument: false });
    other.emit('destroyed');
    expect(first.signal.aborted).toBe(false);
    navigate({ isMainFrame: true, isSameDocument: false });
    expect(first.signal.aborted).toBe(true);
    await expect(first.answer).resolves.toMatchObject({ ok: false, error: { code: 'cancelled' } });

    for (const gone of ['render-process-gone', 'destroyed']) {
      const call = await named(`plan-${gone}`);
      expect(call.signal.aborted).toBe(false);
      contents.emit(gone, fakeEvent(), { reason: 'crashed' });
      expect(call.signal.aborted).toBe(true);
      await expect(call.answer).resolves.toMatchObject({ ok: false, error: { code: 'cancelled' } });
    }

    // The page after a reload names its calls afresh, and cancels them as before.
    const after = await named('plan-reload');
    cancel('app://tatra/', contents.id, 'plan-reload');
    expect(after.signal.aborted).toBe(true);
    await after.answer;
  });

  it('pushes host events to app windows only', () => {
    const win = fake.windows[0]!;
    scripted.listener!('classify.event', { id: 1 });
    expect(win.webContents.sent.at(-1)).toEqual([EVENT_CHANNEL, 'classify.event', { id: 1 }]);
    win.webContents.url = 'https://evil.example/';
    const count = win.webContents.sent.length;
    scripted.listener!('classify.event', { id: 2 });
    expect(win.webContents.sent.length).toBe(count);
    win.webContents.url = APP_ENTRY_URL;
  });
});

describe('quitting', () => {
  it('waits for host.dispose() before exiting, once', async () => {
    const quitsBefore = fake.quitCalls;
    const first = fakeEvent();
    fake.app.emit('before-quit', first);
    expect(first.defaultPrevented).toBe(true);
    await scripted.disposing;
    expect(scripted.disposeCalls).toBe(1);
    // A second quit request while disposing neither exits nor disposes twice (main.ts would call
    // dispose() within the emit, as it did for the first).
    const second = fakeEvent();
    fake.app.emit('before-quit', second);
    expect(second.defaultPrevented).toBe(true);
    expect(scripted.disposeCalls).toBe(1);
    expect(fake.quitCalls).toBe(quitsBefore);
    // Calls arriving while quitting are turned away instead of starting new work.
    await expect(invoke('app://tatra/', 'tasks.list', {})).resolves.toMatchObject({ ok: false, error: { code: 'cancelled' } });

    scripted.finishDispose();
    await fake.logged('quit');
    expect(scripted.disposeCalls).toBe(1);
    expect(fake.quitCalls).toBe(quitsBefore + 1);
    expect(fake.log.at(-1)).toBe('quit');
  });
});
