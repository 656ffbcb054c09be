// Long text stored compressed (jobs/stored-text.ts), and a database written before that: every
// drill-down the app offers (a row's runs with their examples, paraphrases and votes, the runs'
// examples, the generator cache) reads the same from old TEXT rows, from new compressed rows, and
// after `tatra jobs gc` (JobStore.compact) rewrote the old ones; a deleted job's pages go back to
// the file system. Real JobManager, real SQLite file, real engine, scripted backend.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TatraSettings } from '../../../electron/common/tatra';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';
import { STORE_PLAIN_BELOW, unpackText } from '../../../electron/jobs/stored-text';
import { exportCsv } from '../../../electron/jobs/export';
import { readFileSync } from 'node:fs';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';

const dir = mkdtempSync(join(tmpdir(), 'tatra-storage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settings: TatraSettings = { n: 4, k: 4, r: 3, seed: 5, scope: 'run' };

async function finishedJob(store: JobStore, rows: number): Promise<string> {
  const backend = new ScriptedBackend(politeScript({ answer: (c) => (/good|fine/.test(c) ? 'positive' : 'negative') }), { id: 'scripted', contextSize: 8192 });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  const m = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  const data = join(dir, `rows-${rows}.csv`);
  writeFileSync(data, 'text,label\n' + Array.from({ length: rows }, (_, i) => `${i % 2 ? 'a dull film' : 'a good film'} number ${i},${i % 2 ? 'negative' : 'positive'}`).join('\n') + '\n');
  const job = await m.create({ task: 'sst2', settings, generatorPath: 'g.gguf', evaluatorPath: 'e.gguf', dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } }, concurrency: 2 });
  await m.start(job.id);
  expect((await m.wait(job.id)).status).toBe('done');
  store.flushCache();
  return job.id;
}

/** Everything a drill-down reads of a job, and the generator cache. */
function drillDowns(store: JobStore, jobId: string) {
  const cache = (store.db.prepare('SELECT key FROM generation_cache ORDER BY key').all() as { key: string }[]).map(({ key }) => [key, store.cacheGet(key)]);
  return { rows: store.rows(jobId, { limit: 1000 }), each: [...store.iterateRows(jobId)], row3: store.row(jobId, 3), examples: store.runExamples(jobId), cache };
}

const kinds = (store: JobStore) => ({
  rows: store.db.prepare(`SELECT typeof(runs_json) AS t, COUNT(*) AS n FROM job_rows WHERE runs_json IS NOT NULL GROUP BY t`).all(),
  cache: store.db.prepare(`SELECT typeof(value) AS t, COUNT(*) AS n FROM generation_cache WHERE length(value) >= ${STORE_PLAIN_BELOW} GROUP BY t`).all(),
});

describe('compressed text in the job database', () => {
  it('new rows and long cached outputs are stored compressed and read back whole', async () => {
    const store = openJobStore(join(dir, 'new'));
    try {
      const id = await finishedJob(store, 8);
      const seen = drillDowns(store, id);
      expect(seen.rows.rows).toHaveLength(8);
      for (const row of seen.rows.rows) {
        expect(row.runs).toHaveLength(3);
        for (const run of row.runs!) expect(run.paraphrases.length).toBeGreaterThan(0);
      }
      expect(kinds(store).rows).toEqual([{ t: 'blob', n: 8 }]);
      expect((kinds(store).cache as { t: string }[]).every((k) => k.t === 'blob')).toBe(true);
    } finally {
      store.close();
    }
  });

  it('a database written before compression reads the same, and `jobs gc` compresses it, keeping every drill-down, and gives back a deleted job', async () => {
    const path = join(dir, 'old');
    const store = openJobStore(path);
    try {
      const id = await finishedJob(store, 12);
      const other = await finishedJob(store, 6);
      const fresh = drillDowns(store, id);
      // As an older version wrote it: every value TEXT.
      const rows = store.db.prepare('SELECT job_id, idx, runs_json FROM job_rows').all() as { job_id: string; idx: number; runs_json: Buffer | string | null }[];
      for (const r of rows) store.db.prepare('UPDATE job_rows SET runs_json = ? WHERE job_id = ? AND idx = ?').run(unpackText(r.runs_json), r.job_id, r.idx);
      const cached = store.db.prepare('SELECT key, value FROM generation_cache').all() as { key: string; value: Buffer | string }[];
      for (const c of cached) store.db.prepare('UPDATE generation_cache SET value = ? WHERE key = ?').run(unpackText(c.value), c.key);
      expect(kinds(store).rows).toEqual([{ t: 'text', n: 18 }]);
      expect(drillDowns(store, id)).toEqual(fresh);

      store.deleteJob(other);
      const { before, after, rewritten } = store.compact();
      expect(rewritten).toBeGreaterThanOrEqual(12);
      expect(after).toBeLessThan(before);
      expect(after).toBe(statSync(join(path, 'tatra.db')).size);
      expect(kinds(store).rows).toEqual([{ t: 'blob', n: 12 }]);
      expect(drillDowns(store, id)).toEqual(fresh);
      // Incremental auto-vacuum from now on: no free pages are kept.
      expect(store.db.pragma('auto_vacuum', { simple: true })).toBe(2);
      expect(store.db.pragma('freelist_count', { simple: true })).toBe(0);
    } finally {
      store.close();
    }
  });

  it('a database file from schema v8 (every value TEXT, as the code before compression wrote it) is compressed on open by the v9 migration, every drill-down and the export the same', async () => {
    const path = join(dir, 'v8');
    let id: string;
    let fresh: ReturnType<typeof drillDowns>;
    const csvBefore = join(dir, 'v8-before.csv');
    let store = openJobStore(path);
    try {
      id = await finishedJob(store, 10);
      fresh = drillDowns(store, id);
      await exportCsv(store, store.getJob(id)!, csvBefore);
      // Back to what the older version left on disk: TEXT values, schema 8.
      const rows = store.db.prepare('SELECT job_id, idx, runs_json FROM job_rows').all() as { job_id: string; idx: number; runs_json: Buffer | string | null }[];
      for (const r of rows) store.db.prepare('UPDATE job_rows SET runs_json = ? WHERE job_id = ? AND idx = ?').run(unpackText(r.runs_json), r.job_id, r.idx);
      const cached = store.db.prepare('SELECT key, value FROM generation_cache').all() as { key: string; value: Buffer | string }[];
      for (const c of cached) store.db.prepare('UPDATE generation_cache SET value = ? WHERE key = ?').run(unpackText(c.value), c.key);
      store.db.pragma('user_version = 8');
      expect(kinds(store).rows).toEqual([{ t: 'text', n: 10 }]);
    } finally {
      store.close();
    }
    store = openJobStore(path);
    try {
      expect(store.schemaVersion).toBe(9);
      expect(kinds(store).rows).toEqual([{ t: 'blob', n: 10 }]);
      expect((kinds(store).cache as { t: string }[]).every((k) => k.t === 'blob')).toBe(true);
      expect(drillDowns(store, id)).toEqual(fresh);
      const csvAfter = join(dir, 'v8-after.csv');
      await exportCsv(store, store.getJob(id)!, csvAfter);
      expect(readFileSync(csvAfter, 'utf8')).toBe(readFileSync(csvBefore, 'utf8'));
    } finally {
      store.close();
    }
  });
});
