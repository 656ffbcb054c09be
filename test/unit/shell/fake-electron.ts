// A recording stand-in for the parts of Electron's main-process API that electron/main.ts uses.
// Electron's binary cannot run here, so main.ts's wiring (which window options, which handlers,
// which order) is checked against this; the security decisions themselves are the real
// functions of electron/security.ts and electron/protocol.ts. The e2e test
// (e2e/electron.spec.ts) checks the same things in a real Electron where one exists.
// Install with `installFakeElectron()` before importing main.ts under `vi.mock('electron', …)`.

type Listener = (...args: unknown[]) => unknown;

export class Emitter {
  readonly listeners = new Map<string, Listener[]>();
  on(name: string, fn: Listener): this {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
    return this;
  }
  once(name: string, fn: Listener): this {
    return this.on(name, fn);
  }
  emit(name: string, ...args: unknown[]): unknown[] {
    return (this.listeners.get(name) ?? []).map((fn) => fn(...args));
  }
  has(name: string): boolean {
    return (this.listeners.get(name)?.length ?? 0) > 0;
  }
}

export interface FakeEvent {
  defaultPrevented: boolean;
  preventDefault(): void;
  url?: string;
}

export function fakeEvent(extra: Record<string, unknown> = {}): FakeEvent {
  const e = {
    defaultPrevented: false,
    preventDefault() {
      e.defaultPrevented = true;
    },
    ...extra,
  };
  return e;
}

export class FakeWebContents extends Emitter {
  private static nextId = 1;
  /** Like Electron's: unique in the process, the first window's is 1. */
  readonly id = FakeWebContents.nextId++;
  url = '';
  readonly sent: unknown[][] = [];
  windowOpenHandler: ((details: { url: string }) => { action: string }) | undefined;
  setWindowOpenHandler(fn: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = fn;
  }
  send(...args: unknown[]): void {
    this.sent.push(args);
  }
  getURL(): string {
    return this.url;
  }
}

export interface FakeState {
  /** What main.ts did, in order (pushed through record()). */
  log: string[];
  /** Resolves once `entry` is in the log: at once if it is there, else when main.ts does it. */
  logged(entry: string): Promise<void>;
  /** The waiters of logged(), woken by record(); kept on the state, which is shared through globalThis (the mock may load this module a second time). */
  logWaiters: { entry: string; wake: () => void }[];
  ready: boolean;
  lock: boolean;
  userData: string;
  windows: FakeBrowserWindow[];
  ipcHandlers: Map<string, Listener>;
  /** ipcMain.on listeners by channel (messages sent without an answer). */
  ipcListeners: Map<string, Listener>;
  privileged: unknown[];
  protocolHandlers: Map<string, Listener>;
  permissionRequest?: Listener;
  permissionCheck?: Listener;
  devicePermission?: Listener;
  requestFilter?: { urls: string[] };
  onBeforeRequest?: Listener;
  menu: unknown;
  opened: string[];
  quitCalls: number;
  app: FakeApp;
}

export class FakeApp extends Emitter {
  isPackaged = false;
  constructor(private readonly state: () => FakeState) {
    super();
  }
  enableSandbox(): void {
    record(this.state(), 'enableSandbox');
  }
  requestSingleInstanceLock(): boolean {
    record(this.state(), 'requestSingleInstanceLock');
    return this.state().lock;
  }
  getPath(name: string): string {
    if (name !== 'userData') throw new Error(`unexpected getPath(${name})`);
    return this.state().userData;
  }
  whenReady(): Promise<void> {
    record(this.state(), 'whenReady');
    return Promise.resolve().then(() => {
      this.state().ready = true;
      record(this.state(), 'ready');
    });
  }
  /** Like Electron: emits before-quit, and quits only when nobody prevented it. */
  quit(): void {
    const s = this.state();
    s.quitCalls += 1;
    const e = fakeEvent();
    this.emit('before-quit', e);
    record(s, e.defaultPrevented ? 'quit-prevented' : 'quit');
  }
}

export class FakeBrowserWindow extends Emitter {
  static getAllWindows(): FakeBrowserWindow[] {
    return current().windows.filter((w) => !w.destroyed);
  }
  readonly webContents = new FakeWebContents();
  destroyed = false;
  loadedUrl: string | undefined;
  constructor(readonly options: Record<string, unknown>) {
    super();
    const s = current();
    record(s, 'BrowserWindow');
    s.windows.push(this);
    // Real Electron announces every new webContents on the app before anything loads.
    s.app.emit('web-contents-created', fakeEvent(), this.webContents);
  }
  loadURL(url: string): Promise<void> {
    this.loadedUrl = url;
    this.webContents.url = url;
    return Promise.resolve();
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isMinimized(): boolean {
    return false;
  }
  restore(): void {}
  focus(): void {}
  show(): void {}
}

function record(s: FakeState, entry: string): void {
  s.log.push(entry);
  s.logWaiters = s.logWaiters.filter((w) => {
    if (w.entry !== entry) return true;
    w.wake();
    return false;
  });
}

const KEY = '__tatraFakeElectron';
type Holder = { [KEY]?: FakeState };

function current(): FakeState {
  const s = (globalThis as Holder)[KEY];
  if (!s) throw new Error('installFakeElectron() was not called before importing main.ts');
  return s;
}

export function installFakeElectron(options: { lock?: boolean; userData: string }): FakeState {
  const state: FakeState = {
    log: [],
    logged: (entry) => (state.log.includes(entry) ? Promise.resolve() : new Promise((wake) => void state.logWaiters.push({ entry, wake }))),
    logWaiters: [],
    ready: false,
    lock: options.lock ?? true,
    userData: options.userData,
    windows: [],
    ipcHandlers: new Map(),
    ipcListeners: new Map(),
    privileged: [],
    protocolHandlers: new Map(),
    menu: undefined,
    opened: [],
    quitCalls: 0,
    app: new FakeApp(() => state),
  };
  (globalThis as Holder)[KEY] = state;
  return state;
}

/** What `import … from 'electron'` yields under the mock; reads the state installed last. */
export const electronModule = {
  get app() {
    return current().app;
  },
  BrowserWindow: FakeBrowserWindow,
  Menu: {
    buildFromTemplate: (template: unknown) => ({ template }),
    setApplicationMenu: (menu: unknown) => {
      current().menu = menu;
    },
  },
  ipcMain: {
    handle: (channel: string, fn: Listener) => {
      record(current(), `ipcMain.handle ${channel}`);
      current().ipcHandlers.set(channel, fn);
    },
    on: (channel: string, fn: Listener) => {
      record(current(), `ipcMain.on ${channel}`);
      current().ipcListeners.set(channel, fn);
    },
  },
  protocol: {
    registerSchemesAsPrivileged: (schemes: unknown) => {
      const s = current();
      record(s, s.ready ? 'registerSchemesAsPrivileged after ready' : 'registerSchemesAsPrivileged');
      s.privileged.push(schemes);
    },
    handle: (scheme: string, fn: Listener) => {
      record(current(), `protocol.handle ${scheme}`);
      current().protocolHandlers.set(scheme, fn);
    },
  },
  session: {
    get defaultSession() {
      const s = current();
      return {
        setPermissionRequestHandler: (fn: Listener) => void (s.permissionRequest = fn),
        setPermissionCheckHandler: (fn: Listener) => void (s.permissionCheck = fn),
        setDevicePermissionHandler: (fn: Listener) => void (s.devicePermission = fn),
        webRequest: {
          onBeforeRequest: (filter: { urls: string[] }, fn: Listener) => {
            s.requestFilter = filter;
            s.onBeforeRequest = fn;
          },
        },
      };
    },
  },
  // The OS keychain, faked reversibly: what main.ts encrypts typed API keys with.
  safeStorage: {
    isEncryptionAvailable: () => true,
    encryptString: (plain: string) => Buffer.from(`fake-keychain:${[...plain].reverse().join('')}`),
    decryptString: (data: Buffer) => [...data.toString().replace(/^fake-keychain:/, '')].reverse().join(''),
  },
  shell: {
    openExternal: (url: string) => {
      current().opened.push(url);
      return Promise.resolve();
    },
  },
};
