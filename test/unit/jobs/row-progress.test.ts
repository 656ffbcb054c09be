// The ETA over calls weighted by what they cost (jobs/row-progress.ts): a row's few generator calls
// can take most of its time, so each side's calls weigh the share of a row's time it took in
// the rows finished so far. Scripted clock (vi.setSystemTime), scripted rows: no timing.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { callCosts, callWeight, countRowCall, rowsProgress, sessionTally, settleRow, sizeWeights, startRow, workDone } from '../../../electron/jobs/row-progress';
import { replayEta, scriptedJob, type EtaTrace } from '../../helpers/eta-replay';

// Only what the tally reads; sst2 has two labels.
const job = (rows: number) => scriptedJob(rows, { n: 4, k: 4, r: 2, scope: 'run' }, 'j');

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
    const first = startRow(tally.calls);
    for (let i = 0; i < 5; i++) countRowCall(tally.calls, first, 'evaluator');
    settleRow(tally.calls, first, stages(3000, 1000));
    // Run examples (2 runs × 2 labels) + one row, in calls and in work alike.
    expect(tally.calls.done).toBe(4 + 12);
    expect(workDone(tally.calls)).toBe(4 + 12);
    // The generator took 3/4 of the row's time over 2 calls; evaluations 1/4 over 10.
    expect(callWeight(tally.calls, 'generator')).toBeCloseTo((0.75 * 12) / 2, 12);
    expect(callWeight(tally.calls, 'evaluator')).toBeCloseTo((0.25 * 12) / 10, 12);
    const second = startRow(tally.calls);
    countRowCall(tally.calls, second, 'generator');
    countRowCall(tally.calls, second, 'generator');
    expect(tally.calls.done).toBe(16 + 2);
    expect(workDone(tally.calls)).toBeCloseTo(16 + 9, 12);
    // A row is never credited past its plan, in calls or in work.
    for (let i = 0; i < 20; i++) countRowCall(tally.calls, second, 'evaluator');
    expect(second.calls).toBe(12);
    expect(tally.calls.done).toBe(28);
    expect(workDone(tally.calls)).toBeCloseTo(28, 9);
    settleRow(tally.calls, second);
    expect(workDone(tally.calls)).toBeCloseTo(28, 9);
  });

  it('weighs the sides by their calls’ costs once the calls’ ends tell them apart, over the stages’ times', async () => {
    const tally = sessionTally(await job(10), 2);
    const row = startRow(tally.calls);
    // Two seconds of paraphrase calls (one every 500 ms), then a second of evaluations (one every 100 ms).
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(500);
      countRowCall(tally.calls, row, 'generator');
    }
    expect(callCosts(tally.calls.costs)).toBeNull();
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(100);
      countRowCall(tally.calls, row, 'evaluator');
    }
    vi.advanceTimersByTime(1000);
    countRowCall(tally.calls, startRow(tally.calls), 'evaluator');
    const costs = callCosts(tally.calls.costs)!;
    expect(costs.generator).toBeCloseTo(500, 6);
    expect(costs.evaluator).toBeGreaterThan(50);
    expect(costs.evaluator).toBeLessThan(200);
    // The stages' times (a row that waited 9 s for its evaluations) no longer weigh.
    settleRow(tally.calls, row, stages(1000, 9000));
    const share = (2 * costs.generator) / (2 * costs.generator + 10 * costs.evaluator);
    expect(callWeight(tally.calls, 'generator')).toBeCloseTo((share * 12) / 2, 9);
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
      const credit = startRow(tally.calls);
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

  it('moves the time left on with the clock while no call ends, and stops it where the rows in flight would be done', async () => {
    const rows = 30;
    const tally = sessionTally(await job(rows), 2);
    // One row in flight: two paraphrase calls of 1.5 s, then ten evaluations of 0.1 s.
    for (let r = 0; r < 12; r++) {
      const credit = startRow(tally.calls);
      for (let g = 0; g < 2; g++) {
        vi.advanceTimersByTime(1500);
        countRowCall(tally.calls, credit, 'generator');
      }
      for (let e = 0; e < 10; e++) {
        vi.advanceTimersByTime(100);
        countRowCall(tally.calls, credit, 'evaluator');
      }
      settleRow(tally.calls, credit, stages(3000, 1000));
    }
    startRow(tally.calls);
    const at = (ms: number) => {
      vi.advanceTimersByTime(ms);
      return rowsProgress('j', tally).etaSeconds!;
    };
    // 18 rows of 4 s left; a second later, a second less (a look between calls, as the job's tick takes).
    const start = at(0);
    expect(start).toBeCloseTo(72, 0);
    expect(at(1000)).toBeCloseTo(start - 1, 1);
    expect(at(1000)).toBeCloseTo(start - 2, 1);
    // A row that never ends: the time left stops falling short of the other 17 rows' time, and
    // grows once the rate is read over the stall.
    const stalled = [at(5000), at(5000), at(60_000), at(60_000)];
    expect(Math.min(...stalled)).toBeGreaterThan(17 * 4);
    expect(stalled[3]).toBeGreaterThan(stalled[2]!);
  });
});


/**
 * A job in process as bench/eta.ts records them (test/helpers/eta-replay.ts replays it): the
 * model decodes every call in flight in one batch, each progressing at its share of the model's
 * speed; `inFlight` rows at once, each two paraphrase calls (its two runs at once) then ten
 * evaluations; a stage's time is its wall time, as the engine measures it.
 */
function inProcessJob(rows: number, inFlight: number, generatorMs: (call: number, row: number) => number, evaluatorMs: number, size?: (row: number) => number): EtaTrace {
  const events: EtaTrace['events'] = [{ type: 'rows', t: 0 }];
  const active: { row: number; side: 'generator' | 'evaluator'; left: number }[] = [];
  const state = new Map<number, { start: number; evaluating: number | null; left: number }>();
  let t = 0;
  let started = 0;
  let finished = 0;
  let paraphraseCalls = 0;
  const start = () => {
    const row = ++started;
    state.set(row, { start: t, evaluating: null, left: 2 });
    events.push({ type: 'start', t, row, ...(size ? { size: size(row) } : {}) });
    for (let i = 0; i < 2; i++) active.push({ row, side: 'generator', left: generatorMs(paraphraseCalls++, row) });
  };
  for (let i = 0; i < Math.min(inFlight, rows); i++) start();
  while (finished < rows) {
    // The call with the least left ends first; every call in the batch advances as much.
    const step = Math.min(...active.map((c) => c.left));
    t += step * active.length;
    for (const c of active) c.left -= step;
    for (const c of active.filter((a) => a.left <= 1e-9)) {
      active.splice(active.indexOf(c), 1);
      events.push({ type: 'call', t, row: c.row, side: c.side });
      const row = state.get(c.row)!;
      if (--row.left > 0) continue;
      if (row.evaluating === null) {
        row.evaluating = t;
        row.left = 10;
        for (let i = 0; i < 10; i++) active.push({ row: c.row, side: 'evaluator', left: evaluatorMs });
      } else {
        events.push({ type: 'settle', t, row: c.row, stages: { generator: row.evaluating - row.start, evaluator: t - row.evaluating } });
        finished++;
        if (started < rows) start();
      }
    }
  }
  return { setting: 'in process', settings: { n: 4, k: 4, r: 2, scope: 'run' }, rows, end: t, events };
}

describe('an in-process job, replayed as recorded', () => {
  it('gives a point near the truth from 10 % of the calls on: the calls before the first row was timed weighed as the ones after it, the calls part-way counted', async () => {
    // Paraphrase calls of 300-700 ms of the model's time, evaluations of 15 ms; 4 rows in flight, 48 rows.
    const trace = inProcessJob(48, 4, (i) => 300 + ((i * 37) % 5) * 100, 15);
    const looks = await replayEta(trace, 500);
    const from = looks.filter((l) => l.share >= 0.1 && l.share <= 0.7);
    expect(from.length).toBeGreaterThan(40);
    // Before: a range until past 10 % (the calls' units changed when the first row was timed), and
    // 34 % high at 75 % (the batch's calls part-way, uncounted); now 27 % there at worst, 10 % at half way.
    for (const l of from) {
      expect(l.eta).not.toBeNull();
      expect(Math.abs(l.eta! - l.truth) / l.truth).toBeLessThan(0.3);
    }
    const half = looks.find((l) => l.share >= 0.5)!;
    expect(Math.abs(half.eta! - half.truth) / half.truth).toBeLessThan(0.15);
    // Before the rate is stable, a range.
    expect(looks.some((l) => l.eta === null && l.range !== null && l.range.max > l.range.min)).toBe(true);
  });
});

/**
 * A remote job as bench/eta.ts records them: a server answering each call after `ms`, `slots`
 * at once, the rest queued in the order sent; every row in flight from the start (fewer rows
 * than the job's rows in flight), each two paraphrase calls then ten evaluations.
 */
function serverJob(rows: number, slots: number, ms: number): EtaTrace {
  const events: EtaTrace['events'] = [{ type: 'rows', t: 0 }];
  const queue: { row: number; side: 'generator' | 'evaluator' }[] = [];
  const serving: { row: number; side: 'generator' | 'evaluator'; end: number }[] = [];
  const left = new Map<number, { evaluating: number | null; calls: number }>();
  let t = 0;
  for (let row = 1; row <= rows; row++) {
    events.push({ type: 'start', t, row });
    left.set(row, { evaluating: null, calls: 2 });
    queue.push({ row, side: 'generator' }, { row, side: 'generator' });
  }
  let finished = 0;
  while (finished < rows) {
    while (serving.length < slots && queue.length > 0) serving.push({ ...queue.shift()!, end: t + ms });
    serving.sort((a, b) => a.end - b.end);
    const c = serving.shift()!;
    t = c.end;
    events.push({ type: 'call', t, row: c.row, side: c.side });
    const row = left.get(c.row)!;
    if (--row.calls > 0) continue;
    if (row.evaluating === null) {
      row.evaluating = t;
      row.calls = 10;
      for (let i = 0; i < 10; i++) queue.push({ row: c.row, side: 'evaluator' });
    } else {
      events.push({ type: 'settle', t, row: c.row, stages: { generator: ms, evaluator: t - row.evaluating } });
      finished++;
    }
  }
  return { setting: 'remote', settings: { n: 4, k: 4, r: 2, scope: 'run' }, rows, end: t, events };
}

describe('a remote job with every row in flight from the start, replayed as recorded', () => {
  it('does not count the rows waiting for the server as nearly done, nor weigh the calls by how long their rows waited', async () => {
    // 50 rows at once, 8 slots, 400 ms a call: the rows finish one after another, long after they all started.
    const trace = serverJob(50, 8, 400);
    const looks = await replayEta(trace, 250);
    const from = looks.filter((l) => l.share >= 0.25 && l.share <= 0.8);
    expect(from.length).toBeGreaterThan(40);
    // Judged by their age the rows waiting counted as nearly done (−88 % on bench/eta.ts). (Weighed by
    // their stages' times alone, the paraphrase calls, all ended first, counted a twentieth of a row
    // where every call costs the same: +78 %; until the calls' ends have measured the sides' costs
    // the stages still weigh, a look or two at about a fifth of the calls.)
    for (const l of from) {
      expect(l.eta).not.toBeNull();
      expect(Math.abs(l.eta! - l.truth) / l.truth).toBeLessThan(0.25);
    }
  });
});

describe('rows weighed by their inputs’ lengths', () => {
  // Long inputs first, short ones after (rows come in the data's order): a paraphrase call decodes
  // for as long as its input asks, 100 ms plus 3 ms a character of the model's time.
  const size = (row: number) => (row <= 24 ? 160 : 50) + (row % 3) * 5;
  const longFirst = () => inProcessJob(48, 4, (_, row) => 100 + 3 * size(row), 15, size);
  const unsized = (trace: EtaTrace): EtaTrace => ({ ...trace, events: trace.events.map((e) => (e.type === 'start' ? { type: 'start', t: e.t, row: e.row } : e)) });
  const errors = (looks: Awaited<ReturnType<typeof replayEta>>) =>
    looks.filter((l) => l.share >= 0.25 && l.share <= 0.75).map((l) => (l.eta === null ? Infinity : Math.abs(l.eta - l.truth) / l.truth));
  const mean = (e: number[]) => e.reduce((a, b) => a + b, 0) / e.length;

  it('says the time left at what the rows still to come will cost, where rows weighed alike took the long rows’ pace for the job’s', async () => {
    const trace = longFirst();
    const weighed = errors(await replayEta(trace, 500));
    const alike = errors(await replayEta(unsized(trace), 500));
    expect(weighed.length).toBeGreaterThan(40);
    // Alike, the short rows' half was said at the long rows' pace: 90 % off on average, up to 2.6 times the truth.
    expect(mean(alike)).toBeGreaterThan(0.5);
    // Weighed, 14 % on average; the worst looks (28 %) are where four rows' calls end at once in this lockstep job.
    expect(mean(weighed)).toBeLessThan(0.2);
    expect(Math.max(...weighed)).toBeLessThan(0.35);
  });

  it('fits how a row’s generator time goes with its length once 8 rows tell, three quarters assumed before and while unclear, nothing where 32 rows show no slope', async () => {
    const tally = sessionTally(await job(40), 2, { all: 40 * 100, done: 0 });
    // Before any row: three quarters of a call's cost taken to grow with the length (the job's mean, 100).
    expect(sizeWeights(tally.calls)).toEqual({ perCall: 0.25, perChar: 0.0075 });
    // Rows whose generator time is 200 ms + 10 ms a character: at the mean length a sixth of it is fixed.
    const rows = (tallied: typeof tally, fixedMs: number) => {
      for (let i = 0; i < 8; i++) {
        const length = 50 + i * 15;
        settleRow(tallied.calls, startRow(tallied.calls, length), stages(fixedMs + 10 * length, 500));
      }
    };
    rows(tally, 200);
    const w = sizeWeights(tally.calls);
    expect(w.perCall).toBeCloseTo(200 / 1200, 9);
    expect(w.perChar).toBeCloseTo(10 / 1200, 9);
    // 1,000 ms + 10 ms a character: half of it fixed as fitted, a quarter taken (the rest of a
    // row's time is more its waiting for other rows' calls than its own cost).
    const waited = sessionTally(await job(40), 2, { all: 40 * 100, done: 0 });
    rows(waited, 1000);
    const capped = sizeWeights(waited.calls);
    expect(capped.perCall).toBeCloseTo(0.25, 9);
    expect(capped.perChar).toBeCloseTo(0.0075, 9);
    // A server answering every call in the same time whatever the length: the prior while 31 rows
    // or fewer cannot tell a slope from noise, then every row weighs alike.
    const server = sessionTally(await job(40), 2, { all: 40 * 100, done: 0 });
    const serverRow = (i: number) => settleRow(server.calls, startRow(server.calls, 40 + ((i * 53) % 150)), stages(1000 + ((i * 7) % 5) * 10, 500));
    for (let i = 0; i < 31; i++) serverRow(i);
    expect(sizeWeights(server.calls)).toEqual({ perCall: 0.25, perChar: 0.0075 });
    serverRow(31);
    expect(sizeWeights(server.calls)).toEqual({ perCall: 1, perChar: 0 });
    // The job's calls still weigh its plan: a row of the mean length weighs its plan's calls.
    const before = workDone(tally.calls);
    settleRow(tally.calls, startRow(tally.calls, 100));
    expect(workDone(tally.calls) - before).toBeCloseTo(12, 9);
  });
});
