// A raced sweep (docs/method.md §16, racing) on a real SQLite file and the real engine, with a
// scripted evaluator whose accuracy depends on the setting (exact semantics): right on 90 % of rows
// when its prompt holds four examples a label (k = 4), on 45 % with one (k = 1). The race drops the
// losing setting with all its seeds before the end, with the rows it ran and the reason; paused
// mid-race and resumed by another manager on the same file, it ends with the same decisions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Experiments } from '../../../electron/experiments';
import { JobManager, openJobStore, plainModelRef, type BackendProvider, type JobStore } from '../../../electron/jobs';
import type { SweepResult } from '../../../electron/common/contract/sweeps';
import { resolveTask } from '../../../electron/tasks';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { gold, runUntilRows, unitHash, writeRaceRows } from '../../helpers/race-rows';

const dir = mkdtempSync(join(tmpdir(), 'tatra-race-sweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const ROWS = 200;
const data = writeRaceRows(dir, ROWS);
const hash = unitHash;

function open(dataDir: string) {
  const store = openJobStore(dataDir);
  stores.push(store);
  const answer = (candidate: string, req: { prompt: { system: string; user: string } }) => {
    const i = Number(/item (\d+)/.exec(candidate)?.[1]);
    const examples = (`${req.prompt.system}\n${req.prompt.user}`.match(/positive/g) ?? []).length;
    const accuracy = examples >= 4 ? 0.9 : 0.45;
    const g = gold(i);
    return hash(`${examples >= 4}|${i}`) < accuracy ? g : g === 'positive' ? 'negative' : 'positive';
  };
  const backend = new ScriptedBackend(politeScript({ answer }), { id: 'scripted:model', deterministic: true });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  const jobs = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  return { jobs, sweeps: new Experiments({ jobs, store, pool: provider, resolveTask: (id) => resolveTask(id) }).of('sweep') };
}

const input = { taskId: 'sst2', dataPath: data, inputColumn: 'text', goldColumn: 'label', generator: 'model.gguf', evaluator: 'model.gguf', grid: { n: [0], k: [1, 4], r: [1], seeds: [1, 2] }, concurrency: 4, race: true };

const decisions = (r: SweepResult) => r.jobs.map((j) => ({ k: j.k, seed: j.seed, status: j.status, rowsDone: j.rowsDone, dropped: j.dropped }));

describe('a raced sweep', () => {
  it('drops the losing setting, every seed of it, before the end; paused mid-race and resumed elsewhere, it decides the same', async () => {
    const whole = open(join(dir, 'whole'));
    const created = await whole.sweeps.create(input);
    await whole.sweeps.start(created.id);
    expect((await whole.sweeps.wait(created.id)).status).toBe('done');
    const result = whole.sweeps.get(created.id);
    const byK = (k: number) => result.jobs.filter((j) => j.k === k);
    for (const j of byK(1)) {
      expect(j.status).toBe('dropped');
      expect(j.rowsDone).toBeLessThan(ROWS);
      expect(j.dropped!.reason).toMatch(/^worse than .*k=4.* at 95 % after \d+ rows$/);
    }
    for (const j of byK(4)) expect([j.status, j.rowsDone, j.dropped]).toEqual(['done', ROWS, null]);
    expect(result.race).toMatchObject({ dropped: 1, alive: 1 });

    const dataDir = join(dir, 'resumed');
    const first = open(dataDir);
    const again = await first.sweeps.create(input);
    await runUntilRows(first.jobs, first.sweeps, again.id, 30);
    expect(first.sweeps.get(again.id).status).toBe('paused');
    const second = open(dataDir);
    await second.sweeps.start(again.id);
    expect((await second.sweeps.wait(again.id)).status).toBe('done');
    // The same decisions as the race never paused (its race order is its own id's: compared by what was decided).
    const resumed = decisions(second.sweeps.get(again.id));
    expect(resumed.map((j) => [j.k, j.status])).toEqual(decisions(result).map((j) => [j.k, j.status]));
  });
});
