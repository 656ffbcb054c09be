// A job's bootstrap intervals kept in its database (jobs/metric-intervals.ts, metric-counts-store.ts):
// a read in a fresh module (as in another process: nothing remembered in memory) looks them up
// instead of resampling, and counts that change (the rest of a job resumed) are never answered
// with the intervals of the counts before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { JobManager, openJobStore, plainModelRef, type BackendProvider } from '../../../electron/jobs';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { mixedAnswer, writeScriptedData } from '../../helpers/scripted-job';
import type * as MetricIntervals from '../../../electron/jobs/metric-intervals';

const dir = mkdtempSync(join(tmpdir(), 'tatra-kept-intervals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** metric-intervals.ts loaded anew: its in-memory memo empty, as a new process finds it. */
async function freshIntervals(): Promise<typeof MetricIntervals> {
  vi.resetModules();
  return import('../../../electron/jobs/metric-intervals');
}

describe('kept bootstrap intervals', () => {
  it('are looked up by a fresh reader, and recomputed once the counts change (the rest of the job resumed)', async () => {
    const store = openJobStore(join(dir, 'kept'));
    try {
      const backend = new ScriptedBackend(politeScript({ answer: mixedAnswer }), { id: 'scripted', contextSize: 8192 });
      const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
      const manager = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
      const job = await manager.create({
        task: 'sst2',
        settings: { n: 3, k: 2, r: 3, seed: 3, scope: 'run' },
        generatorPath: 'g.gguf',
        evaluatorPath: 'e.gguf',
        dataset: { path: writeScriptedData({ rows: 40, dir }), mapping: { textColumn: 'text', labelColumn: 'label' } },
        concurrency: 4,
      });
      // Half the rows, then the job pauses with the rest left.
      await manager.start(job.id, { rows: new Set(Array.from({ length: 20 }, (_, i) => i)) });
      expect((await manager.wait(job.id)).status).toBe('paused');
      const half = manager.metrics(job.id);
      const kept = () => store.db.prepare('SELECT intervals_digest AS digest, intervals_json AS json FROM job_metrics WHERE job_id = ?').get(job.id) as { digest: string; json: string };
      const first = kept();
      expect(first.digest).toBeTruthy();
      const { metricIntervals, bootstrapDigest } = await freshIntervals();
      const { intervals, ...counts } = half;
      expect(first.digest).toBe(bootstrapDigest(counts, job.id, {}));
      expect(metricIntervals(counts, job.id, {})).toEqual(intervals);

      // A fresh reader takes what is kept: a marked value comes back, so nothing was resampled.
      const marked = JSON.parse(first.json) as { f1: { macroF1: { low: number } } };
      marked.f1.macroF1.low = -1;
      store.db.prepare('UPDATE job_metrics SET intervals_json = ? WHERE job_id = ?').run(JSON.stringify(marked), job.id);
      const again = await freshIntervals();
      expect(again.metricIntervals(counts, job.id, {}, store.metricCounts).macroF1?.low).toBe(-1);

      // The rest of the job: other counts, another digest, the intervals of these counts.
      await manager.resume(job.id);
      expect((await manager.wait(job.id)).status).toBe('done');
      const whole = (await freshIntervals()).metricIntervals;
      const { intervals: after, ...wholeCounts } = manager.metrics(job.id);
      expect(wholeCounts.rowsDone).toBe(40);
      expect(kept().digest).not.toBe(first.digest);
      expect(after).toEqual(whole(wholeCounts, job.id, {}));
      expect(after!.macroF1!.low).not.toBe(-1);
      // Read again by a fresh reader: the kept ones, the same numbers.
      expect((await freshIntervals()).metricIntervals(wholeCounts, job.id, {}, store.metricCounts)).toEqual(after);
    } finally {
      store.close();
    }
  });
});
