// A job's rows counted by status (jobs/row-counts.ts): the counts the triggers keep equal a count
// of the rows after every kind of write (rows finishing, failing, set back to pending, deleted),
// a database from before them (schema 14) has them counted when it opens, and a job's page reads
// (its info, metrics, the rows table's first page, the review's progress) prepare no statement
// that counts its rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openJobStore, type JobStore } from '../../../electron/jobs';
import { runScriptedJob } from '../../helpers/scripted-job';
import { UNDO_AFTER_V15 } from '../../helpers/stored-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-row-counts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Counted {
  rows: number;
  done: number;
  failed: number;
  correct: number;
  withGold: number;
}

/** The counts as a count of the rows gives them. */
function counted(store: JobStore, jobId: string): Counted {
  return store.db
    .prepare(
      `SELECT COUNT(*) AS rows, COALESCE(SUM(status = 'done'), 0) AS done, COALESCE(SUM(status = 'failed'), 0) AS failed,
         COALESCE(SUM(status = 'done' AND correct = 1), 0) AS correct, COALESCE(SUM(status = 'done' AND correct IS NOT NULL), 0) AS withGold
       FROM job_rows WHERE job_id = ?`,
    )
    .get(jobId) as Counted;
}

describe('row counts', () => {
  it('kept by the triggers through rows finishing, failing, set back and deleted', async () => {
    const store = openJobStore(join(dir, 'kept'));
    try {
      const { id } = await runScriptedJob(store, { rows: 30, dir });
      const other = (await runScriptedJob(store, { rows: 12, dir, unlabelled: true })).id;
      expect(store.rowCounts.of(id)).toEqual(counted(store, id));
      expect(store.rowCounts.of(id)).toMatchObject({ rows: 30, done: 30, failed: 0 });
      expect(store.rowCounts.of(other)).toMatchObject({ rows: 12, done: 12, withGold: 0, correct: 0 });
      store.saveRowFailure(id, 3, 'the server went away');
      store.db.prepare(`UPDATE job_rows SET status = 'pending' WHERE job_id = ? AND idx IN (4, 5)`).run(id);
      store.db.prepare(`UPDATE job_rows SET correct = 1 - correct WHERE job_id = ? AND idx < 10 AND status = 'done'`).run(id);
      expect(store.rowCounts.of(id)).toEqual(counted(store, id));
      expect(store.rowCounts.of(id)).toMatchObject({ done: 27, failed: 1 });
      store.db.prepare(`DELETE FROM job_rows WHERE job_id = ? AND idx >= 20`).run(id);
      expect(store.rowCounts.of(id)).toEqual(counted(store, id));
      store.deleteJob(id);
      expect(store.db.prepare(`SELECT COUNT(*) AS n FROM job_row_counts WHERE job_id = ?`).get(id)).toEqual({ n: 0 });
      expect(store.rowCounts.of(id)).toEqual({ rows: 0, done: 0, failed: 0, correct: 0, withGold: 0 });
      expect(store.rowCounts.of(other)).toEqual(counted(store, other));
    } finally {
      store.close();
    }
  });

  it('a database from before them (schema 14) has every job counted when it opens', async () => {
    const at = join(dir, 'old');
    let store = openJobStore(at);
    let id: string;
    try {
      id = (await runScriptedJob(store, { rows: 25, dir })).id;
      store.saveRowFailure(id, 0, 'failed');
    } finally {
      store.close();
    }
    const db = new Database(join(at, 'tatra.db'));
    db.exec(`${UNDO_AFTER_V15} DROP TRIGGER job_row_counts_insert; DROP TRIGGER job_row_counts_update; DROP TRIGGER job_row_counts_delete; DROP TABLE job_row_counts; PRAGMA user_version = 14;`);
    db.close();
    store = openJobStore(at);
    try {
      expect(store.rowCounts.of(id)).toEqual(counted(store, id));
      expect(store.rowCounts.of(id)).toMatchObject({ rows: 25, done: 24, failed: 1 });
    } finally {
      store.close();
    }
  });

  it("a job's page reads prepare no statement that counts its rows", async () => {
    const store = openJobStore(join(dir, 'reads'));
    try {
      const { id, manager } = await runScriptedJob(store, { rows: 20, dir });
      const prepared: string[] = [];
      const prepare = store.db.prepare.bind(store.db);
      vi.spyOn(store.db, 'prepare').mockImplementation(((sql: string) => {
        prepared.push(sql);
        return prepare(sql);
      }) as typeof store.db.prepare);
      manager.get(id);
      manager.list();
      manager.metrics(id);
      manager.rows(id, { limit: 50 });
      manager.rows(id, { limit: 50, onlyWrong: true });
      store.reviews.progress(id);
      const counting = prepared.filter((sql) => /\b(COUNT|SUM)\s*\(/i.test(sql) && /\bFROM\s+job_rows\b/i.test(sql));
      expect(counting).toEqual([]);
      expect(prepared.length).toBeGreaterThan(0);
      const c = counted(store, id);
      expect(manager.rows(id, { limit: 5 }).total).toBe(20);
      expect(manager.rows(id, { limit: 5, onlyWrong: true }).total).toBe(c.withGold - c.correct);
    } finally {
      store.close();
    }
  });
});
