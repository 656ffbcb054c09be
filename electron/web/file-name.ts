// A name a user or a server chose, made safe to keep as a file name in one of our folders.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** Letters, digits, dot, dash, underscore; never a path, never hidden, at most 120 characters. */
export function safeFileName(name: string, fallback = 'upload'): string {
  const base = basename(name.replace(/\\/g, '/')).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '');
  return base.slice(-120) || fallback;
}

/**
 * Where an uploaded file is kept: a fresh folder of its own under `uploadsDir`, so the file keeps
 * the name the user knows it by (no prefix to tell copies apart) and two uploads never collide.
 */
export async function uploadDestination(uploadsDir: string, name: string): Promise<string> {
  const dir = join(uploadsDir, randomUUID().slice(0, 8));
  await mkdir(dir, { recursive: true });
  return join(dir, safeFileName(name));
}
