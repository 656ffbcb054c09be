// Budgets on a real SQLite file with the real engine and a scripted backend (exact semantics): a
// job's calls never exceed its budget, a row is never saved half-done, a token budget refuses a
// batch that could exceed it, and an experiment (a sweep, a comparison) shares one budget across
// its jobs, priced one way for every kind, pauses stopped by it, and a resume with a larger one
// ends with the same rows as a run without.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { resolveTask } from '../../../electron/tasks';
import { Experiments, type ExperimentManagers } from '../../../electron/experiments';
import { JobManager, openJobStore, plainModelRef, rowCalls, type BackendProvider, type JobStore } from '../../../electron/jobs';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';

const dir = mkdtempSync(join(tmpdir(), 'tatra-budget-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});
let count = 0;

function setup() {
  const store = openJobStore(join(dir, `d${count++}`));
  stores.push(store);
  const backend = new ScriptedBackend(politeScript({ answer: (c) => (c.length % 3 === 0 ? 'negative' : 'positive') }), { id: 'scripted:model' });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  const jobs = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  const sweeps = new Experiments({ jobs, store, pool: provider, resolveTask: (id) => resolveTask(id) }).of('sweep');
  return { store, jobs, sweeps, backend };
}

const data = join(dir, 'eight.csv');
writeFileSync(data, 'text,label\n' + ['a good film', 'a dull film', 'fine acting', 'weak plot', 'great fun', 'too long', 'lovely', 'awful'].map((t, i) => `"${t}",${i % 2 === 0 ? 'positive' : 'negative'}`).join('\n') + '\n');
const settings = { n: 2, k: 2, r: 2, seed: 4, scope: 'run' as const };
const jobSpec = { task: 'sst2', settings, generatorPath: 'model.gguf', evaluatorPath: 'model.gguf', dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } }, concurrency: 3 };
const rowsOf = (store: JobStore, id: string) => [...store.iterateRows(id)].map((r) => ({ index: r.index, status: r.status, prediction: r.prediction, votes: r.votes, runs: r.runs }));

describe('a job budget', () => {
  it('calls: rows start only when they can finish; the job pauses stopped by it; a larger one finishes it with the rows of a run without', async () => {
    const { jobs, store, backend } = setup();
    // 2 runs × 2 label calls of examples, then each row makes at most 2 × (1 + 3) = 8 calls.
    expect(rowCalls((await resolveTask('sst2')), settings, false)).toBe(8);
    const job = await jobs.create({ ...jobSpec, budget: { kind: 'calls', limit: 30 } });
    await jobs.start(job.id);
    const stopped = await jobs.wait(job.id);
    expect(stopped).toMatchObject({ status: 'paused', stoppedBy: 'budget' });
    // 4 + 3 rows × 8 = 28 ≤ 30; a fourth row could reach 36.
    expect(stopped.rowsDone).toBe(3);
    expect(stopped.usage.calls.total).toBe(backend.requests.length);
    expect(stopped.usage.calls.total).toBeLessThanOrEqual(30);
    expect(rowsOf(store, job.id).filter((r) => r.status !== 'pending')).toHaveLength(3);

    // Resumed as it is: nothing fits, nothing is sent.
    const sent = backend.requests.length;
    await jobs.resume(job.id);
    expect(await jobs.wait(job.id)).toMatchObject({ status: 'paused', stoppedBy: 'budget', rowsDone: 3 });
    expect(backend.requests.length).toBe(sent);

    await jobs.resume(job.id, { budget: { kind: 'calls', limit: 200 } });
    const done = await jobs.wait(job.id);
    expect(done).toMatchObject({ status: 'done', stoppedBy: null, rowsDone: 8 });
    expect(done.usage.calls.total).toBe(backend.requests.length);

    const plain = setup();
    const free = await plain.jobs.create(jobSpec);
    await plain.jobs.start(free.id);
    expect(await plain.jobs.wait(free.id)).toMatchObject({ status: 'done', budget: null });
    expect(rowsOf(store, job.id)).toEqual(rowsOf(plain.store, free.id));
    expect(done.usage).toEqual((await plain.jobs.wait(free.id)).usage);
  });

  it('tokens: a batch whose worst case could exceed what is left is never sent', async () => {
    const { jobs, backend } = setup();
    const job = await jobs.create({ ...jobSpec, budget: { kind: 'tokens', limit: 4000 } });
    await jobs.start(job.id);
    const end = await jobs.wait(job.id);
    expect(end).toMatchObject({ status: 'paused', stoppedBy: 'budget' });
    expect(end.rowsDone).toBeLessThan(8);
    expect(end.usage.tokens.prompt + end.usage.tokens.completion).toBeLessThanOrEqual(4000);
    // The meter saw every call the backend answered.
    expect(end.usage.calls.total).toBe(backend.requests.length);
  });

  it('tokens: a batch that could exceed the budget is refused before it is sent, even the run examples before any row', async () => {
    const { jobs, backend } = setup();
    // Each example call may write up to its token limit (hundreds of tokens): more than 300 left.
    const job = await jobs.create({ ...jobSpec, budget: { kind: 'tokens', limit: 300 } });
    await jobs.start(job.id);
    const end = await jobs.wait(job.id);
    expect(end).toMatchObject({ status: 'paused', stoppedBy: 'budget', rowsDone: 0 });
    expect(backend.requests).toHaveLength(0);
    expect(end.usage.calls.total).toBe(0);
  });

  it('usd needs a price', async () => {
    const { jobs } = setup();
    await expect(jobs.create({ ...jobSpec, budget: { kind: 'usd', limit: 1 } })).rejects.toThrow(/needs a price/);
  });
});

describe('an experiment budget', () => {
  it("a sweep's jobs share it: stopped by it between or inside jobs, resumed with a larger one to the rows of a sweep without", async () => {
    const grid = { n: [0, 2], k: [2], r: [2], seeds: [1] };
    const sweepSpec = { taskId: 'sst2', dataPath: data, inputColumn: 'text', goldColumn: 'label', generator: 'model.gguf', evaluator: 'model.gguf', grid, concurrency: 2 };
    const { sweeps, backend } = setup();
    const created = await sweeps.create(sweepSpec);
    await sweeps.start(created.id, { budget: { kind: 'calls', limit: 40 } });
    const stopped = await sweeps.wait(created.id);
    expect(stopped).toMatchObject({ status: 'paused', stoppedBy: 'budget', budget: { kind: 'calls', limit: 40 } });
    expect(stopped.usage!.calls.total).toBe(backend.requests.length);
    expect(stopped.usage!.calls.total).toBeLessThanOrEqual(40);

    await sweeps.resume(created.id, { budget: { kind: 'calls', limit: 10_000 } });
    const done = await sweeps.wait(created.id);
    expect(done).toMatchObject({ status: 'done', stoppedBy: null });
    expect(done.usage!.calls.total).toBe(backend.requests.length);

    const plain = setup();
    const free = await plain.sweeps.create(sweepSpec);
    await plain.sweeps.start(free.id);
    expect((await plain.sweeps.wait(free.id)).status).toBe('done');
    const points = (m: ExperimentManagers['sweep']) => m.get(m.list()[0]!.id).points.map((p) => ({ ...p, seconds: null, perSeed: p.perSeed.map((s) => ({ ...s, cost: { ...s.cost, seconds: null } })) }));
    expect(points(sweeps)).toEqual(points(plain.sweeps));
    expect(done.usage).toEqual(plain.sweeps.summary(free.id).usage);
  });

  it("a comparison's is priced as a sweep's and a job's: a price given counts for every model, and money with nothing to price it is refused before anything is recorded", async () => {
    const store = openJobStore(join(dir, `d${count++}`));
    stores.push(store);
    const backend = new ScriptedBackend(politeScript({ answer: (c) => (c.length % 3 === 0 ? 'negative' : 'positive') }), { id: 'scripted:model' });
    const provider: BackendProvider = {
      acquire: async () => ({ backend, release: async () => undefined }),
      describeRemote: async (spec) => ({ urls: ['http://127.0.0.1:9/v1'], model: spec.name, kind: 'llama-server', version: 'scripted', constrained: 'gbnf' }),
    };
    const jobs = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
    const comparisons = new Experiments({ jobs, store, pool: provider, resolveTask: (id) => resolveTask(id) }).of('compare');
    // Inline remote models (a GGUF file would be checked): they have no price of their own.
    const [g, e] = ['openai+http://127.0.0.1:9/v1#gen', 'openai+http://127.0.0.1:9/v1#eval'];
    const spec = { taskId: 'sst2', dataPath: data, generators: [g], evaluators: [e, g], settings, inputColumn: 'text', goldColumn: 'label', concurrency: 3 };
    await expect(comparisons.create(spec, { budget: { kind: 'usd', limit: 1 } })).rejects.toThrow('a budget in usd needs a price: --price-in and --price-out, or a remote model whose entry has one');
    expect(comparisons.list()).toEqual([]);

    // The whole comparison makes about 9,900 tokens: a cent at a dollar a million, so half a cent stops it part-way.
    const price = { inPerMillion: 1, outPerMillion: 1 };
    const { id } = await comparisons.create(spec, { budget: { kind: 'usd', limit: 0.005 }, price });
    await comparisons.start(id);
    const stopped = await comparisons.wait(id);
    expect(stopped).toMatchObject({ status: 'paused', stoppedBy: 'budget', budget: { kind: 'usd', limit: 0.005 } });
    expect(stopped.usage!.usd).toBeGreaterThan(0);
    expect(stopped.usage!.usd).toBeLessThanOrEqual(0.005);
    // Each job counted at the price given: a dollar per million tokens.
    const tokens = stopped.usage!.tokens.prompt + stopped.usage!.tokens.completion;
    expect(stopped.usage!.usd).toBeCloseTo(tokens / 1e6, 9);

    // A larger budget keeps the price it had.
    await comparisons.resume(id, { budget: { kind: 'usd', limit: 100 } });
    const done = await comparisons.wait(id);
    expect(done).toMatchObject({ status: 'done', stoppedBy: null });
    expect(comparisons.budgetOf(id)).toEqual({ kind: 'usd', limit: 100, price });
    expect(done.usage!.usd).toBeCloseTo((done.usage!.tokens.prompt + done.usage!.tokens.completion) / 1e6, 9);
  });
});
