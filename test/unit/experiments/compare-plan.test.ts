// A comparison's plan refuses what creating the comparison refuses (experiments/compare.ts, its plan): a
// data set whose text column cannot be told is one line asking for it, as create says it, where
// the plan used to guess a column named "input" and fail elsewhere or plan on nothing.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices } from '../../../electron/api/services';
import { DEFAULT_SETTINGS } from '../../../electron/common/tatra';
import { tinyModelPath } from '../../helpers/models';

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
