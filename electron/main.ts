// Electron's main process: a thin, hardened face over the same API host that `tatra serve` uses.
// The window is isolated, sandboxed and Node-free (security.ts); the renderer comes from the
// privileged app:// scheme with a strict CSP (protocol.ts); every navigation, new window,
// webview and permission is refused; one IPC channel forwards validated calls from the app's own
// frame to the host. node-llama-cpp runs here, behind the host, with one core left for the UI.
// Quitting waits for the host to dispose models and close the database.
import { BrowserWindow, Menu, app, ipcMain, protocol, safeStorage, session, shell, type MenuItemConstructorOptions, type WebContents } from 'electron';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiHost } from './api/host';
import { errorMessage } from './common/errors';
import { CANCEL_CHANNEL, EVENT_CHANNEL, INVOKE_CHANNEL, isValidCallId, isValidMethodName, type BridgeReply } from './common/contract/bridge';
import { appRoot } from './paths';
import { handleAppProtocol, registerAppScheme } from './protocol';
import {
  APP_ENTRY_URL,
  BLOCKED_REQUEST_PATTERNS,
  isAllowedNavigation,
  isAllowedSender,
  isPermissionAllowed,
  isSafeExternalUrl,
  webPreferencesFor,
} from './security';

type ApiHost = Awaited<ReturnType<typeof createApiHost>>;

/** How long quitting waits for the host to dispose models and close the database. */
const DISPOSE_TIMEOUT_MS = 15_000;

const here = fileURLToPath(new URL('.', import.meta.url));
/** dist/electron/preload.cjs, built beside this file. */
const preloadPath = join(here, 'preload.cjs');
const rendererDir = join(appRoot(), 'dist', 'renderer');
const isDev = !app.isPackaged;

// Must happen before `ready`: sandbox every renderer, and declare app:// privileged.
app.enableSandbox();
registerAppScheme(protocol);

let host: ApiHost | undefined;
let hostStarting: Promise<ApiHost> | undefined;
let mainWindow: BrowserWindow | null = null;
let disposed = false;
let quitting = false;

function startHost(): Promise<ApiHost> {
  hostStarting ??= (async () => {
    const dataDir = process.env.TATRA_DATA_DIR ? resolve(process.env.TATRA_DATA_DIR) : app.getPath('userData');
    // models/ inside app.asar is read-only: a packaged app keeps downloads under userData.
    if (app.isPackaged && !process.env.TATRA_MODELS_DIR) process.env.TATRA_MODELS_DIR = join(app.getPath('userData'), 'models');
    // API keys typed into the app are encrypted with the OS keychain (safeStorage) before they touch
    // the disk; where it is unavailable they stay in the data folder's 0600 key file, as in browser mode.
    const keyProtection = safeStorage.isEncryptionAvailable()
      ? { encrypt: (plain: string) => safeStorage.encryptString(plain).toString('base64'), decrypt: (stored: string) => safeStorage.decryptString(Buffer.from(stored, 'base64')) }
      : undefined;
    const created = await createApiHost({ dataDir, mode: 'electron', ...(keyProtection ? { keyProtection } : {}) });
    host = created;
    created.subscribe((name, payload) => {
      for (const win of BrowserWindow.getAllWindows()) {
        if (!win.isDestroyed() && isAllowedSender(win.webContents.getURL())) win.webContents.send(EVENT_CHANNEL, name, payload);
      }
    });
    return created;
  })().catch((e: unknown) => {
    // Let the next call try again (a data folder made writable, say) instead of failing forever.
    hostStarting = undefined;
    throw e;
  });
  return hostStarting;
}

function reply(code: string, message: string): BridgeReply {
  return { ok: false, error: { code, message } };
}

/** The app's own top frame, the only sender IPC answers. */
function fromApp(event: Electron.IpcMainEvent | Electron.IpcMainInvokeEvent): boolean {
  const frame = event.senderFrame;
  return !!frame && frame.parent === null && isAllowedSender(frame.url);
}

/**
 * Calls each page named (bridge.ts cancel), by webContents and name: a page drops only its own, and
 * a page that reloads, navigates away, crashes or closes drops all of its (nobody is left to read
 * their answers).
 */
const namedCalls = new Map<number, Map<string, AbortController>>();

function dropNamedCalls(contentsId: number): void {
  const calls = namedCalls.get(contentsId);
  namedCalls.delete(contentsId);
  for (const call of calls?.values() ?? []) call.abort();
}

/** The one IPC entry: sender checked (the app's own top frame only), arguments checked, then the host. */
async function onInvoke(event: Electron.IpcMainInvokeEvent, method: unknown, input: unknown, callId?: unknown): Promise<BridgeReply> {
  if (!fromApp(event)) return reply('forbidden', 'IPC refused: the sender is not the app');
  if (!isValidMethodName(method)) return reply('bad_request', 'IPC refused: method must be a contract method name');
  if (callId !== undefined && !isValidCallId(callId)) return reply('bad_request', 'IPC refused: a call id is 1–64 letters, digits or dashes');
  if (quitting) return reply('cancelled', 'the app is quitting');
  let calls: Map<string, AbortController> | undefined;
  let named: AbortController | undefined;
  if (callId !== undefined) {
    calls = namedCalls.get(event.sender.id);
    if (!calls) namedCalls.set(event.sender.id, (calls = new Map()));
    // A name already in flight stays with its first call; the second runs unnamed.
    if (!calls.has(callId)) calls.set(callId, (named = new AbortController()));
  }
  try {
    const api = await startHost();
    return await api.invoke(method, input, named ? { signal: named.signal } : {});
  } catch (e) {
    // The host answers API errors as data; anything thrown here is a bug in the host itself.
    return reply('internal', errorMessage(e));
  } finally {
    if (named && callId !== undefined && calls?.get(callId) === named) {
      calls.delete(callId);
      if (calls.size === 0 && namedCalls.get(event.sender.id) === calls) namedCalls.delete(event.sender.id);
    }
  }
}

/** The page dropped a call it named: the host stops what it did only for that answer. */
function onCancel(event: Electron.IpcMainEvent, callId: unknown): void {
  if (!fromApp(event) || !isValidCallId(callId)) return;
  namedCalls.get(event.sender.id)?.get(callId)?.abort();
}

/** Applied to every webContents the app ever creates (windows, devtools, anything a bug might open). */
function hardenContents(contents: WebContents): void {
  const refuseNavigation = (e: { preventDefault(): void }, url: string): void => {
    if (!isAllowedNavigation(url)) {
      e.preventDefault();
      console.warn(`tatra: navigation refused: ${url.slice(0, 200)}`);
    }
  };
  contents.on('will-navigate', (e) => refuseNavigation(e, e.url));
  contents.on('will-frame-navigate', (e) => refuseNavigation(e, e.url));
  contents.on('will-redirect', (e) => refuseNavigation(e, e.url));
  contents.on('will-attach-webview', (e) => e.preventDefault());
  // A reload or a new document leaves no page to read the answers of the calls it named.
  contents.on('did-start-navigation', (details) => {
    if (details.isMainFrame && !details.isSameDocument) dropNamedCalls(contents.id);
  });
  contents.on('render-process-gone', () => dropNamedCalls(contents.id));
  contents.on('destroyed', () => dropNamedCalls(contents.id));
  contents.setWindowOpenHandler(({ url }) => {
    // Links to documentation and model pages open in the system browser, never in the app.
    if (isSafeExternalUrl(url)) shell.openExternal(url).catch((e: unknown) => console.error(`tatra: cannot open ${url} in the browser: ${e instanceof Error ? e.message : String(e)}`));
    return { action: 'deny' };
  });
}

function createWindow(): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 860,
    minWidth: 900,
    minHeight: 600,
    title: 'TATRA Studio',
    show: false,
    backgroundColor: '#111318',
    webPreferences: webPreferencesFor(preloadPath, { devTools: isDev }),
  });
  win.once('ready-to-show', () => win.show());
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = null;
  });
  void win.loadURL(APP_ENTRY_URL);
  return win;
}

function buildMenu(): Menu {
  const isMac = process.platform === 'darwin';
  const view: MenuItemConstructorOptions[] = [
    { role: 'reload' },
    ...(isDev ? ([{ role: 'toggleDevTools' }] as MenuItemConstructorOptions[]) : []),
    { type: 'separator' },
    { role: 'resetZoom' },
    { role: 'zoomIn' },
    { role: 'zoomOut' },
    { type: 'separator' },
    { role: 'togglefullscreen' },
  ];
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? ([{ role: 'appMenu' }] as MenuItemConstructorOptions[]) : []),
    { role: 'fileMenu' },
    { role: 'editMenu' },
    { label: 'View', submenu: view },
    { role: 'windowMenu' },
  ];
  return Menu.buildFromTemplate(template);
}

async function disposeHost(): Promise<void> {
  // A host that failed to start has nothing to dispose; its failure was shown when it failed.
  const pending = host ?? (hostStarting ? await hostStarting.catch(() => undefined) : undefined);
  if (!pending) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolveTimeout) => {
    timer = setTimeout(() => {
      console.error(`tatra: the API host did not finish disposing within ${DISPOSE_TIMEOUT_MS / 1000} s; quitting anyway`);
      resolveTimeout();
    }, DISPOSE_TIMEOUT_MS);
  });
  try {
    await Promise.race([pending.dispose(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

if (!app.requestSingleInstanceLock()) {
  // Another instance owns the data folder (and its SQLite database): hand over and leave.
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });

  app.on('web-contents-created', (_e, contents) => hardenContents(contents));

  app.on('before-quit', (e) => {
    if (disposed) return;
    e.preventDefault();
    if (quitting) return;
    quitting = true;
    void disposeHost()
      .catch((err: unknown) => console.error(`tatra: disposing the API host failed: ${errorMessage(err)}`))
      .finally(() => {
        disposed = true;
        app.quit();
      });
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  void app.whenReady().then(() => {
    const ses = session.defaultSession;
    ses.setPermissionRequestHandler((_wc, permission, callback) => callback(isPermissionAllowed(permission)));
    ses.setPermissionCheckHandler((_wc, permission) => isPermissionAllowed(permission));
    ses.setDevicePermissionHandler(() => false);
    ses.webRequest.onBeforeRequest({ urls: [...BLOCKED_REQUEST_PATTERNS] }, (details, callback) => {
      console.warn(`tatra: network request refused: ${details.url.slice(0, 200)}`);
      callback({ cancel: true });
    });
    handleAppProtocol(protocol, rendererDir);
    ipcMain.handle(INVOKE_CHANNEL, onInvoke);
    ipcMain.on(CANCEL_CHANNEL, onCancel);
    Menu.setApplicationMenu(buildMenu());
    mainWindow = createWindow();
    // Start the host while the window loads, so the first call does not pay for it.
    void startHost().catch((err: unknown) => console.error(`tatra: starting the API host failed: ${errorMessage(err)}`));
    app.on('activate', () => {
      if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow();
    });
  });
}
