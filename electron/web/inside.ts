// Containment of paths: the check every "stays in its folder" rule uses (static files, exports,
// downloads, uploads).
import { isAbsolute, relative } from 'node:path';

/**
 * Whether `path` is `root` or lies under it, lexically (resolve both first; compare real paths
 * too where symlinks could point out). `relative` rather than a prefix test, so `/a/bc` is not
 * inside `/a/b`.
 */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !rel.startsWith('..\\') && !isAbsolute(rel));
}
