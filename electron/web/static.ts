// Serving the built renderer from a folder: the one lookup both faces use (Electron's app://
// protocol handler and `tatra serve`). A path is decoded first and then resolved against the
// root with a containment check, so `..`, `%2e%2e%2f` and drive-absolute paths all fail alike;
// symlinks are checked by their real paths. A path without an extension that names no file gets
// index.html, so a client-side route survives a reload.
import { realpath, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { SECURITY_HEADERS } from './headers';
import { isInside } from './inside';
import { mimeTypeFor } from './mime';

export type StaticPath = { ok: true; path: string } | { ok: false; status: 400 | 403; reason: string };

export type StaticFile =
  | { ok: true; path: string; size: number; headers: Record<string, string> }
  | { ok: false; status: 400 | 403 | 404 | 503; reason: string };

export const RENDERER_NOT_BUILT = 'the renderer is not built; run `npm run build:renderer` (vite build)';

/** Maps a URL path (still percent-encoded) onto a file under `root`, lexically. `/` is index.html. */
export function resolveStaticPath(root: string, encodedPathname: string): StaticPath {
  let pathname: string;
  try {
    pathname = decodeURIComponent(encodedPathname);
  } catch {
    return { ok: false, status: 400, reason: 'malformed escape' };
  }
  // A backslash is a separator on Windows; a NUL truncates paths in native code.
  if (pathname.includes('\0') || pathname.includes('\\')) return { ok: false, status: 400, reason: 'bad character in path' };
  const base = resolve(root);
  const wantsIndex = pathname === '' || pathname.endsWith('/');
  const file = resolve(base, pathname.replace(/^\/+/, ''), wantsIndex ? 'index.html' : '');
  if (!isInside(base, file)) return { ok: false, status: 403, reason: 'outside the renderer folder' };
  return { ok: true, path: file };
}

async function fileSize(path: string): Promise<number | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? s.size : null;
  } catch {
    return null;
  }
}

/**
 * The file to send for a URL path, with its headers (type, length, caching, SECURITY_HEADERS),
 * or the status and reason to refuse it with.
 */
export async function findStaticFile(root: string, encodedPathname: string): Promise<StaticFile> {
  const base = resolve(root);
  const lexical = resolveStaticPath(base, encodedPathname);
  if (!lexical.ok) return lexical;
  let path = lexical.path;
  const index = join(base, 'index.html');
  let size = await fileSize(path);
  if (size === null) {
    if (extname(path) !== '' && path !== index) return { ok: false, status: 404, reason: 'not found' };
    path = index;
    size = await fileSize(path);
    if (size === null) return { ok: false, status: 503, reason: RENDERER_NOT_BUILT };
  }
  // A symlink inside the folder could still point outside it; compare real paths.
  try {
    if (!isInside(await realpath(base), await realpath(path))) return { ok: false, status: 403, reason: 'outside the renderer folder' };
  } catch {
    return { ok: false, status: 404, reason: 'not found' };
  }
  const isPage = extname(path) === '.html';
  return {
    ok: true,
    path,
    size,
    headers: {
      ...SECURITY_HEADERS,
      'Content-Type': mimeTypeFor(path),
      'Content-Length': String(size),
      // Hashed assets may be cached a while; the page never, so a new build shows at once.
      'Cache-Control': isPage ? 'no-store' : 'private, max-age=3600',
    },
  };
}
