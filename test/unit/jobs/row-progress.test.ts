// The ETA over calls weighted by what they cost (jobs/row-progress.ts): a row's few generator calls
// can take most of its time, so each side's calls weigh the share of a row's time it took in
// the rows finished so far. Scripted clock (vi.setSystemTime), scripted rows: no timing.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { callWeight, countRowCall, rowsProgress, sessionTally, settleRow, startRow } from '../../../electron/jobs/row-progress';
import type { JobInfo } from '../../../electron/jobs/types';
import { resolveTask } from '../../../electron/tasks';

async function job(rows: number): Promise<JobInfo> {
  // Only what the tally reads; sst2 has two labels.
  return {
    id: 'j',
    task: await resolveTask('sst2'),
    settings: { n: 4, k: 4, r: 2, seed: 1, scope: 'run' },
    rowsTotal: rows,
    rowsDone: 0,
    rowsCorrect: 0,
    rowsWithGold: 0,
    baseline: false,
    deterministic: null,
  } as unknown as JobInfo;
}

const stages = (generatorMs: number, evaluatorMs: number) => ({
  examples: { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 },
  paraphrases: { calls: 2, promptTokens: 0, completionTokens: 0, ms: generatorMs },
  evaluation: { calls: 10, promptTokens: 0, completionTokens: 0, ms: evaluatorMs },
});

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

describe('calls weighted by their side’s time', () => {
  it('weighs every call 1 until a row is timed, then by its side’s share of the row, a row still weighing its plan', async () => {
    const tally = sessionTally(await job(10), 2);
    // n = 4, r = 2: per row 2 paraphrase calls (the generator) and 2 × 5 evaluations.
    expect(tally.calls.plan.perRow).toBe(12);
    expect(tally.calls.generatorPerRow).toBe(2);
    expect(callWeight(tally.calls, 'generator')).toBe(1);
    const first = startRow();
    for (let i = 0; i < 5; i++) countRowCall(tally.calls, first, 'evaluator');
    settleRow(tally.calls, first, stages(3000, 1000));
    // Run examples (2 runs × 2 labels) + one row, in calls and in work alike.
    expect(tally.calls.done).toBe(4 + 12);
    expect(tally.calls.work).toBe(4 + 12);
    // The generator took 3/4 of the row's time over 2 calls; evaluations 1/4 over 10.
    expect(callWeight(tally.calls, 'generator')).toBeCloseTo((0.75 * 12) / 2, 12);
    expect(callWeight(tally.calls, 'evaluator')).toBeCloseTo((0.25 * 12) / 10, 12);
    const second = startRow();
    countRowCall(tally.calls, second, 'generator');
    countRowCall(tally.calls, second, 'generator');
    expect(tally.calls.done).toBe(16 + 2);
    expect(tally.calls.work).toBeCloseTo(16 + 9, 12);
    // A row is never credited past its plan, in calls or in work.
    for (let i = 0; i < 20; i++) countRowCall(tally.calls, second, 'evaluator');
    expect(second.calls).toBe(12);
    expect(tally.calls.done).toBe(28);
    expect(tally.calls.work).toBeCloseTo(28, 9);
    settleRow(tally.calls, second);
    expect(tally.calls.work).toBeCloseTo(28, 9);
  });

  it('keeps the ETA near the truth inside rows whose few slow generator calls take most of the time', async () => {
    const rows = 30;
    const tally = sessionTally(await job(rows), 2);
    const t0 = Date.now();
    // Each row: two paraphrase calls of 1.5 s, then ten evaluations of 0.1 s: 4 s a row, one row in flight.
    const end = t0 + rows * 4000;
    const errors: number[] = [];
    const look = () => {
      const p = rowsProgress('j', tally);
      const truth = (end - Date.now()) / 1000;
      if (p.etaSeconds !== null && p.callsDone / p.callsTotal >= 0.1 && truth > 0) errors.push((p.etaSeconds - truth) / truth);
    };
    for (let r = 0; r < rows; r++) {
      const credit = startRow();
      for (let g = 0; g < 2; g++) {
        vi.advanceTimersByTime(1500);
        countRowCall(tally.calls, credit, 'generator');
        look();
      }
      for (let e = 0; e < 10; e++) {
        vi.advanceTimersByTime(100);
        countRowCall(tally.calls, credit, 'evaluator');
        look();
      }
      settleRow(tally.calls, credit, stages(3000, 1000));
    }
    expect(errors.length).toBeGreaterThan(100);
    // Counted one call each, the ETA swung by about ±40 % inside each row.
    expect(Math.max(...errors.map(Math.abs))).toBeLessThan(0.2);
  });
});

