// A job's metric counts (jobs/metric-counts.ts), kept as its rows are saved: the metrics read from
// them are the metrics computed from every row, they are read without reading the rows, a job
// without them is counted once on its first read, and a row taken out leaves what counting the
// others alone gives.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { computeMetrics, openJobStore } from '../../../electron/jobs';
import { metricIntervals } from '../../../electron/jobs/metric-intervals';
import { countRow, emptyCounts, parseCounts, serializeCounts } from '../../../electron/jobs/metric-counts';
import { metricsFromCounts } from '../../../electron/jobs/metrics';
import { resolveTask } from '../../../electron/tasks';
import { runScriptedJob } from '../../helpers/scripted-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-counts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The metrics with their floating-point sums rounded: counts sum a bin's confidences in another order than rows do. */
function rounded<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v))) as T;
}

describe('metric counts', () => {
  it('kept as rows are saved: the metrics they give are those of every row, read without reading a row', async () => {
    const store = openJobStore(join(dir, 'kept'));
    try {
      const { id, manager } = await runScriptedJob(store, { rows: 40, dir, settings: { n: 3, k: 2, r: 3, seed: 3, scope: 'run' } });
      const job = manager.get(id);
      const fromRows = computeMetrics({ task: job.task, r: 3, rowsTotal: 40, rows: store.iterateRows(id), minConfidence: 0.7 });
      // Rows at several confidences, right and wrong: the counts have something to tell.
      expect(fromRows.selective.length).toBeGreaterThan(2);
      expect(fromRows.correct).toBeGreaterThan(0);
      expect(fromRows.correct).toBeLessThan(40);
      const read = vi.spyOn(store, 'iterateRows');
      // The manager's metrics carry each score's interval beside it, from the same counts (docs/method.md §16).
      const { intervals, ...counted } = manager.metrics(id, { minConfidence: 0.7 });
      expect(rounded(counted)).toEqual(rounded(fromRows));
      expect(intervals).toEqual(metricIntervals(fromRows, id));
      expect(read).not.toHaveBeenCalled();
    } finally {
      store.close();
    }
  });

  it('a job without counts (made before they were kept) is counted once on its first read, then read from them', async () => {
    const store = openJobStore(join(dir, 'old'));
    try {
      const { id, manager } = await runScriptedJob(store, { rows: 24, dir });
      const expected = rounded(manager.metrics(id));
      store.db.prepare('DELETE FROM job_metrics WHERE job_id = ?').run(id);
      const read = vi.spyOn(store, 'iterateRows');
      expect(rounded(manager.metrics(id))).toEqual(expected);
      expect(read).toHaveBeenCalledTimes(1);
      expect(rounded(manager.metrics(id))).toEqual(expected);
      expect(read).toHaveBeenCalledTimes(1);
      // Counts that disagree with the rows done (a row saved without them) are counted again.
      store.db.prepare(`UPDATE job_metrics SET counts_json = json_set(counts_json, '$.rowsDone', 3) WHERE job_id = ?`).run(id);
      expect(rounded(manager.metrics(id))).toEqual(expected);
      expect(read).toHaveBeenCalledTimes(2);
    } finally {
      store.close();
    }
  });

  it('a row taken out leaves the counts of the others; the stored form reads back the same', async () => {
    const store = openJobStore(join(dir, 'out'));
    try {
      const { id } = await runScriptedJob(store, { rows: 20, dir });
      const task = await resolveTask('sst2');
      const rows = [...store.iterateRows(id)];
      const all = emptyCounts(2);
      for (const row of rows) countRow(all, task, row);
      for (const row of rows.slice(0, 7)) countRow(all, task, row, -1);
      const rest = emptyCounts(2);
      for (const row of rows.slice(7)) countRow(rest, task, row);
      expect(rounded(metricsFromCounts(task, 20, all))).toEqual(rounded(metricsFromCounts(task, 20, rest)));
      expect(parseCounts(serializeCounts(rest))).toEqual(rest);
    } finally {
      store.close();
    }
  });
});
