// A 2×2 generator × evaluator comparison with real inference on two synthetic GGUFs of different
// shapes, through the real JobManager, SQLite store and ModelPool: pairs complete, evaluators that
// share a generator see byte-identical examples and paraphrases (the generator's work done once),
// and only the models the running job needs are loaded.
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobManager, openJobStore, type BackendProvider, type JobStore } from '../../electron/jobs';
import { ModelPool } from '../../electron/hold';
import { Experiments } from '../../electron/experiments';
import { resolveTask } from '../../electron/tasks';
import { comparisonMatrix, type ComparisonResult } from '../../electron/common/contract/comparisons';
import { tinyModelBPath, tinyModelPath } from '../helpers/models';
import { ggufMutants } from '../helpers/gguf-mutants';

let dir: string;
let a: string;
let b: string;
let csv: string;
let store: JobStore;
let pool: ModelPool;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-compare-'));
  a = await tinyModelPath();
  b = await tinyModelBPath();
  csv = join(dir, 'reviews.csv');
  await writeFile(csv, 'text,label\n"a warm, funny and moving film",1\n"dull, slow and far too long",0\n"the cast is wonderful",1\n');
  store = openJobStore(join(dir, 'data'));
  pool = new ModelPool({ defaults: { threads: 1, contextSize: 2048, sequences: 2 } });
});

afterAll(async () => {
  await pool?.dispose();
  store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('comparisons on real models', () => {
  it('runs every pair, shares generator outputs byte for byte, and loads only what each job needs', async () => {
    // Watch the pool: what is loaded every time someone acquires a model.
    const snapshots: { acquiring: string; running: string[] | null; loaded: { path: string; refs: number }[] }[] = [];
    let running: string[] | null = null;
    const watched: BackendProvider = {
      async acquire(model) {
        const lease = await pool.acquire(model);
        snapshots.push({ acquiring: model.text, running, loaded: pool.loaded() });
        return lease;
      },
    };
    const jobs = new JobManager({ store, backends: watched, defaultConcurrency: 2 });
    const progress: ComparisonResult[] = [];
    const manager = new Experiments({ jobs, pool: watched, store, resolveTask: (ref) => resolveTask(ref) }).of('compare');
    manager.onProgress((e) => {
      const r = manager.get(e.id);
      progress.push(r);
      const p = r.pairs.find((x) => x.status === 'running');
      if (p) running = [p.generator, p.evaluator];
    });
    const { id } = await manager.create({
      taskId: 'sst2',
      dataPath: csv,
      generators: [a, b],
      evaluators: [a, b],
      settings: { n: 2, k: 2, r: 2, seed: 7, scope: 'run' },
      limit: 3,
      labelMap: { '0': 'negative', '1': 'positive' },
    });
    await manager.start(id);
    await manager.wait(id);
    const record = manager.get(id);

    expect(record.status).toBe('done');
    expect(record.warnings).toEqual([]);
    expect(record.pairs.map((p) => [p.generator, p.evaluator])).toEqual([
      [a, a],
      [a, b],
      [b, b],
      [b, a],
    ]);
    for (const p of record.pairs) {
      expect(p).toMatchObject({ status: 'done', rowsDone: 3, rowsTotal: 3, error: null });
      expect(p.accuracy).not.toBeNull();
      expect(p.macroF1).not.toBeNull();
      expect(p.tokens).toBeGreaterThan(0);
      expect(p.elapsedMs).toBeGreaterThan(0);
    }
    const matrix = comparisonMatrix(record);
    expect(matrix).toHaveLength(2);
    expect(matrix.flat().every((v) => v !== null && v >= 0 && v <= 1)).toBe(true);

    // Evaluators sharing a generator: byte-identical examples (per run) and paraphrases (per row and run).
    for (const gen of [a, b]) {
      const [first, second] = record.pairs.filter((p) => p.generator === gen).map((p) => p.jobId!);
      const exFirst = JSON.stringify(jobs.runExamples(first!).map((e) => e.examples));
      const exSecond = JSON.stringify(jobs.runExamples(second!).map((e) => e.examples));
      expect(exSecond).toBe(exFirst);
      expect(jobs.runExamples(first!).flatMap((e) => e.examples).length).toBeGreaterThan(0);
      const paras = (id: string) => JSON.stringify(jobs.rows(id).rows.map((r) => r.runs!.map((run) => run.paraphrases)));
      expect(paras(second!)).toBe(paras(first!));
      expect(jobs.rows(first!).rows.flatMap((r) => r.runs!.flatMap((run) => run.paraphrases)).length).toBe(3 * 2 * 2);
      // The second evaluator's job made no generator calls at all: everything came from the cache.
      expect(jobs.runExamples(first!).reduce((s, e) => s + e.stats.calls, 0)).toBeGreaterThan(0);
      expect(jobs.runExamples(second!).reduce((s, e) => s + e.stats.calls, 0)).toBe(0);
      expect(jobs.rows(second!).rows.every((r) => r.stages!.paraphrases.calls === 0)).toBe(true);
      expect(jobs.rows(first!).rows.some((r) => r.stages!.paraphrases.calls > 0)).toBe(true);
    }
    // Different generators wrote different examples (otherwise the sharing check proves nothing).
    const exOf = (i: number) => JSON.stringify(jobs.runExamples(record.pairs[i]!.jobId!).map((e) => e.examples));
    expect(exOf(2)).not.toBe(exOf(0));

    // Loading discipline: whenever a model was acquired, only the running pair's models were loaded,
    // and generator = evaluator shared one loaded copy.
    expect(snapshots.length).toBeGreaterThan(0);
    for (const s of snapshots) {
      const paths = s.loaded.map((l) => l.path);
      expect(new Set(paths).size).toBe(paths.length);
      expect(paths.length).toBeLessThanOrEqual(2);
      // Nothing but the running pair's two files (or, between pairs, the next generator).
      if (s.running) for (const p of paths) expect([...s.running, s.acquiring]).toContain(p);
    }
    expect(snapshots.filter((s) => s.running !== null).length).toBeGreaterThan(4);
    const sameFile = snapshots.filter((s) => s.loaded.length === 1 && s.loaded[0]!.refs >= 2);
    expect(sameFile.length).toBeGreaterThan(0);
    expect(pool.loaded()).toEqual([]);

    // Recorded for the UI, and progress was streamed.
    const comparisons = new Experiments({ jobs, store, resolveTask: (ref) => resolveTask(ref) }).of('compare');
    expect(comparisons.list().map((c) => c.id)).toContain(record.id);
    expect(comparisons.get(record.id).pairs.map((p) => p.accuracy)).toEqual(record.pairs.map((p) => p.accuracy));
    expect(progress.some((r) => r.pairs.some((p) => p.status === 'running'))).toBe(true);
  });

  it('stops on cancel: the running job is cancelled, later pairs never start, nothing stays loaded', async () => {
    const jobs = new JobManager({ store, backends: pool, defaultConcurrency: 1 });
    const manager = new Experiments({ jobs, store, pool, resolveTask: (ref) => resolveTask(ref) }).of('compare');
    const { id } = await manager.create({ taskId: 'sst2', dataPath: csv, generators: [a, b], evaluators: [a], settings: { n: 1, k: 2, r: 1, seed: 99, scope: 'run' } });
    // Cancel as the first pair's first row is committed: the cancel reaches the running job before
    // this listener returns (no await comes first), so the job's other two rows never finish.
    let cancelling: Promise<unknown> | null = null;
    jobs.on('row', () => {
      cancelling ??= manager.cancel(id);
    });
    await manager.start(id);
    await manager.wait(id);
    expect(cancelling).not.toBeNull();
    await cancelling;
    const record = manager.get(id);
    expect(record.status).toBe('cancelled');
    expect(record.pairs[0]!.status).toBe('cancelled');
    expect(record.pairs[1]).toMatchObject({ status: 'cancelled', jobId: null });
    expect(jobs.get(record.pairs[0]!.jobId!).status).toBe('cancelled');
    expect(pool.loaded()).toEqual([]);
  });

  it('rejects a bad model file before any job is created', async () => {
    const bad = join(dir, 'bad.gguf');
    await writeFile(bad, 'not a model');
    const jobs = new JobManager({ store, backends: pool, defaultConcurrency: 1 });
    const before = jobs.list().length;
    await expect(
      new Experiments({ jobs, store, resolveTask: (ref) => resolveTask(ref) }).of('compare').create({ taskId: 'sst2', dataPath: csv, generators: [a], evaluators: [bad], settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' } }),
    ).rejects.toThrow(/not a GGUF model/);
    expect(jobs.list().length).toBe(before);
  });

  it('a model that inspects well but fails to load fails its pair with that one line; the other pairs still run', async () => {
    // A real GGUF whose header is sound but whose tokenizer llama.cpp refuses: creating the
    // comparison accepts it, loading it fails.
    const refused = join(dir, 'refused.gguf');
    await writeFile(refused, ggufMutants(await readFile(a)).find((m) => m.id === 'tokenizer.ggml.model "nonexistent"')!.make());
    const acquired: string[] = [];
    const counted: BackendProvider = {
      acquire(model, opts) {
        acquired.push(model.text);
        return pool.acquire(model, opts);
      },
    };
    const jobs = new JobManager({ store, backends: counted, defaultConcurrency: 1 });
    const manager = new Experiments({ jobs, store, pool: counted, resolveTask: (ref) => resolveTask(ref) }).of('compare');
    const { id } = await manager.create({ taskId: 'sst2', dataPath: csv, generators: [refused, a], evaluators: [a], settings: { n: 1, k: 2, r: 1, seed: 5, scope: 'run' }, limit: 1, labelMap: { '0': 'negative', '1': 'positive' } });
    await manager.start(id);
    await manager.wait(id);
    const record = manager.get(id);

    // A comparison holds each generator for all its pairs.
    const failed = record.pairs.find((p) => p.generator === refused)!;
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^cannot load .*refused\.gguf.*: llama\.cpp refused it \(.*unknown tokenizer/);
    expect(failed.error).not.toContain('\n');
    expect(record.pairs.find((p) => p.generator === a)).toMatchObject({ status: 'done', error: null });
    expect(record.status).toBe('failed');
    // The pair named by its models' labels, as every face shows them (common/model-spec.ts).
    expect(record.error).toBe(`1 of 2 jobs failed: job ${failed.jobId} (refused → ${basename(a, '.gguf')}) failed: ${failed.error}`);
    // Loaded once, by the hold: the pair's job did not start only to try the same load again.
    expect(acquired.filter((p) => p === refused)).toHaveLength(1);
    expect(jobs.get(failed.jobId!)).toMatchObject({ status: 'failed', error: failed.error, rowsDone: 0 });
    expect(pool.loaded()).toEqual([]);
  });

  it("a pair whose job cannot be created still says why once the comparison has ended", async () => {
    // Checked when the comparison is created, then gone before its pairs run.
    const gone = join(dir, 'gone.gguf');
    await copyFile(a, gone);
    const jobs = new JobManager({ store, backends: pool, defaultConcurrency: 1 });
    const manager = new Experiments({ jobs, store, pool, resolveTask: (ref) => resolveTask(ref) }).of('compare');
    const { id } = await manager.create({ taskId: 'sst2', dataPath: csv, generators: [a, gone], evaluators: [a], settings: { n: 1, k: 2, r: 1, seed: 6, scope: 'run' }, limit: 1, labelMap: { '0': 'negative', '1': 'positive' } });
    await rm(gone);
    await manager.start(id);
    await manager.wait(id);
    const record = manager.get(id);
    expect(record.status).toBe('failed');
    expect(record.pairs.find((p) => p.generator === a)).toMatchObject({ status: 'done' });
    const failed = record.pairs.find((p) => p.generator === gone)!;
    expect(failed).toMatchObject({ status: 'failed', jobId: null });
    expect(failed.error).toMatch(/gone\.gguf/);
    // Read again later (the history, a reload): the same.
    expect(manager.get(id).pairs.find((p) => p.generator === gone)).toEqual(failed);
  });
});
