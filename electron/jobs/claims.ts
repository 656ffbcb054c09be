// Claimed work in the job database: a job (table `jobs`) or an experiment (table `experiments`) is
// run by one process at a time, its owner ("host:pid", owner.ts), across processes and machines
// sharing the data folder. One implementation of the owner's moves for both kinds:
//
//   claim          this process becomes the owner, unless the work is done or a live owner runs it
//   beat           the owner's heartbeat (`updated`), how other machines tell live work from dead
//   release        the owner's last word: the outcome, and the work given up
//   stopAbandoned  work no process runs, paused or cancelled from here
//
// The lifecycle of a run in this process (register, heartbeat timer, stop, dispose) is
// running-work.ts; this module is what it leaves in the database.
import type Database from 'better-sqlite3';
import type { StoredJobStatus } from '../common/contract/jobs';
import { UserError } from '../common/errors';

export type ClaimResult = { claimed: true } | { claimed: false; reason: ClaimRefusal };
export type ClaimRefusal = 'unknown' | 'unimported' | 'done' | 'running';

/** The error shown for a job whose data-set import did not finish. */
export const IMPORT_UNFINISHED = 'the import of the data set did not finish; create the job again';

/** The work a claim was refused for, as the user names it. */
export interface ClaimedWork {
  /** What it is called in a sentence: "job", "comparison", "sweep". */
  noun: string;
  /** Its kind in error codes (`<kind>_state`, `<kind>_unknown`): "job", "comparison", "sweep". */
  kind: string;
  /** Its full id. */
  id: string;
  /** What the user typed for it (an id or a unique prefix). */
  ref: string;
}

/** Why a claim was refused, as one line the same for a job and an experiment. */
export function claimRefused(reason: ClaimRefusal, work: ClaimedWork): UserError {
  switch (reason) {
    case 'done':
      return new UserError(`${work.noun} ${work.id} is already done`, `${work.kind}_state`);
    case 'unknown':
      return new UserError(`no ${work.noun} "${work.ref}"`, `${work.kind}_unknown`);
    case 'unimported':
      return new UserError(`${work.noun} ${work.id}: ${IMPORT_UNFINISHED}`, `${work.kind}_state`);
    case 'running':
      return new UserError(`${work.noun} ${work.id} is running in another process`, `${work.kind}_state`);
  }
}

/** Whether a recorded owner ("host:pid", its row last `updated` then) still runs: owner.ts ownerLive. */
export type OwnerLive = (owner: string, updated: string) => boolean;

export interface ClaimedTable {
  table: 'jobs' | 'experiments';
  /** Only rows of this kind (an experiment store's). */
  kind?: string;
  /**
   * What a stop from a process that does not run the work may replace, besides running work whose
   * owner died: a job any outcome but done; an experiment only queued or paused (a failed or
   * cancelled one keeps its outcome).
   */
  stoppable: readonly StoredJobStatus[];
}

export class WorkClaims {
  private readonly scope: string;
  private readonly scopeParams: string[];

  constructor(
    private readonly db: Database.Database,
    private readonly claimed: ClaimedTable,
  ) {
    this.scope = claimed.kind === undefined ? '' : ' AND kind = ?';
    this.scopeParams = claimed.kind === undefined ? [] : [claimed.kind];
  }

  /**
   * Makes `owner` the runner, atomically across processes: BEGIN IMMEDIATE takes SQLite's write
   * lock before the row is read, so of two processes claiming at once the second reads the first
   * one's claim and is refused. A job whose data set was never fully imported cannot be claimed.
   */
  claim(id: string, owner: string, ownerLive: OwnerLive): ClaimResult {
    const { table } = this.claimed;
    // Only jobs import a data set; an experiment is always ready.
    const imported = table === 'jobs' ? 'imported' : '1 AS imported';
    return this.db
      .transaction((): ClaimResult => {
        const row = this.db.prepare(`SELECT status, owner, updated, ${imported} FROM ${table} WHERE id = ?${this.scope}`).get(id, ...this.scopeParams) as
          | { status: StoredJobStatus; owner: string | null; updated: string; imported: number }
          | undefined;
        if (!row) return { claimed: false, reason: 'unknown' };
        if (row.imported !== 1) return { claimed: false, reason: 'unimported' };
        if (row.status === 'done') return { claimed: false, reason: 'done' };
        if (row.status === 'running' && row.owner !== null && row.owner !== owner && ownerLive(row.owner, row.updated)) return { claimed: false, reason: 'running' };
        this.db.prepare(`UPDATE ${table} SET owner = ?, status = 'running', error = NULL, stopped_by = NULL, updated = ? WHERE id = ?`).run(owner, new Date().toISOString(), id);
        return { claimed: true };
      })
      .immediate();
  }

  /** The owner's heartbeat: `updated` is how other machines tell live work from dead; a process that lost the claim touches nothing. */
  beat(id: string, owner: string): void {
    this.db.prepare(`UPDATE ${this.claimed.table} SET updated = ? WHERE id = ? AND owner = ?`).run(new Date().toISOString(), id, owner);
  }

  /**
   * The runner's last word: the final status, and the work given up, only while `owner` still
   * holds it (a process that lost it never overwrites the status of the one running it). False
   * when it did not hold it.
   */
  release(id: string, owner: string, status: StoredJobStatus, error: string | null, stoppedBy: 'budget' | null = null): boolean {
    return (
      this.db
        .prepare(`UPDATE ${this.claimed.table} SET status = ?, error = ?, stopped_by = ?, owner = NULL, updated = ? WHERE id = ? AND owner = ?`)
        .run(status, error, stoppedBy, new Date().toISOString(), id, owner).changes === 1
    );
  }

  /** Who runs it ("host:pid") and when its row last changed (its heartbeat), or null when nobody does. */
  owner(id: string): { owner: string; updated: string } | null {
    const row = this.db.prepare(`SELECT owner, updated FROM ${this.claimed.table} WHERE id = ?`).get(id) as { owner: string | null; updated: string } | undefined;
    return row?.owner ? { owner: row.owner, updated: row.updated } : null;
  }

  /**
   * Work no process runs, stopped as `to`: left running by an owner that died (`owner`, as read
   * when the caller found it dead), not if another process claimed it meanwhile, or in a status
   * the table lets a stop replace (ClaimedTable.stoppable).
   */
  stopAbandoned(id: string, owner: string | null, to: 'paused' | 'cancelled'): void {
    const from = this.claimed.stoppable.map(() => '?').join(', ');
    this.db
      .prepare(`UPDATE ${this.claimed.table} SET status = ?, owner = NULL, updated = ? WHERE id = ? AND (status IN (${from}) OR (status = 'running' AND owner IS ?))`)
      .run(to, new Date().toISOString(), id, ...this.claimed.stoppable, owner);
  }
}
