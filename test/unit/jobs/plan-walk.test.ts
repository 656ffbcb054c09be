// How a plan walks a job's rows (jobs/plan.ts addJob, engine/cost.ts planInput): it gives the
// event loop turns while it walks (a server planning a large file answered nothing else until it
// was done), stops at the next turn once nobody waits for it (its signal aborted), and one walk
// counts both the fewest runs early stopping could make and all of them.
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, type TatraSettings } from '../../../electron/common/tatra';
import { fewestRuns } from '../../../electron/engine/cost';
import { assumedLengths, planJob, type PlanInputs } from '../../../electron/jobs/plan';
import { resolveTask } from '../../../electron/tasks';
import { charCountedModel as planned } from '../../helpers/planned-model';

async function inputsFor(): Promise<PlanInputs> {
  const task = await resolveTask('sst2');
  const evaluator = planned('e');
  return { task, generator: planned('g'), evaluator, lengths: assumedLengths(task, evaluator), throughput: { tokensPerSecond: 100, basis: 'assumed' }, inFlight: 4 };
}

const rows = (count: number) => Array.from({ length: count }, (_, i) => `row ${i}: a film ${'quite '.repeat(i % 7)}good`);

describe('a plan over many rows', () => {
  it('lets the event loop turn while it walks them', async () => {
    const p = await inputsFor();
    let turned = false;
    setImmediate(() => (turned = true));
    // Every count here resolves at once: without turns of its own, the walk would run to its end
    // before anything else the process has to do.
    const turnedBeforeDone = await planJob({ ...p, settings: DEFAULT_SETTINGS, inputs: rows(2000) }).then(() => turned);
    expect(turnedBeforeDone).toBe(true);
  });

  it('stops at its next turn once its signal is aborted: a plan nobody waits for walks no more rows', async () => {
    const p = await inputsFor();
    const inputs = rows(2000);
    /** The evaluator's prompts counted, and a hook run on each count. */
    const counting = (onCount: (n: number) => void) => {
      let counted = 0;
      const base = p.evaluator.counter;
      const counter = { ...base, count: (prompt: Parameters<typeof base.count>[0]) => (onCount(++counted), base.count(prompt)) };
      return { inputs: { ...p, evaluator: { ...p.evaluator, counter } }, counted: () => counted };
    };
    const whole = counting(() => undefined);
    await planJob({ ...whole.inputs, settings: DEFAULT_SETTINGS, inputs });
    // The page drops the plan while it walks: after a tenth of the evaluator's prompts.
    const dropped = new AbortController();
    const stopped = counting((n) => (n === Math.floor(whole.counted() / 10) ? dropped.abort() : undefined));
    await expect(planJob({ ...stopped.inputs, settings: DEFAULT_SETTINGS, inputs, signal: dropped.signal })).rejects.toMatchObject({ name: 'AbortError' });
    // At most one turn's rows (64) after the abort: far from the whole walk.
    expect(stopped.counted()).toBeLessThan(whole.counted() / 5);
    // Aborted before it starts, it counts nothing.
    const never = counting(() => undefined);
    await expect(planJob({ ...never.inputs, settings: DEFAULT_SETTINGS, inputs, signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(never.counted()).toBe(0);
  });

  it('counts the fewest runs and all of them in one walk as each alone counts them', async () => {
    const p = await inputsFor();
    const inputs = rows(50);
    const stopping: TatraSettings = { ...DEFAULT_SETTINGS, n: 2, k: 4, r: 5, earlyStop: true };
    const fewest = fewestRuns(p.task, stopping);
    expect(fewest).toBeLessThan(stopping.r);
    const both = (await planJob({ ...p, settings: stopping, inputs })).ledger.stages;
    const all = (await planJob({ ...p, settings: { ...stopping, earlyStop: false }, inputs })).ledger.stages;
    const few = (await planJob({ ...p, settings: { ...stopping, r: fewest, earlyStop: false }, inputs })).ledger.stages;
    // Every run's examples are made before the first row, however early the rows stop.
    expect(both.examples.calls).toEqual(all.examples.calls);
    for (const stage of ['paraphrases', 'evaluations'] as const) {
      for (const of of ['calls', 'prompt', 'completion'] as const) {
        expect(both[stage][of].max, `${stage} ${of}, all runs`).toBe(all[stage][of].max);
        expect(both[stage][of].min, `${stage} ${of}, the fewest runs`).toBe(few[stage][of].max);
      }
    }
    expect(both.evaluations.calls.min).toBe(inputs.length * fewest * (stopping.n + 1));
  });
});
