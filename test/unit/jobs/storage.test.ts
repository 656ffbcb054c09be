// Long text stored compressed and the generation cache keyed compactly (jobs/stored-text.ts), and
// databases written before that: every drill-down the app offers (a row's runs with their
// examples, paraphrases and votes, the runs' examples, the generator cache) reads the same from
// old rows and old cache entries, from new ones, after the schema's migrations and after `tatra
// jobs gc` (JobStore.compact) rewrote the old ones; a deleted job's pages go back to the file
// system, and a job resumed on a migrated file finds its generator outputs in the cache. Real
// JobManager, real SQLite file, real engine, scripted backend.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TatraSettings } from '../../../electron/common/tatra';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';
import type { JobRow } from '../../../electron/jobs/types';
import { STORE_PLAIN_BELOW, packText, unpackText } from '../../../electron/jobs/stored-text';
import { exportCsv } from '../../../electron/jobs/export';
import { readFileSync } from 'node:fs';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';

const dir = mkdtempSync(join(tmpdir(), 'tatra-storage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settings: TatraSettings = { n: 4, k: 4, r: 3, seed: 5, scope: 'run' };

/** The engine's keys of every generator output any test's jobs cached (the store keeps only their digests). */
const cacheKeys = new Set<string>();

function manager(store: JobStore): { m: JobManager; backend: ScriptedBackend } {
  const backend = new ScriptedBackend(politeScript({ answer: (c) => (/good|fine/.test(c) ? 'positive' : 'negative') }), { id: 'scripted', contextSize: 8192 });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  const set = store.cacheSet.bind(store);
  store.cacheSet = (key, value) => {
    cacheKeys.add(key);
    set(key, value);
  };
  return { m: new JobManager({ store, backends: provider, inspectModel: plainModelRef }), backend };
}

async function finishedJob(store: JobStore, rows: number): Promise<string> {
  const { m } = manager(store);
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
  const cache = [...cacheKeys].sort().map((key) => [key, store.cacheGet(key)]);
  expect(cache.filter(([, v]) => v !== undefined).length).toBeGreaterThan(0);
  return { rows: store.rows(jobId, { limit: 1000 }), each: [...store.iterateRows(jobId)], row3: store.row(jobId, 3), examples: store.runExamples(jobId), cache };
}

const kinds = (store: JobStore) => ({
  rows: store.db.prepare(`SELECT typeof(runs_json) AS t, COUNT(*) AS n FROM job_rows WHERE runs_json IS NOT NULL GROUP BY t`).all(),
  cache: store.db.prepare(`SELECT typeof(value) AS t, COUNT(*) AS n FROM generation_cache WHERE length(value) >= ${STORE_PLAIN_BELOW} GROUP BY t`).all(),
});

/** Every row's runs back to TEXT, as the code before compression (schema < 9) wrote them. */
function rowsAsText(store: JobStore): void {
  const rows = store.db.prepare('SELECT job_id, idx, runs_json, stages_json FROM job_rows').all() as { job_id: string; idx: number; runs_json: Buffer | string | null; stages_json: Buffer | string | null }[];
  const set = store.db.prepare('UPDATE job_rows SET runs_json = ?, stages_json = ? WHERE job_id = ? AND idx = ?');
  for (const r of rows) set.run(unpackText(r.runs_json), unpackText(r.stages_json), r.job_id, r.idx);
}

/**
 * The generation cache back to the layout schemas 1–9 wrote: the engine's key as TEXT, the time
 * an ISO string, the value compressed (v9) or TEXT (before). Only the keys this test file saw are
 * known; those are every entry (checked).
 */
function cacheAsBefore(store: JobStore, values: 'compressed' | 'text'): void {
  const entries = [...cacheKeys].map((key) => [key, store.cacheGet(key)] as const).filter(([, v]) => v !== undefined);
  expect(entries).toHaveLength((store.db.prepare('SELECT COUNT(*) AS n FROM generation_cache').get() as { n: number }).n);
  store.db.exec(`DROP TABLE generation_cache; CREATE TABLE generation_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, created TEXT NOT NULL) WITHOUT ROWID;`);
  const insert = store.db.prepare('INSERT INTO generation_cache (key, value, created) VALUES (?, ?, ?)');
  for (const [key, value] of entries) insert.run(key, values === 'compressed' ? packText(value!) : value, '2026-11-20T10:00:00.000Z');
}

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
      rowsAsText(store);
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
      // Back to what the older version left on disk: TEXT values, the cache keyed by TEXT, schema 8.
      rowsAsText(store);
      cacheAsBefore(store, 'text');
      store.db.pragma('user_version = 8');
      expect(kinds(store).rows).toEqual([{ t: 'text', n: 10 }]);
    } finally {
      store.close();
    }
    store = openJobStore(path);
    try {
      expect(store.schemaVersion).toBe(10);
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

  it('a database file from schema v9 (the cache keyed by TEXT) opens at v10 keyed by 16-byte digests, every drill-down and both exports the same, and a job resumed on it calls the generator for nothing cached', async () => {
    const path = join(dir, 'v9');
    let id: string;
    let fresh: ReturnType<typeof drillDowns>;
    let store = openJobStore(path);
    const exported = async (s: JobStore, tag: string) => {
      const m = manager(s).m;
      const csv = await m.export(id, 'csv', join(dir, `v9-${tag}.csv`));
      const json = await m.export(id, 'json', join(dir, `v9-${tag}.json`));
      return { csv: readFileSync(csv, 'utf8'), json: readFileSync(json, 'utf8') };
    };
    let before: Awaited<ReturnType<typeof exported>>;
    try {
      id = await finishedJob(store, 10);
      fresh = drillDowns(store, id);
      before = await exported(store, 'before');
      // What v9 left on disk: rows as v9 wrote them (stages TEXT), the cache keyed by TEXT with values compressed.
      const rows = store.db.prepare('SELECT job_id, idx, stages_json FROM job_rows').all() as { job_id: string; idx: number; stages_json: Buffer | string | null }[];
      for (const r of rows) store.db.prepare('UPDATE job_rows SET stages_json = ? WHERE job_id = ? AND idx = ?').run(unpackText(r.stages_json), r.job_id, r.idx);
      cacheAsBefore(store, 'compressed');
      store.db.pragma('user_version = 9');
      expect(store.db.prepare(`SELECT DISTINCT typeof(key) AS t FROM generation_cache`).all()).toEqual([{ t: 'text' }]);
    } finally {
      store.close();
    }
    const bytesBefore = statSync(join(path, 'tatra.db')).size;
    store = openJobStore(path);
    try {
      expect(store.schemaVersion).toBe(10);
      expect(store.db.prepare(`SELECT DISTINCT typeof(key) AS t, length(key) AS bytes, typeof(created) AS c FROM generation_cache`).all()).toEqual([{ t: 'blob', bytes: 16, c: 'integer' }]);
      expect(drillDowns(store, id)).toEqual(fresh);
      expect(await exported(store, 'after')).toEqual(before);
      // Smaller once the old table's pages are given back.
      expect(store.compact().after).toBeLessThan(bytesBefore);
      expect(drillDowns(store, id)).toEqual(fresh);

      // Half the rows undone and the job paused, as a job stopped half-way: resuming it finds every
      // example and paraphrase in the migrated cache and makes the same rows again.
      store.db.prepare(`UPDATE job_rows SET status = 'pending', prediction = NULL, correct = NULL, confidence = NULL, votes_json = NULL, tie_break = NULL, runs_json = NULL, stages_json = NULL, ms = NULL, finished = NULL WHERE job_id = ? AND idx >= 5`).run(id);
      store.db.prepare(`UPDATE jobs SET status = 'paused', owner = NULL WHERE id = ?`).run(id);
      const { m, backend } = manager(store);
      await m.resume(id);
      expect((await m.wait(id)).status).toBe('done');
      expect(backend.stage('evaluation').length).toBeGreaterThan(0);
      expect(backend.stage('paraphrases')).toHaveLength(0);
      expect(backend.stage('examples')).toHaveLength(0);
      const same = (r: JobRow) => ({ index: r.index, prediction: r.prediction, votes: r.votes, runs: r.runs });
      expect([...store.iterateRows(id)].map(same)).toEqual(fresh.each.map(same));
    } finally {
      store.close();
    }
  });
});
