// The rows table sorted by confidence (JobStore.rows, schema v17): each page is read from an index
// (no sort of every row of the job), and the pages in turn are the rows in the order the table
// promises: by confidence, rows without one last, ties by index.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJobStore } from '../../../electron/jobs';
import { rowOrder } from '../../../electron/jobs/store';
import type { JobRow } from '../../../electron/jobs/types';
import { runScriptedJob } from '../../helpers/scripted-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-rows-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rows by confidence', () => {
  it('page from an index, in confidence order with ties by index and rows without one last', async () => {
    const store = openJobStore(join(dir, 'order'));
    try {
      const { id } = await runScriptedJob(store, { rows: 60, dir });
      // Rows without a confidence (as rows not yet done have): the last ones, whatever the direction.
      store.db.prepare('UPDATE job_rows SET confidence = NULL WHERE job_id = ? AND idx IN (3, 17, 41)').run(id);
      const all = [...store.iterateRows(id)];
      expect(new Set(all.map((r) => r.confidence)).size).toBeGreaterThan(2);
      for (const [sort, sign] of [['confidence-asc', 1], ['confidence-desc', -1]] as const) {
        const plan = store.db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM job_rows WHERE job_id = ? ORDER BY ${rowOrder(sort)} LIMIT 10 OFFSET 20`).all(id) as Array<{ detail: string }>;
        expect(plan.map((p) => p.detail).join('; ')).not.toMatch(/TEMP B-TREE/);
        const key = (r: JobRow) => [r.confidence === null ? 1 : 0, r.confidence === null ? 0 : sign * r.confidence, r.index] as const;
        const expected = [...all].sort((a, b) => {
          const [x, y] = [key(a), key(b)];
          return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
        });
        const paged: number[] = [];
        for (let offset = 0; offset < all.length; offset += 7) paged.push(...store.rows(id, { sort, offset, limit: 7 }).rows.map((r) => r.index));
        expect(paged).toEqual(expected.map((r) => r.index));
        expect(paged.slice(-3).sort((a, b) => a - b)).toEqual([3, 17, 41]);
      }
    } finally {
      store.close();
    }
  });
});
