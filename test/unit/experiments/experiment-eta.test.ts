// An experiment's time left: its running job's own, plus the planner's price of each cell still to
// run, scaled by the running job's pace against its own price (experiments/experiment-eta.ts). A
// sweep's cells differ in n and k, so they differ in work: taking every job as long as the running
// one (the rule before) was off by the ratio of their work.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatPrompt } from '../../../electron/engine/backend';
import type { ExperimentProgressEvent } from '../../../electron/common/contract/experiments';
import type { TatraSettings } from '../../../electron/common/tatra';
import { Experiments } from '../../../electron/experiments';
import { experimentEta } from '../../../electron/experiments/experiment-eta';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type Planner } from '../../../electron/jobs';
import { assumedLengths, planCellSeconds, planSweep, type PlanInputs, type PlanModelInfo } from '../../../electron/jobs/plan';
import { resolveTask } from '../../../electron/tasks';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';

const dir = mkdtempSync(join(tmpdir(), 'tatra-eta-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('experimentEta', () => {
  it('adds each cell after the running job at its price, scaled by the running job’s pace against its own price', () => {
    // The running job (n = 0, k = 1: no paraphrase) was priced 100 s; it has run 30 s and has 20 s
    // left, so it takes half its price. The cells after it make paraphrases: priced 200 s and 400 s.
    const eta = experimentEta({ job: { etaSeconds: 20, etaRange: { min: 20, max: 20 }, elapsedSeconds: 30, planned: { min: 100, max: 100 }, leftShare: 0.4 }, after: [{ min: 200, max: 200 }, { min: 400, max: 400 }] });
    expect(eta).toEqual({ etaSeconds: 20 + 0.5 * 600, etaRange: { min: 320, max: 320 }, pace: { min: 0.5, max: 0.5 } });
    // Every job as long as the running one in all (the rule before) said 20 + 2 × 50 = 120.
    expect(eta.etaSeconds).not.toBe(120);
  });

  it('is a range where the job’s rate or a price is one', () => {
    // The job's total is 40..80 s against a price of 40 s: a pace of 1..2.
    const eta = experimentEta({ job: { etaSeconds: null, etaRange: { min: 10, max: 50 }, elapsedSeconds: 30, planned: { min: 40, max: 40 }, leftShare: 0.5 }, after: [{ min: 100, max: 300 }] });
    expect(eta).toEqual({ etaSeconds: null, etaRange: { min: 10 + 100, max: 50 + 2 * 300 }, pace: { min: 1, max: 2 } });
  });

  it('before the job’s rate is known, says its price for the rows it has left at the last pace seen', () => {
    const eta = experimentEta({ job: { etaSeconds: null, etaRange: null, elapsedSeconds: 2, planned: { min: 100, max: 100 }, leftShare: 0.5 }, after: [{ min: 60, max: 60 }], pace: { min: 2, max: 2 } });
    expect(eta).toEqual({ etaSeconds: 2 * (50 + 60), etaRange: { min: 220, max: 220 }, pace: { min: 2, max: 2 } });
  });

  it('a cell the planner could not price counts as long as the running job in all; with neither, nothing is said', () => {
    const eta = experimentEta({ job: { etaSeconds: 30, etaRange: { min: 30, max: 30 }, elapsedSeconds: 30, planned: null, leftShare: 1 }, after: [null, null] });
    expect(eta.etaSeconds).toBe(30 + 2 * 60);
    expect(experimentEta({ job: { etaSeconds: null, etaRange: null, elapsedSeconds: 5, planned: null, leftShare: 1 }, after: [null] })).toEqual({ etaSeconds: null, etaRange: null, pace: null });
  });

  it('between jobs: the cells left at their prices', () => {
    expect(experimentEta({ job: null, after: [{ min: 10, max: 10 }, { min: 5, max: 5 }] }).etaSeconds).toBe(15);
    expect(experimentEta({ job: null, after: [{ min: 10, max: 10 }, null] })).toEqual({ etaSeconds: null, etaRange: null, pace: null });
  });
});

describe("a sweep's cells priced by the planner", () => {
  /** A model whose prompts count a token per 4 characters. */
  const model: PlanModelInfo = {
    id: 'm',
    spec: 'm.gguf',
    remote: false,
    price: null,
    contextSize: 4096,
    counter: { count: (p: ChatPrompt) => Promise.resolve(Math.ceil((p.system.length + p.user.length) / 4)), countText: (t: string) => Math.ceil(t.length / 4), exact: false },
  };
  const inputs = ['a good film', 'a dull film that goes on', 'fine acting', 'weak plot and worse jokes'];

  it('each cell is its own share of the sweep plan’s ledger: the n = 4 cells cost more, and all of them add up to the plan', async () => {
    const task = await resolveTask('sst2');
    const base: PlanInputs = { task, generator: model, evaluator: model, lengths: assumedLengths(task, model), throughput: { tokensPerSecond: 100, basis: 'test' }, inFlight: 2 };
    const grid = { n: [0, 4], k: [1, 4], r: [2], seeds: [1] };
    const settings = (n: number, k: number): TatraSettings => ({ n, k, r: 2, seed: 1, scope: 'run' });
    const order = [settings(0, 1), settings(4, 1), settings(0, 4), settings(4, 4)];
    const cells = await planCellSeconds(order.map((s) => ({ inputs: base, settings: s, rows: inputs, examplesMade: [], shareEvaluations: true })));
    const seconds = cells.map((c) => c!.max);
    // n = 4 makes paraphrases and evaluates them; k = 4 evaluates with longer prompts.
    expect(seconds[1]).toBeGreaterThan(2 * seconds[0]!);
    expect(seconds[3]).toBeGreaterThan(seconds[2]!);
    const plan = await planSweep({ ...base, grid, inputs });
    const tokens = (c: number | { min: number; max: number }) => (typeof c === 'number' ? c : c.max);
    expect(seconds.reduce((a, b) => a + b, 0)).toBeCloseTo((tokens(plan.tokens.prompt) + tokens(plan.tokens.completion)) / 100, 6);
  });
});

describe("a running sweep's time left", () => {
  it('is the planner’s price of the cells still to run, priced when it starts and again once a job measured what was not', async () => {
    const data = join(dir, 'rows.csv');
    writeFileSync(data, 'text,label\n' + ['a good film', 'a dull film', 'fine acting', 'weak plot'].map((t, i) => `"${t}",${i % 2 === 0 ? 'positive' : 'negative'}`).join('\n') + '\n');
    const store = openJobStore(join(dir, 'data'));
    const backend = new ScriptedBackend(politeScript({ answer: () => 'positive' }), { id: 'scripted:model', deterministic: true });
    const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
    const jobs = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
    // The planner's price of a cell: n and k make its work. The first cell is not priced (nothing
    // measured its models yet); the last is a range (early stopping's fewest and most runs).
    const priced: { n: number; k: number; rowsDone: number }[][] = [];
    const planner = {
      cellSeconds: (p: { cells: readonly { settings: TatraSettings; rowsDone: number }[] }) => {
        priced.push(p.cells.map((c) => ({ n: c.settings.n, k: c.settings.k, rowsDone: c.rowsDone })));
        return Promise.resolve(p.cells.map((c) => ({ seconds: c.settings.n === 0 && c.settings.k === 1 ? null : c.settings.n === 4 && c.settings.k === 4 ? { min: 300, max: 900 } : { min: 10 * (1 + c.settings.n) * c.settings.k, max: 10 * (1 + c.settings.n) * c.settings.k }, rows: 4 - c.rowsDone })));
      },
    } as unknown as Planner;
    const sweeps = new Experiments({ jobs, store, pool: provider, planner: () => planner, resolveTask: (id) => resolveTask(id) }).of('sweep');
    const created = await sweeps.create({ taskId: 'sst2', dataPath: data, inputColumn: 'text', goldColumn: 'label', generator: 'model.gguf', evaluator: 'model.gguf', grid: { n: [0, 4], k: [1, 4], r: [2], seeds: [1] }, concurrency: 2 });
    const events: ExperimentProgressEvent[] = [];
    const off = sweeps.onProgress((e) => events.push(e));
    await sweeps.start(created.id);
    expect((await sweeps.wait(created.id)).status).toBe('done');
    off();
    store.close();
    // Once the first job (no price, so no pace measured against one) has ended: the three cells left
    // at their prices, 50 + 40 + 300..900 s. The rule before said three times the first job's time.
    const afterFirst = events.find((e) => e.progress.jobsDone === 1)!;
    expect(afterFirst.progress.etaSeconds).toBeNull();
    expect(afterFirst.progress.etaRange).toEqual({ min: 50 + 40 + 300, max: 50 + 40 + 900 });
    // Priced when it started (every cell, in run order), then again after the first job: that cell had no price.
    expect(priced[0]).toEqual([
      { n: 0, k: 1, rowsDone: 0 },
      { n: 4, k: 1, rowsDone: 0 },
      { n: 0, k: 4, rowsDone: 0 },
      { n: 4, k: 4, rowsDone: 0 },
    ]);
    expect(priced[1]).toEqual([
      { n: 4, k: 1, rowsDone: 0 },
      { n: 0, k: 4, rowsDone: 0 },
      { n: 4, k: 4, rowsDone: 0 },
    ]);
    // Done: nothing left.
    expect(events.at(-1)!.progress).toMatchObject({ jobsDone: 4, etaSeconds: 0 });
  });
});
