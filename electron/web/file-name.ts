// A name a user or a server chose, made safe to keep as a file name in one of our folders.
import { basename } from 'node:path';

/** Letters, digits, dot, dash, underscore; never a path, never hidden, at most 120 characters. */
export function safeFileName(name: string, fallback = 'upload'): string {
  const base = basename(name.replace(/\\/g, '/')).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '');
  return base.slice(-120) || fallback;
}
