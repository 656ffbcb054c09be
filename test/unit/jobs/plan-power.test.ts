// The plan's power line (docs/method.md §16): the difference a plan's rows detect and the rows a
// difference needs, from the stated assumption with no job on the file, worked by hand.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Command } from 'commander';
import { addPlanOptions } from '../../../electron/cli/plan';
import { powerText, withTarget } from '../../../electron/common/plan';
import { openJobStore } from '../../../electron/jobs';
import { planPower } from '../../../electron/jobs/plan-power';
import { runScriptedJob } from '../../helpers/scripted-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-power-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('says what 200 rows tell apart, and what 5 points need, at the assumed 20 % disagreement', () => {
  const store = openJobStore(join(dir, 'empty'));
  try {
    const power = planPower(store, join(dir, 'data.csv'), 200);
    expect(power).toMatchObject({ rows: 200, disagreement: 0.2 });
    // Connor: (1.96·√0.2 + 0.84·√(0.2 − δ²))²/δ² = 200 at δ ≈ 0.088; 5 points need 626 rows.
    expect(power.detectable).toBeCloseTo(0.088, 3);
    expect(powerText(withTarget(power, 0.05))).toMatch(/^with 200 rows, differences under about 8\.8 points will not be told apart; 5\.0 points need 626 rows \(80 % power at 95 %; disagreement 20\.0 %, assumed/);
  } finally {
    store.close();
  }
});

it('plans from the accuracy of a job on the same file, errors taken as independent', async () => {
  const store = openJobStore(join(dir, 'one'));
  try {
    const { id, manager } = await runScriptedJob(store, { rows: 30, dir });
    const job = manager.get(id);
    const p = job.rowsCorrect / job.rowsWithGold;
    const power = planPower(store, job.dataset.path, 30);
    expect(power.disagreement).toBeCloseTo(2 * p * (1 - p), 12);
    expect(power.basis).toContain(`job ${id}`);
  } finally {
    store.close();
  }
});

it('plans from the disagreement measured between the two latest jobs on the same file', async () => {
  const store = openJobStore(join(dir, 'two'));
  try {
    const first = await runScriptedJob(store, { rows: 40, dir });
    const second = await runScriptedJob(store, { rows: 40, dir, settings: { n: 2, k: 2, r: 1, seed: 11, scope: 'run' } });
    const right = (id: string) => new Map([...store.iterateRows(id)].map((r) => [r.index, r.correct]));
    const a = right(first.id);
    const b = right(second.id);
    let differ = 0;
    for (const [i, x] of a) if (x !== b.get(i)) differ += 1;
    expect(differ).toBeGreaterThan(0);
    const power = planPower(store, first.manager.get(first.id).dataset.path, 40);
    expect(power.disagreement).toBeCloseTo(differ / 40, 12);
    expect(power.basis).toMatch(/^measured between jobs /);
    expect(power.basis).toContain(first.id);
    expect(power.basis).toContain(second.id);
    expect(power.basis).toContain('40 rows both scored');
  } finally {
    store.close();
  }
});

it('refuses a --detect that is no difference in points, in one line', () => {
  const cmd = addPlanOptions(new Command().exitOverride().configureOutput({ writeErr: () => undefined }));
  expect(() => cmd.parse(['--detect', '0'], { from: 'user' })).toThrow(/--detect must be a difference in points between 0 and 100/);
  expect(() => cmd.parse(['--detect', 'five'], { from: 'user' })).toThrow(/--detect must be/);
  expect(cmd.parse(['--detect', '5'], { from: 'user' }).opts().detect).toBe(5);
});
