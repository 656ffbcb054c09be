// A job database written before comparisons said the jobs' words (schema 12: task, dataset,
// textColumn, labelColumn) and before an experiment's budget kept one price (a generator's and an
// evaluator's) opens, and its comparisons show and resume: one stopped part-way continues its own
// job, one never started runs, on a real SQLite file and the real engine with a scripted backend.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { Experiments } from '../../../electron/experiments';
import { resolveTask } from '../../../electron/tasks';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { UNDO_AFTER_V15 } from '../../helpers/stored-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-compare-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const data = join(dir, 'four.csv');
writeFileSync(data, 'review,sentiment\n"a good film",pos\n"a dull film",neg\n"great fun",pos\n"too long",neg\n');
// Remote specs: a comparison checks a GGUF's header, and no model file is needed here.
const [g, e] = ['openai+http://127.0.0.1:9/v1#gen', 'openai+http://127.0.0.1:9/v1#eval'];

function open(dataDir: string) {
  const store = openJobStore(dataDir);
  stores.push(store);
  const backend = new ScriptedBackend(politeScript({ answer: (c) => (/good|great/.test(c) ? 'positive' : 'negative') }), { id: 'scripted:model' });
  const provider: BackendProvider = {
    acquire: async () => ({ backend, release: async () => undefined }),
    describeRemote: async (spec) => ({ urls: ['http://127.0.0.1:9/v1'], model: spec.name, kind: 'llama-server', version: 'scripted', constrained: 'gbnf' }),
  };
  const jobs = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  return { store, jobs, comparisons: new Experiments({ jobs, store, pool: provider, resolveTask: (ref) => resolveTask(ref) }).of('compare') };
}

it('a database of schema 12 opens with its comparisons in the new words; they show and resume', async () => {
  const dataDir = join(dir, 'data');
  const first = open(dataDir);
  const spec = { taskId: 'sst2', dataPath: data, generators: [g], evaluators: [e, g], settings: { n: 1, k: 2, r: 1, seed: 4, scope: 'run' as const }, inputColumn: 'review', goldColumn: 'sentiment', labelMap: { pos: 'positive', neg: 'negative' }, concurrency: 1 };
  // Stopped part-way: paused as its first pair's first row is committed.
  const stopped = await first.comparisons.create(spec);
  let pausing: Promise<unknown> | null = null;
  const off = first.jobs.on('row', () => {
    pausing ??= first.comparisons.pause(stopped.id);
  });
  await first.comparisons.start(stopped.id);
  await first.comparisons.wait(stopped.id);
  await pausing;
  off();
  const before = first.comparisons.get(stopped.id);
  expect(before.error).toBeNull();
  expect(before.status).toBe('paused');
  const partJob = before.pairs[0]!.jobId!;
  expect(first.jobs.get(partJob).rowsDone).toBeLessThan(4);
  // Never started.
  const queued = await first.comparisons.create({ ...spec, settings: { ...spec.settings, seed: 5 } });

  // Written as schema 12 wrote them: the comparison's own words for its spec's fields.
  for (const { id, spec_json } of first.store.db.prepare(`SELECT id, spec_json FROM experiments`).all() as { id: string; spec_json: string }[]) {
    const stored = JSON.parse(spec_json) as { spec: Record<string, unknown> };
    const { taskId, dataPath, inputColumn, goldColumn, ...rest } = stored.spec;
    stored.spec = { task: taskId, dataset: dataPath, textColumn: inputColumn, labelColumn: goldColumn, ...rest };
    first.store.db.prepare(`UPDATE experiments SET spec_json = ? WHERE id = ?`).run(JSON.stringify(stored), id);
  }
  // Budgets as schema 12 kept them: one price for both roles (a comparison's), or two that differ.
  const price = { inPerMillion: 2, outPerMillion: 3 };
  const oldBudget = (prices: object) => JSON.stringify({ kind: 'calls', limit: 100_000, prices });
  first.store.db.prepare(`UPDATE experiments SET budget_json = ? WHERE id = ?`).run(oldBudget({ generator: price, evaluator: price }), stopped.id);
  first.store.db.prepare(`UPDATE experiments SET budget_json = ? WHERE id = ?`).run(oldBudget({ generator: price, evaluator: null }), queued.id);
  first.store.db.exec(UNDO_AFTER_V15);
  first.store.db.pragma('user_version = 12');
  first.store.close();
  stores.length = 0;

  const again = open(dataDir);
  const shown = again.comparisons.get(stopped.id);
  expect(shown.spec).toMatchObject({ taskId: 'sst2', dataPath: data, inputColumn: 'review', goldColumn: 'sentiment' });
  expect(shown.spec).not.toHaveProperty('task');
  // v13: the one price kept; two that differed were the entries' own, read again by each job.
  expect(again.comparisons.budgetOf(stopped.id)).toEqual({ kind: 'calls', limit: 100_000, price });
  expect(again.comparisons.budgetOf(queued.id)).toEqual({ kind: 'calls', limit: 100_000 });
  expect(shown.pairs.map((p) => [p.status, p.jobId])).toEqual(before.pairs.map((p) => [p.status, p.jobId]));
  expect(again.comparisons.list().map((c) => [c.id, c.taskId, c.dataPath])).toEqual([
    [queued.id, 'sst2', data],
    [stopped.id, 'sst2', data],
  ]);

  for (const id of [stopped.id, queued.id]) {
    await again.comparisons.start(id);
    expect((await again.comparisons.wait(id)).status).toBe('done');
  }
  const done = again.comparisons.get(stopped.id);
  // The pair stopped part-way finished in the job it had: its rows were not made again.
  expect(done.pairs[0]!.jobId).toBe(partJob);
  expect(done.pairs.map((p) => [p.status, p.rowsDone, p.accuracy])).toEqual([
    ['done', 4, 1],
    ['done', 4, 1],
  ]);
  expect(again.comparisons.get(queued.id).pairs.every((p) => p.status === 'done' && p.rowsDone === 4)).toBe(true);
});
