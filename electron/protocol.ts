// Serves the built renderer (dist/renderer) from the privileged `app://tatra/` scheme instead of
// file://, so the page has a real origin that the IPC sender check and the CSP can name, and so
// file:// pages (which Chromium treats loosely) never run with the bridge.
// Electron's `protocol` object is passed in rather than imported: the handler is plain fetch-API
// code over fs, and a unit test can exercise it (traversal, MIME types, CSP) without Electron.
import type { Protocol } from 'electron';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { APP_HOST, APP_SCHEME } from './security';
import { SECURITY_HEADERS } from './web/headers';
import { findStaticFile, resolveStaticPath } from './web/static';

/** Registered before `app.whenReady()`. standard: real origin and relative URLs; secure: like https. */
export const APP_SCHEME_PRIVILEGES = Object.freeze({
  scheme: APP_SCHEME,
  privileges: Object.freeze({ standard: true, secure: true, supportFetchAPI: true }),
});

export type AssetResolution = { ok: true; path: string } | { ok: false; status: 400 | 403 | 404; reason: string };

/** The path part of an `app://tatra/…` URL, or why it is refused (malformed, foreign origin). */
function appPathname(url: string): { ok: true; pathname: string } | { ok: false; status: 400 | 403; reason: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, status: 400, reason: 'malformed URL' };
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.hostname !== APP_HOST) return { ok: false, status: 403, reason: 'foreign origin' };
  return { ok: true, pathname: u.pathname };
}

/**
 * Maps an `app://tatra/<path>` URL onto a file under `rootDir`, lexically (web/static.ts): a
 * foreign host, a malformed escape, a NUL byte, a backslash or any path that leaves `rootDir`
 * after decoding is refused. `/` is index.html. Symlinks are checked by the handler.
 */
export function resolveAssetPath(rootDir: string, url: string): AssetResolution {
  const p = appPathname(url);
  return p.ok ? resolveStaticPath(rootDir, p.pathname) : p;
}

function errorResponse(status: number, reason: string): Response {
  return new Response(`${status} ${reason}\n`, {
    status,
    headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' },
  });
}

/**
 * The request handler for `protocol.handle(APP_SCHEME, …)`: GET/HEAD of the renderer's files
 * through the same lookup `tatra serve` uses, SECURITY_HEADERS (the CSP among them) on every
 * response, errors included.
 */
export function createAppProtocolHandler(rootDir: string): (request: Request) => Promise<Response> {
  const root = resolve(rootDir);
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return errorResponse(405, 'method not allowed');
    const p = appPathname(request.url);
    if (!p.ok) return errorResponse(p.status, p.reason);
    const file = await findStaticFile(root, p.pathname);
    if (!file.ok) return errorResponse(file.status, file.reason);
    const body = request.method === 'HEAD' ? null : await readFile(file.path);
    return new Response(body, { status: 200, headers: file.headers });
  };
}

/** Before `app.whenReady()`: declares the app scheme privileged (only possible once, before ready). */
export function registerAppScheme(protocolApi: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocolApi.registerSchemesAsPrivileged([{ scheme: APP_SCHEME_PRIVILEGES.scheme, privileges: { ...APP_SCHEME_PRIVILEGES.privileges } }]);
}

/** After ready: serves `rootDir` on the app scheme for the session `protocolApi` belongs to. */
export function handleAppProtocol(protocolApi: Pick<Protocol, 'handle'>, rootDir: string): void {
  protocolApi.handle(APP_SCHEME, createAppProtocolHandler(rootDir));
}
