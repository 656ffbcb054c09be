// The plan's time from calls (jobs/plan-time.ts): a stage is as long as its calls through the
// backend's slots, or as its rows one wave after another when the rows in flight cannot fill
// them; a calibration's two calls alone give a call's fixed cost and its cost per token, its
// full-load run the slots, and its three full-load runs what calls cost at full load.
// Hand-computed figures, no clock.
import { describe, expect, it } from 'vitest';
import { fitCallCost, fitLoadedCost, fitSlots, jobCallCost, runSeconds, stageSeconds } from '../../../electron/jobs/plan-time';

const remote = { perCall: 0.05, perToken: 0, slots: 8 };

describe('stageSeconds', () => {
  it('is the calls through the slots when the rows in flight fill them', () => {
    // 50 rows × 2 calls, 64 rows in flight: 100 calls at once, 8 served at a time, 50 ms each.
    expect(stageSeconds({ calls: 100, completion: 100 }, 50, 64, remote)).toBeCloseTo((100 * 0.05) / 8, 12);
  });

  it('is one wave of rows after another when the rows in flight cannot fill the slots', () => {
    // 2 rows in flight × 1 call: 2 of 8 slots busy; 100 rows take 50 waves of 50 ms.
    expect(stageSeconds({ calls: 100, completion: 0 }, 100, 2, remote)).toBeCloseTo(50 * 0.05, 12);
    // 2 rows × 3 calls = 6 in flight, still under 8 slots: the same 50 waves.
    expect(stageSeconds({ calls: 300, completion: 0 }, 100, 2, remote)).toBeCloseTo(50 * 0.05, 12);
    // With 4 slots the 6 calls of a wave take longer than one call: throughput-bound again.
    expect(stageSeconds({ calls: 300, completion: 0 }, 100, 2, { ...remote, slots: 4 })).toBeCloseTo((300 * 0.05) / 4, 12);
  });

  it('charges generated tokens per call at their mean', () => {
    const local = { perCall: 0.1, perToken: 0.01, slots: 2 };
    // 40 calls writing 20 tokens each: 0.3 s a call, 2 at a time.
    expect(stageSeconds({ calls: 40, completion: 800 }, 20, 4, local)).toBeCloseTo((40 * 0.3) / 2, 12);
  });

  it('charges a generator call’s fixed cost where it was measured apart from an evaluation’s', () => {
    const stages = { examples: { calls: 4, completion: 40 }, paraphrases: { calls: 20, completion: 400 }, evaluations: { calls: 100, completion: 100 } };
    const cost = { perCall: 0.01, perToken: 0.02, slots: 1, perGeneratorCall: 0.05 };
    // Examples and paraphrases: 50 ms a call; evaluations: 10 ms; every token 20 ms; one slot.
    expect(runSeconds(stages, 10, 1, cost)).toBeCloseTo(4 * 0.05 + 40 * 0.02 + 20 * 0.05 + 400 * 0.02 + 100 * 0.01 + 100 * 0.02, 12);
    // Not measured apart: every call costs perCall.
    const { perGeneratorCall: _, ...plain } = cost;
    expect(runSeconds(stages, 10, 1, plain)).toBeCloseTo(124 * 0.01 + 540 * 0.02, 12);
  });

  it('makes a job’s examples all at once, before any row', () => {
    expect(stageSeconds({ calls: 6, completion: 0 }, 0, 1, remote)).toBeCloseTo(0.05, 12);
    expect(stageSeconds({ calls: 0, completion: 0 }, 0, 1, remote)).toBe(0);
  });

  it('adds the stages of a run', () => {
    const stages = { examples: { calls: 16, completion: 0 }, paraphrases: { calls: 500, completion: 0 }, evaluations: { calls: 3000, completion: 0 } };
    expect(runSeconds(stages, 100, 64, remote)).toBeCloseTo((16 * 0.05) / 8 + (500 * 0.05) / 8 + (3000 * 0.05) / 8, 12);
  });
});

describe('stageSeconds at full-load costs', () => {
  // Alone a generator call holds its slot 0.3 s before its tokens (10 ms each); at full load it
  // adds 20 ms and a token 5 ms to the run's time (the in-process model's shape: a call's prompt
  // is evaluated while the other sequences decode).
  const local = { perCall: 0.3, perToken: 0.01, slots: 2, loaded: { perCall: 0.02, perToken: 0.005 } };

  it('is what the calls cost at full load when the rows in flight fill the backend', () => {
    // 80 calls of 30 tokens, 8 in flight: 80 × 20 ms + 2,400 × 5 ms, where through 2 slots alone it was 80 × 0.6 / 2.
    expect(stageSeconds({ calls: 80, completion: 2400 }, 40, 4, local)).toBeCloseTo(80 * 0.02 + 2400 * 0.005, 12);
  });

  it('is the calls alone a wave at a time when too few are in flight to fill it', () => {
    // One row in flight, one call: each call alone, 0.3 + 30 × 10 ms.
    expect(stageSeconds({ calls: 40, completion: 1200 }, 40, 1, local)).toBeCloseTo(40 * 0.6, 12);
    // Two in flight: half that, still above the full-load cost (40 × 0.17 s).
    expect(stageSeconds({ calls: 80, completion: 2400 }, 40, 1, local)).toBeCloseTo((80 * 0.6) / 2, 12);
  });

  it('charges a generator call its own full-load cost', () => {
    const stages = { examples: { calls: 0, completion: 0 }, paraphrases: { calls: 80, completion: 2400 }, evaluations: { calls: 240, completion: 240 } };
    const cost = { perCall: 0.05, perToken: 0.01, slots: 2, perGeneratorCall: 0.3, loaded: { perCall: 0.004, perGeneratorCall: 0.02, perToken: 0.005 } };
    expect(runSeconds(stages, 40, 4, cost)).toBeCloseTo(80 * 0.02 + 2400 * 0.005 + 240 * 0.004 + 240 * 0.005, 12);
  });
});

describe('fitLoadedCost', () => {
  const run = (calls: number, tokens: number, evaluations: number, cost: { a: number; b: number; c: number }) => ({
    paraphrases: { calls, completion: tokens },
    evaluations: { calls: evaluations, completion: evaluations },
    seconds: cost.a * calls + cost.b * (tokens + evaluations) + cost.c * evaluations,
  });

  it('recovers the costs from runs with n lines, one and none', () => {
    const truth = { a: 0.02, b: 0.005, c: 0.008 };
    const fit = fitLoadedCost([run(12, 874, 36, truth), run(12, 411, 24, truth), run(0, 0, 12, truth)])!;
    expect(fit.perGeneratorCall).toBeCloseTo(0.02, 9);
    expect(fit.perToken).toBeCloseTo(0.005, 9);
    expect(fit.perCall).toBeCloseTo(0.008, 9);
  });

  it('holds at zero a cost the runs would make negative, and fits the others to them', () => {
    // Timing noise: the run without paraphrases took long (50 ms an evaluation), so the exact fit
    // gives a generator call a negative cost (−16 ms).
    const runs = [
      { paraphrases: { calls: 12, completion: 874 }, evaluations: { calls: 36, completion: 36 }, seconds: 5.0 },
      { paraphrases: { calls: 12, completion: 411 }, evaluations: { calls: 24, completion: 24 }, seconds: 2.6 },
      { paraphrases: { calls: 0, completion: 0 }, evaluations: { calls: 12, completion: 12 }, seconds: 0.6 },
    ];
    const fit = fitLoadedCost(runs)!;
    for (const v of Object.values(fit)) expect(v).toBeGreaterThanOrEqual(0);
    // No other non-negative fit is closer to the runs (a grid around it, every cost ≥ 0).
    const residual = (f: { perGeneratorCall: number; perToken: number; perCall: number }) =>
      runs.reduce((s, r) => s + (r.seconds - f.perGeneratorCall * r.paraphrases.calls - f.perToken * (r.paraphrases.completion + r.evaluations.completion) - f.perCall * r.evaluations.calls) ** 2, 0);
    const best = residual(fit);
    for (const da of [-1e-3, 0, 1e-3]) for (const db of [-1e-5, 0, 1e-5]) for (const dc of [-1e-3, 0, 1e-3]) {
      const near = { perGeneratorCall: fit.perGeneratorCall + da, perToken: fit.perToken + db, perCall: fit.perCall + dc };
      if (Object.values(near).every((v) => v >= 0)) expect(residual(near)).toBeGreaterThanOrEqual(best - 1e-12);
    }
    expect(fit.perGeneratorCall).toBe(0);
    expect(fit.perToken).toBeGreaterThan(0);
  });

  it('is null when no run took time', () => {
    expect(fitLoadedCost([{ paraphrases: { calls: 1, completion: 1 }, evaluations: { calls: 1, completion: 1 }, seconds: 0 }])).toBeNull();
  });
});

describe('fitCallCost', () => {
  it('splits a call into its fixed part and its tokens from a short and a long call', () => {
    const c = fitCallCost({ seconds: 0.11, completion: 1 }, { seconds: 1.1, completion: 100 });
    expect(c.perToken).toBeCloseTo(0.01, 12);
    expect(c.perCall).toBeCloseTo(0.1, 12);
  });

  it('puts everything on the call when the long call took no longer (a server’s latency)', () => {
    expect(fitCallCost({ seconds: 0.052, completion: 1 }, { seconds: 0.05, completion: 60 })).toEqual({ perCall: 0.052, perToken: 0 });
  });

  it('never gives a negative part', () => {
    const c = fitCallCost({ seconds: 0.01, completion: 2 }, { seconds: 2, completion: 10 });
    expect(c.perCall).toBeGreaterThanOrEqual(0);
    expect(c.perToken).toBeGreaterThan(0);
  });
});

describe('fitSlots', () => {
  it('finds the slots that give the full-load time it measured', () => {
    const cost = { perCall: 0.05, perToken: 0 };
    const load = { paraphrases: { calls: 48, completion: 0 }, evaluations: { calls: 192, completion: 0 }, rows: 48 };
    for (const slots of [2, 8, 30]) {
      const seconds = runSeconds({ examples: { calls: 0, completion: 0 }, ...load }, 48, 48, { ...cost, slots });
      expect(fitSlots(cost, { ...load, seconds })).toBeCloseTo(slots, 6);
    }
  });

  it('fits a run that kept fewer rows in flight than it classified, as a job does', () => {
    const cost = { perCall: 0.05, perToken: 0.01 };
    // 12 rows, 4 at a time: 3 waves of 4 rows, each row a paraphrase call of 40 tokens and 3 evaluations of 1.
    const load = { paraphrases: { calls: 12, completion: 480 }, evaluations: { calls: 36, completion: 36 }, rows: 12 };
    const seconds = runSeconds({ examples: { calls: 0, completion: 0 }, ...load }, 12, 4, { ...cost, slots: 3 });
    expect(fitSlots(cost, { ...load, inFlight: 4, seconds })).toBeCloseTo(3, 6);
    // Never more than the calls of the 4 rows in flight (12 evaluations), however fast it went.
    expect(fitSlots(cost, { ...load, inFlight: 4, seconds: 0.001 })).toBe(12);
  });

  it('stays between one slot and the calls that were in flight', () => {
    const cost = { perCall: 0.05, perToken: 0 };
    const load = { paraphrases: { calls: 4, completion: 0 }, evaluations: { calls: 16, completion: 0 }, rows: 4 };
    expect(fitSlots(cost, { ...load, seconds: 100 })).toBe(1);
    expect(fitSlots(cost, { ...load, seconds: 0.001 })).toBe(16);
  });
});

describe('jobCallCost', () => {
  // 20 rows, 4 in flight: each row 2 paraphrase calls of 30 tokens, then 10 evaluations of 1 token.
  const rows = 20;
  const work = { examples: { calls: 4, completion: 40 }, paraphrases: { calls: 40, completion: 1200 }, evaluations: { calls: 200, completion: 200 } };

  it('splits a call as the batches’ times per call say, scaled so the job’s calls take its own time one at a time', () => {
    // Batches of 0.4 s a paraphrase call (30 tokens) and 0.11 s an evaluation (1 token): 0.1 s a call + 0.01 s a token, times a scale.
    const stages = { examples: work.examples, paraphrases: { ...work.paraphrases, ms: 40 * 400 }, evaluations: { ...work.evaluations, ms: 200 * 110 } };
    const cost = jobCallCost(stages, rows, 4, 14)!;
    expect(cost.slots).toBe(1);
    expect(cost.perToken / cost.perCall).toBeCloseTo(0.1, 9);
    expect(runSeconds(work, rows, 4, cost)).toBeCloseTo(14, 9);
    // Twice the waiting in every batch: the same cost (the scale is the job's time).
    const waited = { ...stages, paraphrases: { ...stages.paraphrases, ms: 2 * stages.paraphrases.ms }, evaluations: { ...stages.evaluations, ms: 2 * stages.evaluations.ms } };
    expect(jobCallCost(waited, rows, 4, 14)!.perCall).toBeCloseTo(cost.perCall, 12);
  });

  it('plans a job of other settings on the same models by those calls: a server job planned from another', () => {
    // A server of 8 slots, 50 ms a call: 50 rows of 180 calls, 64 in flight, took 9000 × 50 ms / 8;
    // every row's batches waited seconds behind the others'.
    const server = { perCall: 0.05, perToken: 0, slots: 8 };
    const big = { examples: { calls: 30, completion: 300 }, paraphrases: { calls: 750, completion: 60_000 }, evaluations: { calls: 8250, completion: 8250 } };
    const took = runSeconds(big, 50, 64, server);
    const timed = { ...big, paraphrases: { ...big.paraphrases, ms: 750 * 3000 }, evaluations: { ...big.evaluations, ms: 8250 * 3000 } };
    const cost = jobCallCost(timed, 50, 64, took)!;
    const next = { examples: { calls: 4, completion: 20 }, paraphrases: { calls: 2400, completion: 20_000 }, evaluations: { calls: 4800, completion: 4800 } };
    expect(runSeconds(next, 1200, 64, cost) / runSeconds(next, 1200, 64, server)).toBeCloseTo(1, 1);
    expect(jobCallCost({ ...timed, evaluations: { calls: 0, completion: 0, ms: 0 } }, 50, 64, took)).toBeNull();
  });
});
