// Serves the built renderer (dist/renderer) from the privileged `app://tatra/` scheme instead of
// file://, so the page has a real origin that the IPC sender check and the CSP can name, and so
// file:// pages (which Chromium treats loosely) never run with the bridge.
// Electron's `protocol` object is passed in rather than imported: the handler is plain fetch-API
// code over fs, and a unit test can exercise it (traversal, MIME types, CSP) without Electron.
import type { Protocol } from 'electron';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { APP_HOST, APP_SCHEME, SECURITY_HEADERS } from './security';

/** Registered before `app.whenReady()`. standard: real origin and relative URLs; secure: like https. */
export const APP_SCHEME_PRIVILEGES = Object.freeze({
  scheme: APP_SCHEME,
  privileges: Object.freeze({ standard: true, secure: true, supportFetchAPI: true }),
});

const MIME_TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.wasm': 'application/wasm',
});

/** Content-Type for a file name; unknown types are served as opaque bytes (with nosniff). */
export function mimeTypeFor(path: string): string {
  return MIME_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

export type AssetResolution = { ok: true; path: string } | { ok: false; status: 400 | 403 | 404; reason: string };

/**
 * Maps an `app://tatra/<path>` URL onto a file under `rootDir`, lexically: a foreign host, a
 * malformed escape, a NUL byte, a backslash or any path that leaves `rootDir` after decoding is
 * refused. `/` is index.html. Symlinks are checked separately by the handler.
 */
export function resolveAssetPath(rootDir: string, url: string): AssetResolution {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, status: 400, reason: 'malformed URL' };
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.hostname !== APP_HOST) return { ok: false, status: 403, reason: 'foreign origin' };
  let pathname: string;
  try {
    pathname = decodeURIComponent(u.pathname);
  } catch {
    return { ok: false, status: 400, reason: 'malformed escape' };
  }
  // A backslash is a separator on Windows; a NUL truncates paths in native code.
  if (pathname.includes('\0') || pathname.includes('\\')) return { ok: false, status: 400, reason: 'bad character in path' };
  const root = resolve(rootDir);
  const wantsIndex = pathname === '' || pathname.endsWith('/');
  // resolve() against the root, then a containment check: catches `..`, encoded `%2e%2e%2f` and
  // drive-absolute paths alike, since decoding happened first.
  const file = resolve(root, pathname.replace(/^\/+/, ''), wantsIndex ? 'index.html' : '');
  if (!isInside(root, file)) return { ok: false, status: 403, reason: 'outside the renderer folder' };
  return { ok: true, path: file };
}

function isInside(root: string, file: string): boolean {
  const rel = relative(root, file);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function errorResponse(status: number, reason: string): Response {
  return new Response(`${status} ${reason}\n`, {
    status,
    headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' },
  });
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * The request handler for `protocol.handle(APP_SCHEME, …)`: GET/HEAD of files under `rootDir`
 * with their MIME type and SECURITY_HEADERS (the CSP among them) on every response, errors
 * included. A path without an extension that names no file gets index.html, so a client-side
 * route survives a reload.
 */
export function createAppProtocolHandler(rootDir: string): (request: Request) => Promise<Response> {
  const root = resolve(rootDir);
  let realRoot: Promise<string> | undefined;
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return errorResponse(405, 'method not allowed');
    const resolved = resolveAssetPath(root, request.url);
    if (!resolved.ok) return errorResponse(resolved.status, resolved.reason);
    let path = resolved.path;
    const index = join(root, 'index.html');
    if (!(await isFile(path))) {
      if (extname(path) !== '' && path !== index) return errorResponse(404, 'not found');
      path = index;
      if (!(await isFile(path))) return errorResponse(404, 'renderer not built (run `npm run build:renderer`)');
    }
    // A symlink inside the folder could still point outside it; compare real paths.
    try {
      realRoot ??= realpath(root);
      if (!isInside(await realRoot, await realpath(path))) return errorResponse(403, 'outside the renderer folder');
    } catch {
      return errorResponse(404, 'not found');
    }
    const body = request.method === 'HEAD' ? null : await readFile(path);
    return new Response(body, {
      status: 200,
      headers: { ...SECURITY_HEADERS, 'Content-Type': mimeTypeFor(path), 'Cache-Control': 'no-cache' },
    });
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
