// A job written straight into a job store, no model or data file needed: for tests of what the
// CLI and the store do with many rows, hostile text or a full disk.
import { resolveTask } from '../../electron/tasks';
import type { DatasetRow, JobStore } from '../../electron/jobs';

/** Creates an sst2 job with `rows` inputs (made by `input(i)`, gold alternating), imported and paused. */
export async function storePausedJob(store: JobStore, opts: { name: string; rows: number; input: (i: number) => string }): Promise<string> {
  const id = store.createJob({
    name: opts.name,
    task: await resolveTask('sst2'),
    settings: { n: 2, k: 4, r: 1, seed: 1, scope: 'run' },
    generator: { path: '/m.gguf', sizeBytes: 1, headerHash: 'h' },
    evaluator: { path: '/m.gguf', sizeBytes: 1, headerHash: 'h' },
    dataset: { path: '/d.csv', fingerprint: 'f', format: 'csv', mapping: { textColumn: 'text', labelColumn: 'label' }, stats: { rows: opts.rows, skippedEmpty: 0, goldValueCounts: {}, unmappedGold: {} } as never },
    limit: null,
    baseline: false,
    concurrency: 1,
  });
  // Batches the size the importer writes, each checkpointed by insertRows (a small disk holds one).
  for (let start = 0; start < opts.rows; start += 1000) {
    const batch: DatasetRow[] = [];
    for (let i = start; i < Math.min(opts.rows, start + 1000); i++) {
      batch.push({ index: i, line: i + 2, input: opts.input(i), gold: i % 2 ? 'positive' : 'negative', goldRaw: i % 2 ? '1' : '0' } as DatasetRow);
    }
    store.insertRows(id, batch);
  }
  store.markImported(id);
  store.setStatus(id, 'paused');
  return id;
}

/**
 * What schemas v16 and v17 added (job_metrics' stored intervals, the confidence orders' indexes),
 * taken out again, for a test that sets a database back to v15 or before.
 */
export const UNDO_AFTER_V15 = `
  ALTER TABLE job_metrics DROP COLUMN intervals_json; ALTER TABLE job_metrics DROP COLUMN intervals_digest;
  DROP INDEX job_rows_confidence_asc; DROP INDEX job_rows_confidence_desc;
`;

/**
 * What schema v12 added (and what came after it on its tables), taken out again, for a test that
 * turns a database back into what an older version wrote (its migration then adds them back).
 */
export const UNDO_V12 = `
  ${UNDO_AFTER_V15}
  DROP INDEX job_rows_queue; ALTER TABLE job_rows DROP COLUMN runs_done; ALTER TABLE job_rows DROP COLUMN record_json;
  DROP TABLE review_decisions; DROP TABLE review_log; DROP TABLE job_metrics;
`;