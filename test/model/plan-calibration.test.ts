// --calibrate on real inference (the tiny synthetic model): it measures a call's cost with the
// evaluator's prefix warm and the calls served at once (jobs/plan-time.ts), keeps them, and a later
// plan on other settings uses them; the plan's calls and counted prompts are the same with or
// without a calibration (they never depend on speed), its paraphrases as long as the calibration's
// were against their inputs.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServices } from '../../electron/api/services';
import { countMax } from '../../electron/common/plan';
import { tinyModelPath } from '../helpers/models';
import { parseModelSpec, type ModelSpec } from '../../electron/common/model-spec';

const dir = mkdtempSync(join(tmpdir(), 'tatra-plan-cal-'));
const services = openServices({ dataDir: join(dir, 'data'), threads: 2, keepAliveMs: 0 });
afterAll(async () => {
  await services.dispose();
  rmSync(dir, { recursive: true, force: true });
});

let model: ModelSpec;
const data = join(dir, 'reviews.jsonl');
beforeAll(async () => {
  model = parseModelSpec(await tinyModelPath());
  const texts = ['a warm, funny film', 'dull and slow', 'superb acting', 'makes no sense', 'a delight', 'a tedious mess', 'fine', 'bad'];
  writeFileSync(data, texts.map((t) => JSON.stringify({ input: t })).join('\n'));
});

describe('a calibrated plan', () => {
  it('keeps a call’s cost, the slots and its paraphrases’ length, and plans other settings from them with the same calls and counted prompts', async () => {
    const task = await services.tasks.resolve('sst2');
    const base = { task, generator: model, evaluator: model, data: { path: data, textColumn: 'input' }, concurrency: 2 };
    const other = { n: 3, k: 4, r: 3, seed: 1, scope: 'run' as const };
    const uncalibrated = await services.planner().eval({ ...base, settings: other });
    expect(uncalibrated.seconds).toBeNull();

    await services.planner().eval({ ...base, settings: { n: 1, k: 2, r: 2, seed: 1, scope: 'run' }, calibrate: { pool: services.pool } });
    const stored = Object.values(
      JSON.parse(readFileSync(join(dir, 'data', 'calibration.json'), 'utf8')) as Record<string, { perCall: number; perToken: number; slots: number; perGeneratorCall?: number; paraphraseRatio: number; loaded?: { perCall: number; perGeneratorCall: number; perToken: number } }>,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.perCall + stored[0]!.perToken).toBeGreaterThan(0);
    // Between one slot and the calls of the full-load run's rows in flight (2 rows in flight × r =
    // 2: 4 runs of a paraphrase call and 2 evaluations).
    expect(stored[0]!.slots).toBeGreaterThanOrEqual(1);
    expect(stored[0]!.slots).toBeLessThanOrEqual(4 * 2);

    const planned = await services.planner().eval({ ...base, settings: other });
    // The costs at full load, from the full-load runs with 1, 2 and no paraphrase lines (a run
    // takes time, so some cost is above zero), where its 4 runs in flight filled the slots fitted.
    const { loaded, slots } = stored[0]!;
    if (slots <= 4) expect(loaded!.perCall + loaded!.perGeneratorCall + loaded!.perToken).toBeGreaterThan(0);
    else expect(loaded).toBeUndefined();
    // Alone, a generator call's fixed cost measured apart (two paraphrase calls of 1 and 2 lines),
    // unless the longer took no longer (then one cost a call, as before).
    const aloneBasis = `a calibration on .*: alone ${stored[0]!.perGeneratorCall !== undefined ? '.*ms an evaluation, .*ms a generator call' : '.*ms a call'} \\+ .*ms a generated token`;
    expect(planned.basis).toMatch(new RegExp(`${aloneBasis}${loaded ? '; at full load .*ms an evaluation, .*ms a generator call \\+ .*ms a generated token$' : ', .* calls at once$'}`));
    expect(countMax(planned.seconds!)).toBeGreaterThan(0);
    // The same calls, and the same counted prompts (the examples', the paraphrase calls').
    expect(planned.calls).toEqual(uncalibrated.calls);
    expect(planned.stages.examples).toEqual(uncalibrated.stages.examples);
    expect(planned.stages.paraphrases.prompt).toEqual(uncalibrated.stages.paraphrases.prompt);
    // The paraphrases' length as the calibration's were against their inputs (a line of t input
    // tokens: round(ratio × t) tokens, where the guess was t; n lines and n − 1 breaks a call).
    const ratio = stored[0]!.paraphraseRatio;
    expect(ratio).toBeGreaterThan(0);
    expect(planned.tokensBasis).toContain(`a paraphrase line ${ratio.toFixed(2)}× its input's tokens (the calibration's)`);
    const calls = countMax(planned.stages.paraphrases.calls);
    const guessedLines = countMax(uncalibrated.stages.paraphrases.completion) + calls - other.n * calls;
    const expected = ratio * guessedLines + (other.n - 1) * calls;
    expect(Math.abs(countMax(planned.stages.paraphrases.completion) - expected)).toBeLessThanOrEqual((other.n * calls) / 2);

    // A calibration holds for the rows in flight it was made with: with another count there is none.
    const alone = await services.planner().eval({ ...base, settings: other, concurrency: 1 });
    expect(alone.seconds).toBeNull();
  });
});

describe('a plan from the last job on the same models', () => {
  it('rests on a call’s cost fitted to that job, as a calibration’s does', async () => {
    const task = await services.tasks.resolve('sst2');
    const settings = { n: 2, k: 2, r: 2, seed: 5, scope: 'run' as const };
    const jobs = services.jobs();
    const job = await jobs.create({ task: 'sst2', settings, generatorPath: model.text, evaluatorPath: model.text, dataset: { path: data, mapping: { textColumn: 'input', labelColumn: null } }, concurrency: 2 });
    await jobs.start(job.id);
    await jobs.wait(job.id);
    const ran = jobs.get(job.id);
    expect(ran.status).toBe('done');
    const planned = await services.planner().eval({ task, generator: model, evaluator: model, data: { path: data, textColumn: 'input' }, concurrency: 2, settings: { ...settings, seed: 6 } });
    expect(planned.basis).toMatch(new RegExp(`job ${job.id} .*ms a call.*one after another at its pace`));
    expect(countMax(planned.seconds!)).toBeGreaterThan(0);
  });
});
