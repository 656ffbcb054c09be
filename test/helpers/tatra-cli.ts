// Running the built `tatra` CLI from a model test, and reading what it left: the last JSON line
// of its output, and the job database (read-only) while or after it runs.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, watch } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { openJobStore } from '../../electron/jobs/store';
import type { JobRow } from '../../electron/jobs/types';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TATRA = join(repoRoot, 'bin', 'tatra.js');
/** One thread: several test processes share two cores. */
export const CLI_ENV = { ...process.env, TATRA_THREADS: '1' };

/** Runs `tatra …` to the end; rejects (with code, stdout, stderr) on a non-zero exit. */
export function tatraCli(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [TATRA, ...args], { cwd: repoRoot, env: CLI_ENV, maxBuffer: 64 * 1024 * 1024 });
}

/** The JSON a --json command printed (its last line that is an object or an array). */
export function lastJson<T>(stdout: string): T {
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{') || l.startsWith('[')).pop();
  if (!line) throw new Error(`no JSON in output: ${stdout.slice(0, 500)}`);
  return JSON.parse(line) as T;
}

/** Rows of a query on `<dataDir>/tatra.db`, read-only; none while the file does not exist yet. */
export function queryJobDb<T>(dataDir: string, sql: string, ...params: unknown[]): T[] {
  try {
    const db = new Database(join(dataDir, 'tatra.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

/**
 * Rows of a query on `<dataDir>/tatra.db` once they meet `condition`: read when the file appears and
 * again each time a process commits to it (fs.watch sees its write-ahead log change), never on a
 * timer, through one read-only connection (a new connection's first read touches the log too, and
 * would wake itself). Until `stop` settles (the writer's exit, say): then it resolves with the rows
 * as they are, so the expectation after it says what happened. A query that fails before then is
 * taken as a database still being made, and tried again on the next commit.
 */
export function whenJobDb<T>(dataDir: string, sql: string, condition: (rows: T[]) => boolean, stop: Promise<unknown>): Promise<T[]> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'tatra.db');
  let db: Database.Database | undefined;
  return new Promise<T[]>((resolve, reject) => {
    // Watching starts before the first read, so no commit falls between the two.
    const watcher = watch(dataDir, { persistent: false });
    const finish = (settle: () => void) => {
      watcher.close();
      db?.close();
      settle();
    };
    const check = (): void => {
      try {
        if (!db && existsSync(path)) db = new Database(path, { readonly: true, fileMustExist: true });
        const rows = db ? (db.prepare(sql).all() as T[]) : [];
        if (condition(rows)) finish(() => resolve(rows));
      } catch {
        /* not made yet: the next commit tries again */
      }
    };
    watcher.on('change', (_type: string, file: string | null) => {
      // The -shm index changes with every read, ours too.
      if (!file?.endsWith('-shm')) check();
    });
    watcher.on('error', (e) => finish(() => reject(e)));
    void stop.then(() => finish(() => resolve(queryJobDb<T>(dataDir, sql))));
    check();
  });
}

/**
 * A job's rows as the app reads them (JobStore: runs with their paraphrases, whether a row holds
 * them or refers to the cache for them, stage counts decompressed), once no process writes the file.
 */
export function storedJobRows(dataDir: string, jobId: string): JobRow[] {
  const store = openJobStore(dataDir);
  try {
    return [...store.iterateRows(jobId)];
  } finally {
    store.close();
  }
}
