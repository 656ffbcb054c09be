// A person's review of a job's rows, in the job database (schema v12): every decision is written
// when it is made, in its own transaction (review_log: the label, what it replaced, when, from
// which queue), and each reviewed row's decision now is kept beside it (review_decisions). TATRA's
// answers and the file's gold are never changed: a decision lives apart from both, so the metrics
// can be read with the file's gold and with the person's (review-report.ts). A transaction is one
// decision (or one whole import), so a crash or a SIGKILL leaves every committed decision and no
// part of one; a running job in this or another process holds the write lock only for one row's
// commit at a time, so a decision never waits for more than that.
import type Database from 'better-sqlite3';
import { UserError } from '../common/errors';
import type { RowCountsReader } from './row-counts';

/** The orders a person reviews in (review.ts) and where else a decision can come from. */
export type ReviewQueueName = 'uncertain' | 'disagree' | 'early' | 'audit' | 'row' | 'import';

export interface ReviewDecision {
  index: number;
  /** The label decided; null: skipped (passed over, TATRA's answer stands). */
  label: string | null;
  /** The log entry that made it (what an undo names). */
  logId: number;
  queue: ReviewQueueName;
  /** ISO time. */
  at: string;
}

export interface ReviewHistoryEntry {
  id: number;
  action: 'label' | 'skip' | 'undo';
  /** label: the label chosen; undo: the row's label after it (null: TATRA's again, or a skip). */
  label: string | null;
  /** The row's label before this entry: an earlier decision's, else TATRA's. */
  replaced: string | null;
  queue: ReviewQueueName;
  at: string;
  /** A later undo took this decision back. */
  undone: boolean;
}

export interface ReviewProgress {
  /** Rows TATRA has finished. */
  rowsDone: number;
  /** Rows a person gave a label (skips not counted). */
  reviewed: number;
  /** Of those, given TATRA's own label. */
  agreed: number;
  /** Of those, given another label. */
  changed: number;
  skipped: number;
}

interface DecisionRow {
  idx: number;
  log_id: number;
  label: string | null;
  queue: ReviewQueueName;
  at: string;
}

interface LogRow {
  id: number;
  job_id: string;
  idx: number;
  action: 'label' | 'skip' | 'undo';
  label: string | null;
  replaced: string | null;
  prev: number | null;
  queue: ReviewQueueName;
  at: string;
}

const decisionOf = (d: DecisionRow): ReviewDecision => ({ index: d.idx, label: d.label, logId: d.log_id, queue: d.queue, at: d.at });

export interface NewDecision {
  index: number;
  /** null: a skip. */
  label: string | null;
  queue: ReviewQueueName;
  /** Names the decision where it was made: sent again (a retry after a lost answer), it is the same one entry. */
  clientId?: string;
}

export class ReviewStore {
  constructor(
    private readonly db: Database.Database,
    private readonly rowCounts: RowCountsReader,
  ) {}

  private prepared = new Map<string, Database.Statement>();
  private sql(text: string): Database.Statement {
    let s = this.prepared.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.prepared.set(text, s);
    }
    return s;
  }

  /** The row's decision now, or null. */
  decision(jobId: string, index: number): ReviewDecision | null {
    const d = this.sql(`SELECT idx, log_id, label, queue, at FROM review_decisions WHERE job_id = ? AND idx = ?`).get(jobId, index) as DecisionRow | undefined;
    return d ? decisionOf(d) : null;
  }

  /** The decisions now of the given rows (those that have one). */
  decisionsOf(jobId: string, indexes: readonly number[]): Map<number, ReviewDecision> {
    if (indexes.length === 0) return new Map();
    const rows = this.db
      .prepare(`SELECT idx, log_id, label, queue, at FROM review_decisions WHERE job_id = ? AND idx IN (SELECT value FROM json_each(?))`)
      .all(jobId, JSON.stringify(indexes)) as DecisionRow[];
    return new Map(rows.map((d) => [d.idx, decisionOf(d)]));
  }

  /** Every decision of the job now, in row order (exports, reports). */
  *decisions(jobId: string): Generator<ReviewDecision> {
    for (const d of this.sql(`SELECT idx, log_id, label, queue, at FROM review_decisions WHERE job_id = ? ORDER BY idx`).iterate(jobId) as Iterable<DecisionRow>) yield decisionOf(d);
  }

  /** Records one decision in its own transaction; a decision sent again under its clientId is the one already recorded. */
  decide(jobId: string, d: NewDecision): ReviewDecision {
    return this.db.transaction(() => this.write(jobId, d)).immediate();
  }

  /**
   * Records many decisions in one transaction: all of them, or (a failure, a crash) none. A row
   * already decided the same way is left as it is; returns how many were recorded.
   */
  decideAll(jobId: string, decisions: readonly NewDecision[]): { recorded: number; unchanged: number } {
    return this.db
      .transaction(() => {
        let recorded = 0;
        for (const d of decisions) {
          const now = this.decision(jobId, d.index);
          if (now && now.label === d.label) continue;
          this.write(jobId, d);
          recorded++;
        }
        return { recorded, unchanged: decisions.length - recorded };
      })
      .immediate();
  }

  /** Writes one decision (inside a transaction); one whose clientId was recorded before is that entry. */
  private write(jobId: string, d: NewDecision): ReviewDecision {
    const sent = d.clientId === undefined ? undefined : (this.sql(`SELECT * FROM review_log WHERE client_id = ? AND job_id = ?`).get(d.clientId, jobId) as LogRow | undefined);
    if (sent) return { index: sent.idx, label: sent.label, logId: sent.id, queue: sent.queue, at: sent.at };
    const row = this.sql(`SELECT prediction FROM job_rows WHERE job_id = ? AND idx = ?`).get(jobId, d.index) as { prediction: string | null } | undefined;
    if (!row) throw new UserError(`job ${jobId} has no row ${d.index}`, 'row_unknown');
    const now = this.decision(jobId, d.index);
    const at = new Date().toISOString();
    const replaced = now && now.label !== null ? now.label : row.prediction;
    const logId = Number(
      this.sql(`INSERT INTO review_log (job_id, idx, action, label, replaced, prev, queue, client_id, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
        jobId,
        d.index,
        d.label === null ? 'skip' : 'label',
        d.label,
        replaced,
        now?.logId ?? null,
        d.queue,
        d.clientId ?? null,
        at,
      ).lastInsertRowid,
    );
    this.setDecision(jobId, { index: d.index, label: d.label, logId, queue: d.queue, at });
    return { index: d.index, label: d.label, logId, queue: d.queue, at };
  }

  private setDecision(jobId: string, d: ReviewDecision): void {
    this.sql(`INSERT INTO review_decisions (job_id, idx, log_id, label, queue, at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, idx) DO UPDATE SET log_id = excluded.log_id, label = excluded.label, queue = excluded.queue, at = excluded.at`).run(
      jobId,
      d.index,
      d.logId,
      d.label,
      d.queue,
      d.at,
    );
  }

  /**
   * Takes a decision back: the row's decision becomes the one it replaced (or none). Only the
   * row's latest decision can be undone (one made later, in another window, is undone first).
   * Returns the row's decision after the undo.
   */
  undo(jobId: string, logId: number): { index: number; decision: ReviewDecision | null } {
    return this.db
      .transaction(() => {
        const entry = this.sql(`SELECT * FROM review_log WHERE id = ? AND job_id = ?`).get(logId, jobId) as LogRow | undefined;
        if (!entry || entry.action === 'undo') throw new UserError(`job ${jobId} has no decision ${logId} to undo`, 'review_unknown');
        const now = this.decision(jobId, entry.idx);
        if (now?.logId !== logId) throw new UserError(`row ${entry.idx} was decided again after that decision${now ? '' : ' was undone'}; undo the latest first`, 'review_state');
        const prev = entry.prev === null ? null : (this.sql(`SELECT * FROM review_log WHERE id = ?`).get(entry.prev) as LogRow);
        const restored: ReviewDecision | null = prev ? { index: prev.idx, label: prev.label, logId: prev.id, queue: prev.queue, at: prev.at } : null;
        if (restored) this.setDecision(jobId, restored);
        else this.sql(`DELETE FROM review_decisions WHERE job_id = ? AND idx = ?`).run(jobId, entry.idx);
        const row = this.sql(`SELECT prediction FROM job_rows WHERE job_id = ? AND idx = ?`).get(jobId, entry.idx) as { prediction: string | null };
        this.sql(`INSERT INTO review_log (job_id, idx, action, label, replaced, prev, queue, at) VALUES (?, ?, 'undo', ?, ?, ?, ?, ?)`).run(
          jobId,
          entry.idx,
          restored?.label ?? null,
          entry.label ?? row.prediction,
          logId,
          entry.queue,
          new Date().toISOString(),
        );
        return { index: entry.idx, decision: restored };
      })
      .immediate();
  }

  /** Everything done to a row, oldest first. */
  history(jobId: string, index: number): ReviewHistoryEntry[] {
    const rows = this.sql(`SELECT * FROM review_log WHERE job_id = ? AND idx = ? ORDER BY id`).all(jobId, index) as LogRow[];
    const undone = new Set(rows.filter((r) => r.action === 'undo').map((r) => r.prev));
    return rows.map((r) => ({ id: r.id, action: r.action, label: r.label, replaced: r.replaced, queue: r.queue, at: r.at, undone: undone.has(r.id) }));
  }

  /** Where review stands. */
  progress(jobId: string): ReviewProgress {
    const p = this.sql(
      `SELECT COALESCE(SUM(d.label IS NOT NULL), 0) AS reviewed, COALESCE(SUM(d.label IS NOT NULL AND d.label = r.prediction), 0) AS agreed, COALESCE(SUM(d.label IS NULL), 0) AS skipped
       FROM review_decisions d JOIN job_rows r ON r.job_id = d.job_id AND r.idx = d.idx WHERE d.job_id = ?`,
    ).get(jobId) as { reviewed: number; agreed: number; skipped: number };
    return { rowsDone: this.rowCounts.of(jobId).done, reviewed: p.reviewed, agreed: p.agreed, changed: p.reviewed - p.agreed, skipped: p.skipped };
  }
}
