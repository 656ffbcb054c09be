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
import { JobManager, SCHEMA_VERSION, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';
import type { JobRow, RowRun } from '../../../electron/jobs/types';
import type { GenerateRequest } from '../../../electron/engine/backend';
import { evaluationCacheKey, sweepBackend } from '../../../electron/experiments/sweep-backends';
import { STORE_PLAIN_BELOW, packText, unpackText } from '../../../electron/jobs/stored-text';
import { exportCsv } from '../../../electron/jobs/export';
import { readFileSync } from 'node:fs';
import { queryJobDb, tatraCli } from '../../helpers/tatra-cli';
import { ScriptedBackend, paraphrasedInput, politeScript, requestStage, type Script } from '../../helpers/scripted-backend';
import { UNDO_V12 } from '../../helpers/stored-job';
import { locateParaphrases, paraphrasesAt, type StoredRun } from '../../../electron/jobs/run-texts';

const dir = mkdtempSync(join(tmpdir(), 'tatra-storage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settings: TatraSettings = { n: 4, k: 4, r: 3, seed: 5, scope: 'run' };

/** The engine's keys of every generator output any test's jobs cached (the store keeps only their digests). */
const cacheKeys = new Set<string>();

const answer = (c: string) => (/good|fine/.test(c) ? 'positive' : 'negative');

/**
 * Paraphrases as a model writes them: numbered, some quoted, words that differ from line to line
 * and run to run (text that does not compress away: pseudo-random letters); run 3 gets two lines
 * for n (padded with the last), run 7 nothing usable (n copies of the input).
 */
const wordy: Script = (req, ctx) => {
  if (requestStage(req) !== 'paraphrases') return politeScript({ answer })(req, ctx);
  const n = Number(/Write exactly (\d+)/.exec(req.prompt.user)?.[1] ?? '1');
  const seed = req.seed ?? 0;
  // Runs' seeds are the job's seed + 10000 × the run.
  const run = Math.floor(seed / 10_000);
  if (run % 10 === 7) return 'Here they are:';
  let state = (seed * 7919 + paraphrasedInput(req).length) >>> 0;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) >>> 16;
  const word = () => Array.from({ length: 2 + (next() % 8) }, () => String.fromCharCode(97 + (next() % 26))).join('');
  const line = () => Array.from({ length: 12 }, word).join(' ');
  const lines = Array.from({ length: run % 10 === 3 ? 2 : n }, (_, i) => (i % 2 ? `${i + 1}. "${line()}"` : `${i + 1}) ${line()}`));
  return lines.join('\n');
};

function manager(store: JobStore, script: Script = politeScript({ answer })): { m: JobManager; backend: ScriptedBackend } {
  const backend = new ScriptedBackend(script, { id: 'scripted', contextSize: 8192 });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  const set = store.cacheSet.bind(store);
  store.cacheSet = (key, value) => {
    cacheKeys.add(key);
    set(key, value);
  };
  return { m: new JobManager({ store, backends: provider, inspectModel: plainModelRef }), backend };
}

async function finishedJob(store: JobStore, rows: number, script?: Script, r = settings.r): Promise<string> {
  const { m } = manager(store, script);
  const data = join(dir, `rows-${rows}.csv`);
  writeFileSync(data, 'text,label\n' + Array.from({ length: rows }, (_, i) => `${i % 2 ? 'a dull film' : 'a good film'} number ${i},${i % 2 ? 'negative' : 'positive'}`).join('\n') + '\n');
  const job = await m.create({ task: 'sst2', settings: { ...settings, r }, generatorPath: 'g.gguf', evaluatorPath: 'e.gguf', dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } }, concurrency: 2 });
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

/**
 * Every finished row as schema `version` wrote it: its runs with their paraphrases as text (before
 * v11), as TEXT (before v9) or compressed, its stage counts as TEXT (before v10) or compressed.
 */
function rowsAsBefore(store: JobStore, version: number): void {
  const rows = store.db.prepare(`SELECT job_id, idx FROM job_rows WHERE status = 'done'`).all() as { job_id: string; idx: number }[];
  const set = store.db.prepare('UPDATE job_rows SET runs_json = ?, stages_json = ? WHERE job_id = ? AND idx = ?');
  for (const { job_id, idx } of rows) {
    const row = store.row(job_id, idx)!;
    const runs = JSON.stringify(row.runs);
    const stages = JSON.stringify(row.stages);
    set.run(version < 9 ? runs : packText(runs), version < 10 ? stages : packText(stages), job_id, idx);
  }
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
      rowsAsBefore(store, 8);
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
      rowsAsBefore(store, 8);
      cacheAsBefore(store, 'text');
      store.db.exec(UNDO_V12);
      store.db.pragma('user_version = 8');
      expect(kinds(store).rows).toEqual([{ t: 'text', n: 10 }]);
    } finally {
      store.close();
    }
    store = openJobStore(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
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

  it('a database file from schema v9 (the cache keyed by TEXT) opens keyed by 16-byte digests (v10), every drill-down and both exports the same, and a job resumed on it calls the generator for nothing cached', async () => {
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
      rowsAsBefore(store, 9);
      cacheAsBefore(store, 'compressed');
      store.db.exec(UNDO_V12);
      store.db.pragma('user_version = 9');
      expect(store.db.prepare(`SELECT DISTINCT typeof(key) AS t FROM generation_cache`).all()).toEqual([{ t: 'text' }]);
    } finally {
      store.close();
    }
    const bytesBefore = statSync(join(path, 'tatra.db')).size;
    store = openJobStore(path);
    try {
      expect(store.schemaVersion).toBe(SCHEMA_VERSION);
      expect(store.db.prepare(`SELECT DISTINCT typeof(key) AS t, length(key) AS bytes, typeof(created) AS c FROM generation_cache`).all()).toEqual([{ t: 'blob', bytes: 16, c: 'integer' }]);
      expect(drillDowns(store, id)).toEqual(fresh);
      expect(await exported(store, 'after')).toEqual(before);
      // Smaller once the old table's pages are given back (than the file before it was migrated,
      // less the pages v12's tables and index add to it).
      const v12Pages = (store.db.prepare(`SELECT COUNT(*) AS n FROM dbstat WHERE name IN ('job_rows_queue', 'review_log', 'review_log_row', 'review_decisions', 'job_metrics', 'sqlite_autoindex_review_log_1', 'sqlite_autoindex_job_metrics_1')`).get() as { n: number }).n;
      expect(store.compact().after - v12Pages * (store.db.pragma('page_size', { simple: true }) as number)).toBeLessThan(bytesBefore);
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

  it('a row refers to the cached outputs its paraphrases were parsed from (spans, no parsing on reading), stored smaller, every drill-down and the export the same; gc after deleting another job keeps them', async () => {
    const store = openJobStore(join(dir, 'once'));
    const saved = new Map<number, RowRun[]>();
    const save = store.saveRowResult.bind(store);
    store.saveRowResult = (jobId, index, res) => {
      saved.set(index, structuredClone(res.runs));
      save(jobId, index, res);
    };
    try {
      const id = await finishedJob(store, 12, wordy, 10);
      const other = await finishedJob(store, 6, wordy, 10);
      const stored = store.db.prepare('SELECT idx, runs_json FROM job_rows WHERE job_id = ? ORDER BY idx').all(id) as { idx: number; runs_json: Buffer }[];
      const runs = stored.map((r) => JSON.parse(unpackText(r.runs_json)!) as StoredRun[]);
      const referring = runs.flat().filter((r) => 'paraphrasesIn' in r);
      // Every run but those with no usable line (run 7: copies of the input, kept as text).
      expect(referring.length).toBeGreaterThan(runs.flat().length / 2);
      expect(referring.some((r) => r.fallback?.kind === 'padded')).toBe(true);
      expect(runs.flat().some((r) => r.fallback?.kind === 'original' && !('paraphrasesIn' in r))).toBe(true);
      // Smaller than the same runs holding their paraphrases.
      const bytes = stored.reduce((n, r) => n + r.runs_json.length, 0);
      const inline = [...saved.values()].slice(0, 12).reduce((n, r) => n + packText(JSON.stringify(r)).length, 0);
      expect(bytes).toBeLessThan(inline * 0.8);

      const fresh = drillDowns(store, id);
      for (const row of [fresh.row3!, ...fresh.rows.rows, ...fresh.each]) expect(row.runs).toEqual(saved.get(row.index));
      // A second job on the same rows reads every paraphrase output from the cache; its rows refer to the same entries.
      const again = await finishedJob(store, 12, wordy, 10);
      const againStored = (store.db.prepare('SELECT runs_json FROM job_rows WHERE job_id = ? ORDER BY idx').all(again) as { runs_json: Buffer }[]).map((r) => JSON.parse(unpackText(r.runs_json)!) as StoredRun[]);
      expect(againStored.flat().filter((r) => 'paraphrasesIn' in r).map((r) => r.paraphrasesIn.entry)).toEqual(referring.map((r) => r.paraphrasesIn.entry));
      expect([...store.iterateRows(again)].map((r) => r.runs)).toEqual(fresh.each.map((r) => r.runs));
      store.deleteJob(again);
      const csv = await manager(store).m.export(id, 'csv', join(dir, 'once-before.csv'));
      const json = await manager(store).m.export(id, 'json', join(dir, 'once-before.json'));
      const exported = { csv: readFileSync(csv, 'utf8'), json: readFileSync(json, 'utf8') };
      expect(exported.json).toContain(saved.get(0)![0]!.paraphrases[0]!);

      store.deleteJob(other);
      store.compact();
      expect(drillDowns(store, id)).toEqual(fresh);
      await manager(store).m.export(id, 'csv', join(dir, 'once-after.csv'));
      await manager(store).m.export(id, 'json', join(dir, 'once-after.json'));
      expect({ csv: readFileSync(join(dir, 'once-after.csv'), 'utf8'), json: readFileSync(join(dir, 'once-after.json'), 'utf8') }).toEqual(exported);
    } finally {
      store.close();
    }
  });
});

describe('tatra jobs gc', () => {
  it("gives a deleted job's pages back to the file system in a file made before incremental auto-vacuum, the other job's rows (referring to the cache) the same", async () => {
    const data = join(dir, 'gc');
    let store = openJobStore(data);
    let id: string;
    let other: string;
    let fresh: ReturnType<typeof drillDowns>;
    try {
      id = await finishedJob(store, 10, wordy, 6);
      other = await finishedJob(store, 12, wordy, 6);
      fresh = drillDowns(store, id);
      // As a file from before auto-vacuum: a deletion leaves its pages free inside the file.
      store.db.pragma('auto_vacuum = NONE');
      store.db.exec('VACUUM');
    } finally {
      store.close();
    }
    const file = join(data, 'tatra.db');
    const full = statSync(file).size;
    await tatraCli(['jobs', 'delete', other, '--data-dir', data]);
    const freePages = queryJobDb<{ freelist_count: number }>(data, 'PRAGMA freelist_count')[0]!.freelist_count;
    expect(freePages).toBeGreaterThan(0);
    expect(statSync(file).size).toBe(full);
    const { stdout } = await tatraCli(['jobs', 'gc', '--data-dir', data]);
    expect(stdout).toMatch(/→/);
    expect(statSync(file).size).toBeLessThan(full);
    store = openJobStore(data);
    try {
      expect(store.db.pragma('freelist_count', { simple: true })).toBe(0);
      expect(store.getJob(other)).toBeNull();
      expect(drillDowns(store, id)).toEqual(fresh);
    } finally {
      store.close();
    }
  });
});

describe('rows written before v11', () => {
  it('keep their paraphrases as text on opening, and `tatra jobs gc` makes them refer to the cache, smaller, every drill-down and the export the same', async () => {
    const store = openJobStore(join(dir, 'relink'));
    try {
      const id = await finishedJob(store, 12, wordy, 10);
      const fresh = drillDowns(store, id);
      const { m } = manager(store);
      const json = readFileSync(await m.export(id, 'json', join(dir, 'relink-before.json')), 'utf8');
      rowsAsBefore(store, 10);
      const referring = () =>
        (store.db.prepare('SELECT runs_json FROM job_rows WHERE job_id = ?').all(id) as { runs_json: Buffer }[]).flatMap((r) => JSON.parse(unpackText(r.runs_json)!) as StoredRun[]).filter((r) => 'paraphrasesIn' in r).length;
      const bytes = () => (store.db.prepare('SELECT SUM(length(runs_json)) AS b FROM job_rows WHERE job_id = ?').get(id) as { b: number }).b;
      expect(referring()).toBe(0);
      const inline = bytes();
      expect(drillDowns(store, id)).toEqual(fresh);

      const { referred } = store.compact();
      expect(referred).toBe(12);
      // Every run but run 7's (no usable line: copies of the input).
      expect(referring()).toBe(12 * 9);
      expect(bytes()).toBeLessThan(inline * 0.5);
      expect(drillDowns(store, id)).toEqual(fresh);
      expect(readFileSync(await m.export(id, 'json', join(dir, 'relink-after.json')), 'utf8')).toBe(json);
      // A second pass finds nothing left to do.
      expect(store.compact().referred).toBe(0);
    } finally {
      store.close();
    }
  });
});

describe('paraphrase spans', () => {
  it('locate every paraphrase a text holds, in order or not, repeated or not, and keep the rest as text', () => {
    const text = 'F1. "a good film"\n2) a good film\n- fine, really\n';
    const paraphrases = ['a good film', 'a good film', 'fine, really', 'fine, really', 'not in it', '', 'a good film'];
    const spans = locateParaphrases(text, paraphrases)!;
    expect(paraphrasesAt(text, spans)).toEqual(paraphrases);
    expect(spans.filter((s) => typeof s === 'string')).toEqual(['not in it', '']);
    expect(locateParaphrases(text, ['elsewhere'])).toBeNull();
  });
});

describe("a sweep's shared evaluations in the cache", () => {
  it('are kept as [text, prompt tokens, completion tokens, ms], and one kept before as an object still answers without a call', async () => {
    const kept = new Map<string, string>();
    const store = { get: (k: string) => kept.get(k), set: (k: string, v: string) => void kept.set(k, v) };
    const inner = new ScriptedBackend(() => 'positive', { id: 'scripted', contextSize: 8192 });
    const request: GenerateRequest = { prompt: { system: 'Classify.', user: 'Sentence: "a good film"\nLabel:' }, maxTokens: 4, stage: 'evaluation' };
    const [first] = await sweepBackend(inner, store).generate([request]);
    const stored = JSON.parse(kept.get(evaluationCacheKey('scripted', request))!) as unknown[];
    expect(stored).toEqual([first!.text, first!.promptTokens, first!.completionTokens, Math.round(first!.ms * 10) / 10]);

    const other: GenerateRequest = { ...request, prompt: { ...request.prompt, user: 'Sentence: "a dull film"\nLabel:' } };
    kept.set(evaluationCacheKey('scripted', other), JSON.stringify({ text: 'negative', promptTokens: 12, completionTokens: 1, ms: 3898.914399999994 }));
    const calls = inner.requests.length;
    expect(await sweepBackend(inner, store).generate([request, other])).toEqual([
      { text: first!.text, promptTokens: first!.promptTokens, completionTokens: first!.completionTokens, ms: Math.round(first!.ms * 10) / 10 },
      { text: 'negative', promptTokens: 12, completionTokens: 1, ms: 3898.914399999994 },
    ]);
    expect(inner.requests.length).toBe(calls);
  });
});
