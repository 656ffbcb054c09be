// A raced comparison (docs/method.md §16, racing) on a real SQLite file and the real engine, with
// scripted evaluators of known accuracy (exact semantics): its pairs run the same rows in rounds in
// the seeded race order, the pairs shown worse than the best drop after the round that showed it
// (status dropped, the rows they ran, the reason), the best runs every row, and the decisions are
// the race's own (common/stats/race.ts replayRace on the outcomes the script decides). Paused
// mid-race and resumed by another manager on the same file, it ends with the same decisions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { replayRace, roundRows } from '../../../electron/common/stats';
import type { ComparisonResult } from '../../../electron/common/contract/comparisons';
import { Experiments } from '../../../electron/experiments';
import { raceOrder } from '../../../electron/experiments/race';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';
import { resolveTask } from '../../../electron/tasks';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { gold, runUntilRows, unitHash, writeRaceRows } from '../../helpers/race-rows';
import { tatraCli } from '../../helpers/tatra-cli';
import { listedStatus } from '../../../electron/common/contract/jobs';
import { jobSummary } from '../../../electron/jobs/summary';

const dir = mkdtempSync(join(tmpdir(), 'tatra-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const ROWS = 200;
const data = writeRaceRows(dir, ROWS);

/** Evaluators of known accuracy: right on a row when its hash falls under the accuracy. */
const ACCURACY: Record<string, number> = { best: 0.9, good: 0.85, poor: 0.5, worst: 0.35 };
const hash = unitHash;
const right = (evaluator: string, i: number) => hash(`${evaluator}|${i}`) < ACCURACY[evaluator]!;
const spec = (name: string) => `openai+http://127.0.0.1:9/v1#${name}`;
const evaluators = Object.keys(ACCURACY);
/** A model as a pair's name says it. */
const label = (name: string) => `${name} @ 127.0.0.1:9`;

/** Loads by model, counted as a pool counts them: an acquire while nobody holds the model loads it. */
type Loads = Map<string, number>;

function open(dataDir: string, loads: Loads = new Map()) {
  const store = openJobStore(dataDir);
  const holders = new Map<string, number>();
  stores.push(store);
  const backends = new Map(
    [...evaluators, 'gen'].map((name) => {
      const answer = (candidate: string) => {
        const i = Number(/item (\d+)/.exec(candidate)?.[1]);
        const g = gold(i);
        return right(name, i) ? g : g === 'positive' ? 'negative' : 'positive';
      };
      return [spec(name), new ScriptedBackend(politeScript({ answer }), { id: `scripted:${name}`, deterministic: true })];
    }),
  );
  const provider: BackendProvider = {
    acquire: async (model) => {
      const held = holders.get(model.text) ?? 0;
      if (held === 0) loads.set(model.text, (loads.get(model.text) ?? 0) + 1);
      holders.set(model.text, held + 1);
      let released = false;
      const release = async () => {
        if (!released) holders.set(model.text, holders.get(model.text)! - 1);
        released = true;
      };
      return { backend: backends.get(model.text)!, release };
    },
    describeRemote: async (s) => ({ urls: ['http://127.0.0.1:9/v1'], model: s.name, kind: 'llama-server', version: 'scripted', constrained: 'gbnf' }),
  };
  const jobs = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  return { store, jobs, comparisons: new Experiments({ jobs, store, pool: provider, resolveTask: (ref) => resolveTask(ref) }).of('compare') };
}

const input = {
  taskId: 'sst2',
  dataPath: data,
  generators: [spec('gen')],
  evaluators: evaluators.map(spec),
  settings: { n: 0, k: 1, r: 1, seed: 3, scope: 'run' as const },
  inputColumn: 'text',
  goldColumn: 'label',
  concurrency: 4,
  race: true,
};

/** What the race must decide: replayRace on the script's outcomes in the comparison's race order. */
function expectedDrops(id: string) {
  const order = raceOrder(id, ROWS);
  const entrants = evaluators.map((e) => ({ key: e, rowsRun: ROWS, outcomes: order.map((i) => (right(e, i) ? 1 : 0)) }));
  return replayRace(entrants, ROWS, { roundRows: roundRows(ROWS) }).standings;
}

const decisions = (r: ComparisonResult) => r.pairs.map((p) => ({ evaluator: p.evaluator.split('#')[1], status: p.status, rowsDone: p.rowsDone, dropped: p.dropped }));

describe('a raced comparison', () => {
  it('drops the pairs shown worse than the best after the round that showed it, and runs the best on every row', async () => {
    const { comparisons } = open(join(dir, 'one'));
    const created = await comparisons.create(input);
    await comparisons.start(created.id);
    expect((await comparisons.wait(created.id)).status).toBe('done');
    const result = comparisons.get(created.id);
    const expected = expectedDrops(created.id);
    for (const [i, pair] of result.pairs.entries()) {
      const want = expected.find((s) => s.key === evaluators[i])!;
      if (want.dropped) {
        expect(pair.status).toBe('dropped');
        // It ran the rounds up to its drop, and no row more.
        expect(pair.rowsDone).toBe(want.dropped.afterRows);
        expect(pair.dropped).toEqual({
          afterRows: want.dropped.afterRows,
          by: `${label('gen')} → ${label(want.dropped.by)}`,
          difference: want.dropped.difference,
          reason: `worse than ${label('gen')} → ${label(want.dropped.by)} at 95 % after ${want.dropped.afterRows} rows`,
        });
      } else {
        expect(pair.status).toBe('done');
        expect(pair.rowsDone).toBe(ROWS);
        expect(pair.dropped).toBeNull();
      }
    }
    // The known best stays; the two far behind are dropped well before the end.
    expect(expected.find((s) => s.key === 'best')!.dropped).toBeNull();
    for (const e of ['poor', 'worst']) expect(expected.find((s) => s.key === e)!.dropped!.afterRows).toBeLessThan(ROWS / 2);
    expect(result.race).toMatchObject({ roundRows: 20, alive: expected.filter((s) => !s.dropped).length, dropped: expected.filter((s) => s.dropped).length });
    // Their rows are the race order's first rows, the same for every pair.
    const order = raceOrder(created.id, ROWS);
    const dropped = result.pairs.find((p) => p.status === 'dropped')!;
    const store = openJobStore(join(dir, 'one'));
    stores.push(store);
    const ran = [...store.iterateRows(dropped.jobId!)].filter((r) => r.status === 'done').map((r) => r.index);
    expect(ran.sort((a, b) => a - b)).toEqual(order.slice(0, dropped.rowsDone).sort((a, b) => a - b));
    // A dropped pair's job says it was dropped by the race, not that it waits to be resumed: in the
    // contract's job (jobs.get, jobs list --json), the lists' status and the real CLI's jobs list.
    for (const p of result.pairs) {
      const job = jobSummary(store.getJob(p.jobId!)!, null);
      // A pair dropped after the last round ran every row: its job is done.
      const cut = p.status === 'dropped' && p.rowsDone < ROWS;
      expect([job.status, job.stoppedBy, listedStatus(job)]).toEqual(cut ? ['paused', 'race', 'dropped'] : ['done', null, 'done']);
    }
    expect(result.pairs.filter((p) => p.status === 'dropped' && p.rowsDone < ROWS).length).toBeGreaterThan(1);
    const { stdout } = await tatraCli(['jobs', 'list', '--data-dir', join(dir, 'one')]);
    for (const p of result.pairs) expect(stdout).toMatch(new RegExp(`${p.jobId}\\s+${p.rowsDone < ROWS ? 'dropped' : 'done'}\\s`));
    expect(JSON.parse((await tatraCli(['jobs', 'show', dropped.jobId!, '--data-dir', join(dir, 'one'), '--json'])).stdout).job).toMatchObject({ status: 'paused', stoppedBy: 'race' });
  });

  it('loads each model once for the whole race: the runner holds the models of the pairs still in across rounds', async () => {
    const loads: Loads = new Map();
    const { comparisons } = open(join(dir, 'loads'), loads);
    const created = await comparisons.create(input);
    await comparisons.start(created.id);
    expect((await comparisons.wait(created.id)).status).toBe('done');
    const result = comparisons.get(created.id);
    expect(result.race!.rounds).toBeGreaterThan(2);
    // Every evaluator ran several rounds (the best all ten), each loaded once; the generator too.
    expect(result.pairs.find((p) => p.evaluator === spec('best'))!.rowsDone).toBe(ROWS);
    expect(Object.fromEntries(loads)).toEqual(Object.fromEntries([...evaluators, 'gen'].map((name) => [spec(name), 1])));
  });

  it('paused mid-race and resumed by another manager, it ends with the same decisions', async () => {
    const dataDir = join(dir, 'two');
    const first = open(dataDir);
    const created = await first.comparisons.create(input);
    // Paused inside the second round of its second pair.
    await runUntilRows(first.jobs, first.comparisons, created.id, 20 + 20 + 20 + 20 + 25);
    expect(first.comparisons.get(created.id).status).toBe('paused');
    const second = open(dataDir);
    await second.comparisons.start(created.id);
    expect((await second.comparisons.wait(created.id)).status).toBe('done');
    const resumed = decisions(second.comparisons.get(created.id));
    const expected = expectedDrops(created.id);
    expect(resumed.map((p) => (p.status === 'dropped' ? p.dropped!.afterRows : null))).toEqual(evaluators.map((e) => expected.find((s) => s.key === e)!.dropped?.afterRows ?? null));
    expect(resumed.filter((p) => p.status === 'done').map((p) => p.rowsDone)).toEqual(resumed.filter((p) => p.status === 'done').map(() => ROWS));
  });
});
