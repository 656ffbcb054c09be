// Failures of the machine rather than of the program: a read-only or full disk, a missing folder,
// a folder where a file should be. They are the user's to fix, so every face words them as one
// line naming the path and the cause, never as "unexpected error: SQLITE_READONLY…". Pure: reads
// only the `code` and `path` Node and SQLite put on their errors.
import { UserError } from './errors';

const ERRNO_CAUSES: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  ENOENT: 'no such file or folder',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EEXIST: 'something else already exists there',
  EMFILE: 'too many open files',
  EIO: 'an input/output error of the disk',
};

function sqliteCause(code: string): string | null {
  if (code.startsWith('SQLITE_READONLY')) return 'the database is read-only (a read-only folder or file?)';
  if (code === 'SQLITE_FULL') return 'the disk is full';
  if (code.startsWith('SQLITE_CANTOPEN')) return 'the database file cannot be opened or created there (missing folder or no permission?)';
  if (code.startsWith('SQLITE_IOERR')) return 'the disk failed to read or write (full or failing disk?)';
  if (code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') return 'permission denied';
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') return 'it is not a TATRA database or it is damaged';
  return null;
}

/** The cause of an environment failure in words, or null when `e` is no such failure. */
export function environmentCause(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  return ERRNO_CAUSES[code] ?? (code.startsWith('SQLITE_') ? sqliteCause(code) : null);
}

/**
 * `e` as a one-line UserError naming what could not be used and why (`what` defaults to the
 * errno's own path), or null when it is not an environment failure.
 */
export function environmentError(e: unknown, what?: string): UserError | null {
  const cause = environmentCause(e);
  if (cause === null) return null;
  const path = (e as { path?: unknown }).path;
  const subject = what ?? (typeof path === 'string' ? path : null);
  return new UserError(subject ? `cannot use ${subject}: ${cause}` : cause, 'environment');
}

/** Whether `e` says the disk (or the quota) is full: SQLite's SQLITE_FULL or the errno. */
export function isDiskFull(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
}

/** The one line for a full disk: which folder, what was being done, what was kept or undone. */
export function diskFullError(folder: string, detail: string): UserError {
  return new UserError(`disk full: no space left in ${folder}; ${detail}`, 'disk_full');
}

/** Whether `e` says nothing is at the path: ENOENT, or ENOTDIR (a part of the path is a file). */
export function isMissing(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * A `.catch` that reads "nothing there" as `value` and lets every other failure through: a
 * permission error (EACCES) or a failing disk is not a missing file, and the faces word it
 * (environmentError) where reading it as missing said "does not exist" of a file that does.
 */
export function ifMissing<T>(value: T): (e: unknown) => T {
  return (e) => {
    if (isMissing(e)) return value;
    throw e;
  };
}
