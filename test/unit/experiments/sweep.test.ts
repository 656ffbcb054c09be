// Sweeps on a real SQLite file with the real engine and a scripted backend (exact
// semantics): which calls a sweep really makes, that a point read off the largest r equals a job
// run at that r alone, that the "alone" counts are what such a job really spends, and that a
// sweep paused part-way and resumed by another manager ends where an uninterrupted one does.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { resolveTask } from '../../../electron/tasks';
import { Experiments, sweepDeterministic } from '../../../electron/experiments';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';
import type { SweepResult } from '../../../electron/common/contract/sweeps';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';

const dir = mkdtempSync(join(tmpdir(), 'tatra-sweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});
let count = 0;

// The verdict depends on the candidate and the run's examples, so accuracy moves with n, k and r.
function verdict(candidate: string, user: string): string {
  let h = 0;
  for (const ch of `${candidate}|${user.length}`) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h % 3 === 0 ? 'negative' : 'positive';
}

function setup(opts: { delayMs?: number; dataDir?: string; deterministic?: boolean } = {}) {
  const dataDir = opts.dataDir ?? join(dir, `d${count++}`);
  const store = openJobStore(dataDir);
  stores.push(store);
  const backend = new ScriptedBackend(politeScript({ answer: (c, req) => verdict(c, req.prompt.user) }), { id: 'scripted:model', delayMs: opts.delayMs ?? 0, deterministic: opts.deterministic ?? true });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  const jobs = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  const sweeps = new Experiments({ jobs, store, pool: provider, resolveTask: (id) => resolveTask(id) }).of('sweep');
  return { dataDir, store, jobs, sweeps, backend };
}

const data = join(dir, 'six.csv');
writeFileSync(data, 'text,label\n' + ['a good film', 'a dull film', 'fine acting', 'weak plot', 'great fun', 'too long'].map((t, i) => `"${t}",${i % 2 === 0 ? 'positive' : 'negative'}`).join('\n') + '\n');

const spec = {
  taskId: 'sst2',
  dataPath: data,
  inputColumn: 'text',
  goldColumn: 'label',
  generator: 'model.gguf',
  evaluator: 'model.gguf',
  grid: { n: [2, 0], k: [4, 2], r: [3, 1, 2], seeds: [2, 1] },
  concurrency: 3,
};

/** Everything but measured time. */
const untimed = (r: SweepResult) => ({
  points: r.points.map((p) => ({ ...p, seconds: null, perSeed: p.perSeed.map((s) => ({ ...s, cost: { ...s.cost, seconds: null } })) })),
  sharing: r.sharing,
});

describe('sweeps', () => {
  it('runs one job per (n, k, seed) at the largest r and pays each shared piece of work once', async () => {
    const { sweeps, backend } = setup();
    const created = await sweeps.create(spec);
    expect(created.grid).toEqual({ n: [0, 2], k: [2, 4], r: [1, 2, 3], seeds: [1, 2] });
    expect(created.progress).toMatchObject({ jobsTotal: 8, jobsDone: 0, rowsTotal: 48 });
    await sweeps.start(created.id);
    expect((await sweeps.wait(created.id)).status).toBe('done');
    const result = sweeps.get(created.id);
    expect(result.jobs.every((j) => j.status === 'done')).toBe(true);
    expect(result.points).toHaveLength(12);
    for (const p of result.points) expect(p.seeds).toEqual([1, 2]);

    // Examples: 3 runs × 2 label calls per (k, seed), whatever n. Paraphrases: 6 rows × 3 runs per
    // seed for n=2, whatever k. Evaluations: per (k, seed) the n=0 job's 18 originals, and the n=2
    // job's 36 paraphrases (its originals are the n=0 job's answers).
    expect(backend.stage('examples')).toHaveLength(4 * 3 * 2);
    expect(backend.stage('paraphrases')).toHaveLength(2 * 6 * 3);
    expect(backend.stage('evaluation')).toHaveLength(4 * (18 + 36));
    expect(result.sharing.generatorCalls).toEqual({ alone: 240, made: 24 + 36, saved: 180 });
    expect(result.sharing.evaluatorCalls).toEqual({ alone: 576, made: 216, saved: 360 });
    // The sweep's call-counting wrapper keeps the model's promise: every job, and so the sweep, is reproducible.
    expect(result.deterministic).toBe(true);
  });

  it('says whether it is reproducible: nothing before a job ran, false when a model promises nothing', async () => {
    expect(sweepDeterministic([])).toBeNull();
    expect(sweepDeterministic([null, true])).toBe(true);
    expect(sweepDeterministic([true, false, null])).toBe(false);
    const { sweeps } = setup({ deterministic: false });
    const created = await sweeps.create({ ...spec, grid: { n: [0], k: [2], r: [1], seeds: [1] } });
    expect(sweeps.get(created.id).deterministic).toBeNull();
    await sweeps.start(created.id);
    expect((await sweeps.wait(created.id)).status).toBe('done');
    expect(sweeps.get(created.id).deterministic).toBe(false);
  });

  it('a point read off the largest r equals a job run at that r alone, and costs what that job costs', async () => {
    const { sweeps } = setup();
    const { id } = await sweeps.create(spec);
    await sweeps.start(id);
    await sweeps.wait(id);
    const result = sweeps.get(id);
    for (const [n, k, r] of [
      [2, 4, 2],
      [0, 2, 1],
      [2, 2, 1],
    ] as const) {
      // Alone: a fresh database and a fresh backend, nothing cached.
      const alone = setup();
      const job = await alone.jobs.create({
        task: 'sst2',
        settings: { n, k, r, seed: 1, scope: 'run' },
        generatorPath: 'model.gguf',
        evaluatorPath: 'model.gguf',
        dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } },
        concurrency: 2,
      });
      await alone.jobs.start(job.id);
      expect((await alone.jobs.wait(job.id)).status).toBe('done');
      const seed1 = result.points.find((p) => p.n === n && p.k === k && p.r === r)!.perSeed.find((s) => s.seed === 1)!;
      const metrics = alone.jobs.metrics(job.id);
      expect(seed1.accuracy).toBe(metrics.accuracy);
      expect(seed1.macroF1).toBe(metrics.macroF1);
      const gen = alone.backend.stage('examples').length + alone.backend.stage('paraphrases').length;
      expect(seed1.cost.generatorCalls).toBe(gen);
      expect(seed1.cost.evaluatorCalls).toBe(alone.backend.stage('evaluation').length);
    }
    // The grid's accuracies are not all alike (the check above compared something).
    expect(new Set(result.points.map((p) => p.accuracy?.mean)).size).toBeGreaterThan(1);
  });

  // The pause lands in the third job (n=0, k=4, seed 1) once a row of it is done: its examples are
  // stored by then and n=0 has no paraphrases, so no generated work whose cost a job records is in
  // flight, and even the token estimates match (see CostIndex for when they cannot).
  it('paused part-way and resumed by another manager, it ends as an uninterrupted sweep does', async () => {
    const ref = setup();
    const refId = (await ref.sweeps.create(spec)).id;
    await ref.sweeps.start(refId);
    await ref.sweeps.wait(refId);
    const expected = untimed(ref.sweeps.get(refId));

    const first = setup({ delayMs: 5 });
    const { id } = await first.sweeps.create(spec);
    const paused = new Promise<void>((resolve) => {
      const off = first.sweeps.onProgress((p) => {
        if (p.id === id && p.progress.jobsDone >= 2 && p.progress.rowsDone > p.progress.jobsDone * 6) {
          off();
          void first.sweeps.pause(id).then(() => resolve());
        }
      });
    });
    await first.sweeps.start(id);
    await paused;
    const mid = first.sweeps.summary(id);
    expect(mid.status).toBe('paused');
    expect(mid.progress.jobsDone).toBeLessThan(8);
    first.store.close();

    // Another manager on the same database (a new process after a kill would see `interrupted`).
    const second = setup({ dataDir: first.dataDir });
    expect(second.sweeps.list().map((s) => s.id)).toEqual([id]);
    await second.sweeps.resume(id);
    expect((await second.sweeps.wait(id)).status).toBe('done');
    expect(untimed(second.sweeps.get(id))).toEqual(expected);
  });

  it("another machine's sweep (shared data folder) counts as running while its heartbeat is fresh, and only then refuses a resume", async () => {
    const { sweeps, store } = setup();
    const created = await sweeps.create(spec);
    const foreign = (updated: Date) =>
      store.db.prepare(`UPDATE experiments SET status = 'running', owner = 'another-host:4242', updated = ? WHERE id = ?`).run(updated.toISOString(), created.id);
    // Beating: running there, so a resume here is refused and changes nothing.
    foreign(new Date());
    expect(sweeps.summary(created.id).status).toBe('running');
    await expect(sweeps.start(created.id)).rejects.toThrow(`sweep ${created.id} is running in another process`);
    expect(store.db.prepare(`SELECT owner FROM experiments WHERE id = ?`).get(created.id)).toEqual({ owner: 'another-host:4242' });
    // Stopping it from here is refused as a job's stop is: one clear error, nothing changed.
    await expect(sweeps.pause(created.id)).rejects.toThrow(`sweep ${created.id} is running in another process`);
    await expect(sweeps.cancel(created.id)).rejects.toThrow(`sweep ${created.id} is running in another process`);
    expect(store.db.prepare(`SELECT status, owner FROM experiments WHERE id = ?`).get(created.id)).toEqual({ status: 'running', owner: 'another-host:4242' });
    // Silent for a minute: that machine's process is gone; the sweep is interrupted and resumable.
    foreign(new Date(Date.now() - 60_000));
    expect(sweeps.summary(created.id).status).toBe('interrupted');
    await sweeps.start(created.id);
    expect((await sweeps.wait(created.id)).status).toBe('done');
    await expect(sweeps.pause(created.id)).rejects.toThrow(`sweep ${created.id} is already done`);
  });

  it('a sweep no process runs is cancelled from here: it, its stopped job and its cells say so, and every page hears it', async () => {
    const { sweeps, jobs } = setup();
    const created = await sweeps.create(spec);
    const heard: string[] = [];
    const off = sweeps.onProgress((e) => void heard.push(`${e.id} ${e.status}`));
    // Queued, its first job made (a sweep makes it with the sweep): nothing runs it.
    expect(await sweeps.cancel(created.id)).toMatchObject({ status: 'cancelled' });
    off();
    expect(heard).toEqual([`${created.id} cancelled`]);
    const result = sweeps.get(created.id);
    expect(new Set(result.jobs.map((j) => j.status))).toEqual(new Set(['cancelled']));
    expect(jobs.get(result.jobs[0]!.jobId!).status).toBe('cancelled');
    // Cancelled is not done: a resume runs it.
    await sweeps.resume(created.id);
    expect((await sweeps.wait(created.id)).status).toBe('done');
  });

  it('bad input fails before anything runs, with one clear line', async () => {
    const { sweeps } = setup();
    await expect(sweeps.create({ ...spec, inputColumn: 'nope' })).rejects.toThrow(/has no column "nope"/);
    await expect(sweeps.create({ ...spec, grid: { ...spec.grid, r: [] } })).rejects.toThrow(/invalid sweep: Runs r: give at least one r value/);
    await expect(sweeps.create({ ...spec, grid: { ...spec.grid, k: [-1] } })).rejects.toThrow(/k values must be at least 0/);
    expect(sweeps.list()).toEqual([]);
  });
});
