// A comparison's plan refuses what creating the comparison refuses (experiments/compare.ts, its plan): a
// data set whose text column cannot be told is one line asking for it, as create says it, where
// the plan used to guess a column named "input" and fail elsewhere or plan on nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices } from '../../../electron/api/services';
import { DEFAULT_SETTINGS, type TatraSettings } from '../../../electron/common/tatra';
import { comparisonSpec } from '../../../electron/experiments';
import { assumedLengths, planCellSeconds, planCompare, type PlanInputs } from '../../../electron/jobs/plan';
import { resolveTask } from '../../../electron/tasks';
import { tinyModelPath } from '../../helpers/models';
import { charCountedModel as planned } from '../../helpers/planned-model';

const dir = mkdtempSync(join(tmpdir(), 'tatra-compare-plan-'));
const services = openServices({ dataDir: join(dir, 'data') });
afterAll(async () => {
  await services.dispose();
  rmSync(dir, { recursive: true, force: true });
});

// Checked from its header only: nothing is loaded.
let model: string;
beforeAll(async () => {
  model = await tinyModelPath();
});

async function refusals(rows: object[], textColumn?: string): Promise<[string, string]> {
  const dataset = join(dir, `rows-${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join('\n'));
  const spec = { taskId: 'sst2', dataPath: dataset, generators: [model], evaluators: [model], settings: DEFAULT_SETTINGS, ...(textColumn ? { inputColumn: textColumn } : {}) };
  const plan = services.experiments().plan('compare', spec, services.planner()).then(() => 'planned', (e: Error) => e.message);
  const create = services.experiments().of('compare').create(spec).then(() => 'created', (e: Error) => e.message);
  return [await plan, await create];
}

describe("a comparison's plan", () => {
  it('refuses a data set with no text column to guess, in the words creating it uses', async () => {
    const [plan, create] = await refusals([{}, {}]);
    expect(plan).toMatch(/which column of .* holds the text\?/);
    expect(plan).toBe(create);
  });

  it('refuses a named text column the data set lacks, as creating it does', async () => {
    const [plan, create] = await refusals([{ sentence: 'fine', label: 1 }], 'input');
    expect(plan).toMatch(/has no column "input"/);
    expect(plan).toBe(create);
  });
});

describe('rows in flight a local model cannot run', () => {
  it('are refused in one line by the plan and the start of a comparison and of a sweep, as a job refuses them; nothing is created', async () => {
    const dataset = join(dir, 'in-flight.jsonl');
    writeFileSync(dataset, '{"sentence":"fine","label":1}\n');
    const remote = 'openai+http://127.0.0.1:9/v1#m';
    const comparison = (concurrency: number, evaluator = model) => ({ taskId: 'sst2', dataPath: dataset, generators: [remote], evaluators: [evaluator], settings: DEFAULT_SETTINGS, concurrency });
    const sweep = (concurrency: number) => ({ taskId: 'sst2', dataPath: dataset, inputColumn: 'sentence', generator: remote, evaluator: model, grid: { n: [1], k: [2], r: [1], seeds: [1] }, concurrency });
    const local = 'concurrency must be between 1 and 64 with a local model (its parallel sequences), got 65';
    const experiments = services.experiments();
    const said = (p: Promise<unknown>) => p.then(() => 'accepted', (e: Error) => e.message);
    expect(await said(experiments.plan('compare', comparison(65), services.planner()))).toBe(local);
    expect(await said(experiments.of('compare').create(comparison(65)))).toBe(local);
    expect(await said(experiments.plan('sweep', sweep(65), services.planner()))).toBe(local);
    expect(await said(experiments.of('sweep').create(sweep(65)))).toBe(local);
    expect(experiments.of('compare').list()).toEqual([]);
    expect(experiments.of('sweep').list()).toEqual([]);
    // Both models remote: a server's batch, far beyond a local model's sequences.
    expect(comparisonSpec(comparison(500, remote)).concurrency).toBe(500);
  });
});

describe("a comparison's plan prices each pair at its own models' speed", () => {
  const rows = ['a good film', 'a dull film that goes on', 'fine acting', 'weak plot and worse jokes'];

  it('a slow pair costs its own time, not the first pair’s: the plan is the pairs’ own prices added up', async () => {
    const task = await resolveTask('sst2');
    const settings: TatraSettings = { ...DEFAULT_SETTINGS, n: 2, k: 2, r: 2 };
    const pairOf = (g: string, e: string, tokensPerSecond: number): PlanInputs => {
      const evaluator = planned(e);
      return { task, generator: planned(g), evaluator, lengths: assumedLengths(task, evaluator), throughput: { tokensPerSecond, basis: `${g} → ${e} at ${tokensPerSecond} tokens/s` }, inFlight: 2 };
    };
    // The first pair is fast, the second ten times slower on the same generator (its texts come from the first's).
    const fast = pairOf('g', 'fast', 1000);
    const slow = pairOf('g', 'slow', 100);
    const plan = await planCompare({ settings, pairs: [fast, slow], inputs: rows });
    const cells = await planCellSeconds([fast, slow].map((inputs) => ({ inputs, settings, rows, examplesMade: [], shareEvaluations: false })));
    const own = cells.reduce((a, c) => a + c!.max, 0);
    const seconds = typeof plan.seconds === 'number' ? plan.seconds : plan.seconds!.max;
    expect(seconds).toBe(Math.round(own));
    // At the first pair's speed the whole comparison would have come out near a tenth of that.
    const tokens = (c: number | { min: number; max: number }) => (typeof c === 'number' ? c : c.max);
    expect(seconds).toBeGreaterThan(3 * ((tokens(plan.tokens.prompt) + tokens(plan.tokens.completion)) / 1000));
    expect(plan.basis).toContain('g → slow at 100 tokens/s');
    // A pair nothing measured leaves the time unknown, and the plan names it.
    const unmeasured = await planCompare({ settings, pairs: [fast, { ...slow, throughput: null }], inputs: rows });
    expect(unmeasured.seconds).toBeNull();
    expect(unmeasured.basis).toContain('nothing measured yet on g.gguf → slow.gguf');
  });
});
