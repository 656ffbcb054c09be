// The job database's file: opened with the pragmas and the schema every store needs, its WAL kept
// small, and disk space held back for deleting on a full disk. JobStore (store.ts) is built on it.
//
// Durability: WAL with synchronous=NORMAL. Every finished row is its own transaction; at COMMIT
// SQLite has written the WAL frames with write(2), so they sit in the OS page cache and survive a
// SIGKILL of this process (what the resume test does). Only an OS crash or power loss can drop
// the last few commits under NORMAL; FULL would fsync every row and cost far more than a row of
// inference is worth protecting against that. Set TATRA_DB_SYNC=FULL to choose otherwise.
//
// A full disk: to write anything, even a DELETE, SQLite needs room for WAL frames (one per page
// the statement changes; deleting rows rewrites every page that held them before it is freed),
// and a checkpoint needs room for any page the database file does not have yet. So the WAL is
// kept small (journal_size_limit; imports checkpoint after each batch, so the data set sits in
// the database file, not in a WAL that grew with it), and `<db>-reserve`, a few hundred KiB the
// store holds in the data folder, is given back to the file system when SQLite reports the disk
// full. A delete then runs in chunks with a checkpoint between them, so each chunk rewrites the
// WAL in place instead of growing it (see JobStore.deleteJob).
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { migrate } from './migrations';

/** The WAL is cut back to this size after a checkpoint instead of keeping the largest it ever was. */
export const WAL_LIMIT_BYTES = 1024 * 1024;
/** Room held in `<db>-reserve` for deleting on a full disk: a checkpoint of one import batch and a chunk of a delete. */
export const RESERVE_BYTES = 256 * 1024;

export class StoreFile {
  readonly db: Database.Database;
  readonly path: string;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(dbPath: string) {
    this.path = dbPath;
    // The CLI and the app may share the file; wait for a writer instead of failing at once
    // (generously: five processes on two busy cores can hold the lock for seconds). Set at open,
    // so even the pragmas below wait.
    this.db = new Database(dbPath, { timeout: 30_000 });
    try {
      // A new file frees the pages of deleted jobs as it goes (deleteJob); on an existing one
      // this is a no-op until compact() rewrites it.
      this.db.pragma('auto_vacuum = INCREMENTAL');
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${process.env.TATRA_DB_SYNC === 'FULL' ? 'FULL' : 'NORMAL'}`);
      this.db.pragma('foreign_keys = ON');
      this.db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
      migrate(this.db, this.path);
    } catch (e) {
      this.db.close();
      throw e;
    }
  }

  /** `<db>-reserve`: disk space held back for deleting when the disk is full. */
  get reservePath(): string {
    return `${this.path}-reserve`;
  }

  /** Holds the reserve again if it is missing and there is room (on a full disk it stays given back). */
  protected takeReserve(): void {
    if (existsSync(this.reservePath)) return;
    try {
      writeFileSync(this.reservePath, Buffer.alloc(RESERVE_BYTES), { flag: 'wx' });
    } catch {
      // No room (or no permission): no reserve until there is; a partial one is no use.
      try {
        rmSync(this.reservePath, { force: true });
      } catch {
        /* nothing was written */
      }
    }
  }

  /** Gives the reserve back to the file system; true if there was one. */
  protected giveBackReserve(): boolean {
    const had = existsSync(this.reservePath);
    rmSync(this.reservePath, { force: true });
    return had;
  }

  /**
   * Copies the WAL into the database file (PASSIVE: without waiting for readers), so the next
   * write starts the WAL from its beginning, in place, and journal_size_limit can cut it back.
   */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(PASSIVE)');
  }

  /** Schema version of the open file (PRAGMA user_version). */
  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  /** A statement prepared once per store: the ones run per row and per generator call. */
  protected statement(sql: string): Database.Statement {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }
}
