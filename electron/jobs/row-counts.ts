// A job's rows counted by status (all, done, failed, and of the done ones those with gold and
// those right), kept in job_row_counts by triggers on job_rows (schema v15), so every write to a
// row (an import, a row finishing or failing, a resume that sets rows back, a deletion) moves its
// count in the same transaction, whatever code made it. Reading them is one row: a job's page,
// `tatra jobs show`, the rows table's total and the review's progress read it, where they counted
// a 100,000-row job's index entries on every read (docs/architecture.md, "Reads that do not grow
// with a job").
import type Database from 'better-sqlite3';

export interface RowCounts {
  /** Every row of the job, whatever its status. */
  rows: number;
  done: number;
  failed: number;
  /** Done rows whose prediction matched gold. */
  correct: number;
  /** Done rows with gold (a done row has `correct` exactly when it has gold). */
  withGold: number;
}

/** What one row adds to its job's counts, as SQL over `row` (NEW or OLD in a trigger, job_rows in a query). */
const contribution = (row: string) => ({
  rows: '1',
  done: `${row}.status = 'done'`,
  failed: `${row}.status = 'failed'`,
  correct: `${row}.status = 'done' AND COALESCE(${row}.correct, 0) = 1`,
  with_gold: `${row}.status = 'done' AND ${row}.correct IS NOT NULL`,
});

const COLUMNS = ['rows', 'done', 'failed', 'correct', 'with_gold'] as const;

/**
 * The schema v15 adds: the table, its triggers, and the counts of the rows already there. Taken
 * again on a file that has them (a file whose version was set back) it counts them again. Never
 * edited once shipped (migrations.ts): a change is a new version.
 */
export const ROW_COUNTS_SCHEMA = (() => {
  const add = contribution('NEW');
  const take = contribution('OLD');
  const all = contribution('job_rows');
  const moved = (sign: '+' | '-', by: Record<(typeof COLUMNS)[number], string>) => COLUMNS.map((c) => `${c} = ${c} ${sign} (${by[c]})`).join(', ');
  return `
    CREATE TABLE IF NOT EXISTS job_row_counts (
      job_id TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
      ${COLUMNS.map((c) => `${c} INTEGER NOT NULL DEFAULT 0`).join(',\n      ')}
    ) WITHOUT ROWID;
    DELETE FROM job_row_counts;
    INSERT INTO job_row_counts (job_id, ${COLUMNS.join(', ')})
      SELECT job_id, ${COLUMNS.map((c) => `SUM(${all[c]})`).join(', ')} FROM job_rows GROUP BY job_id;
    CREATE TRIGGER IF NOT EXISTS job_row_counts_insert AFTER INSERT ON job_rows BEGIN
      INSERT INTO job_row_counts (job_id, ${COLUMNS.join(', ')}) VALUES (NEW.job_id, ${COLUMNS.map((c) => add[c]).join(', ')})
        ON CONFLICT (job_id) DO UPDATE SET ${COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')};
    END;
    CREATE TRIGGER IF NOT EXISTS job_row_counts_update AFTER UPDATE OF status, correct ON job_rows BEGIN
      UPDATE job_row_counts SET ${moved('-', take)} WHERE job_id = OLD.job_id;
      UPDATE job_row_counts SET ${moved('+', add)} WHERE job_id = NEW.job_id;
    END;
    CREATE TRIGGER IF NOT EXISTS job_row_counts_delete AFTER DELETE ON job_rows BEGIN
      UPDATE job_row_counts SET ${moved('-', take)} WHERE job_id = OLD.job_id;
    END;
  `;
})();

/** Reads a job's row counts (all zero for a job without rows). */
export class RowCountsReader {
  private readonly select: Database.Statement;

  constructor(db: Database.Database) {
    this.select = db.prepare(`SELECT rows, done, failed, correct, with_gold AS withGold FROM job_row_counts WHERE job_id = ?`);
  }

  of(jobId: string): RowCounts {
    return (this.select.get(jobId) as RowCounts | undefined) ?? { rows: 0, done: 0, failed: 0, correct: 0, withGold: 0 };
  }
}
