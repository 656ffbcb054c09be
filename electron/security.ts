// The desktop shell's security settings as plain data and pure functions, so a unit test can
// assert them without an Electron binary and main.ts cannot quietly drift from them.
// Follows Electron's security checklist (https://www.electronjs.org/docs/latest/tutorial/security):
// isolated, sandboxed renderer without Node; a strict CSP sent as a header by our own protocol;
// every navigation, new window, permission and foreign IPC sender refused. The CSP and the other
// response headers live in web/ (one definition for this shell and for `tatra serve`).
import type { WebPreferences } from 'electron';

/** The privileged scheme the renderer is served from (never `file://`). */
export const APP_SCHEME = 'app';
/** The scheme's single host; the renderer's origin is `app://tatra`. */
export const APP_HOST = 'tatra';
/** Where the window starts. */
export const APP_ENTRY_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

export interface WebPreferencesOptions {
  /** Devtools are for development builds only. Default false. */
  devTools?: boolean;
}

/** The BrowserWindow webPreferences of every TATRA window. */
export function webPreferencesFor(preloadPath: string, options: WebPreferencesOptions = {}): WebPreferences {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    experimentalFeatures: false,
    enableWebSQL: false,
    spellcheck: false,
    navigateOnDragDrop: false,
    safeDialogs: true,
    devTools: options.devTools ?? false,
  };
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * True when `url` is a page of the app itself (`app://tatra/...`). Compared by scheme and host,
 * not `URL.origin`: WHATWG URL reports "null" as the origin of non-special schemes in Node.
 * Credentials or a port make it foreign: the real origin never has them.
 */
export function isAppUrl(url: string): boolean {
  const u = parse(url);
  return u !== null && u.protocol === `${APP_SCHEME}:` && u.hostname === APP_HOST && u.port === '' && u.username === '' && u.password === '';
}

/** IPC sender check: only frames showing the app's own pages may call the API (not file://, devtools://, http(s)). */
export function isAllowedSender(url: string | null | undefined): boolean {
  return typeof url === 'string' && isAppUrl(url);
}

/**
 * Navigation rule for `will-navigate`/`will-redirect`/`will-frame-navigate`: the app is a single
 * page, so only a reload or route within its own origin is allowed; everything else is refused.
 */
export function isAllowedNavigation(url: string): boolean {
  return isAppUrl(url);
}

/**
 * Whether a link the user clicked may be handed to the system browser: plain http(s) with a host,
 * no credentials (they are a phishing device), at most 2,048 characters. Everything else
 * (file:, javascript:, custom schemes that launch other programs) is dropped.
 */
export function isSafeExternalUrl(url: string): boolean {
  if (url.length > 2048) return false;
  const u = parse(url);
  return u !== null && (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '' && u.username === '' && u.password === '';
}

/**
 * URL patterns of every request the renderer's session cancels: the UI needs no network at all
 * (the API goes over IPC; models download in the main process through Node, not the session), so
 * even a CSP mistake or a compromised page cannot reach a server or read local files.
 */
export const BLOCKED_REQUEST_PATTERNS: readonly string[] = Object.freeze(['http://*/*', 'https://*/*', 'ws://*/*', 'wss://*/*', 'ftp://*/*', 'file://*/*']);

/** Permission requests and checks (camera, notifications, clipboard, geolocation, …): all refused. */
export function isPermissionAllowed(_permission: string): boolean {
  return false;
}
