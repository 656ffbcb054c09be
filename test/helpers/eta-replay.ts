// A job's ETA replayed from what fed it (jobs/row-progress.ts's etaTrace, recorded by
// bench/eta.ts --trace): the rows' starts, calls and ends at their recorded times, through the
// job's own tally and estimator on a scripted clock, read as the app reads it (the latest
// progress event, every `every` ms). bench/eta.ts --replay and the ETA's tests use it, so an
// estimator can be tried on a recorded job in a second, without running the job again.
import type { JobProgress } from '../../electron/common/contract/jobs';
import type { TatraSettings } from '../../electron/common/tatra';
import { PROGRESS_EVERY_MS, PROGRESS_TICK_MS, countCalls, countRowCall, rowsProgress, sessionTally, settleRow, startRow, startRows, type EtaTraceEvent, type RowCredit } from '../../electron/jobs/row-progress';
import type { JobInfo } from '../../electron/jobs/types';
import { resolveTask } from '../../electron/tasks';

/** One job's recording: its settings, when it ended (ms after it started) and the ETA's input, times in ms after it started. */
export interface EtaTrace {
  setting: string;
  settings: Pick<TatraSettings, 'n' | 'k' | 'r' | 'scope'>;
  rows: number;
  end: number;
  events: EtaTraceEvent[];
}

/** What the app showed at one look: the share of calls done, the point ETA or the range, and the time that really remained (s). */
export interface EtaLook {
  t: number;
  share: number;
  eta: number | null;
  range: { min: number; max: number } | null;
  truth: number;
}

const STAGES0 = { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 };

/** A job of `rows` sst2 rows (two labels) at `settings`, holding only what the ETA's tally reads. */
export async function scriptedJob(rows: number, settings: EtaTrace['settings'], id = 'replay'): Promise<JobInfo> {
  return {
    id,
    task: await resolveTask('sst2'),
    settings: { seed: 1, ...settings },
    rowsTotal: rows,
    rowsDone: 0,
    rowsCorrect: 0,
    rowsWithGold: 0,
    baseline: false,
    deterministic: null,
  } as unknown as JobInfo;
}

/** Replays `trace` (the task is sst2, as bench/eta.ts runs it) and returns what the app showed every `every` ms. */
export async function replayEta(trace: EtaTrace, every = 1000): Promise<EtaLook[]> {
  const job = await scriptedJob(trace.rows, trace.settings);
  // The rows' lengths, where the recording has them (the job knows them all before it starts).
  const sized = trace.events.filter((e): e is Extract<EtaTraceEvent, { type: 'start' }> => e.type === 'start' && e.size !== undefined);
  const sizes = sized.length === trace.rows ? { all: sized.reduce((sum, e) => sum + e.size!, 0), done: 0 } : undefined;
  const realNow = Date.now;
  let clock = 0;
  Date.now = () => clock;
  try {
    const tally = sessionTally(job, 0, sizes);
    const rows = new Map<number, RowCredit>();
    const looks: EtaLook[] = [];
    let latest: JobProgress | null = null;
    let nextLook = every;
    const lookUntil = (t: number) => {
      for (; nextLook < t && nextLook < trace.end; nextLook += every) {
        // The job's tick: with rows in flight and nothing sent for a tick, progress as of now.
        if (tally.calls.inFlight.size > 0 && nextLook - tally.calls.lastEmit >= PROGRESS_TICK_MS) {
          clock = nextLook;
          emit();
        }
        if (!latest || latest.callsTotal === 0) continue;
        looks.push({ t: nextLook, share: latest.callsDone / latest.callsTotal, eta: latest.etaSeconds, range: latest.etaRange, truth: (trace.end - nextLook) / 1000 });
      }
    };
    const emit = () => {
      tally.calls.lastEmit = clock;
      latest = rowsProgress(job.id, tally);
    };
    for (const e of trace.events) {
      lookUntil(e.t);
      clock = e.t;
      if (e.type === 'calls') {
        countCalls(tally.calls, e.n);
        emit();
      } else if (e.type === 'rows') {
        startRows(tally);
        emit();
      } else if (e.type === 'start') rows.set(e.row, startRow(tally.calls, sizes ? e.size : undefined));
      else if (e.type === 'call') {
        const row = rows.get(e.row);
        if (row && countRowCall(tally.calls, row, e.side) && clock - tally.calls.lastEmit >= PROGRESS_EVERY_MS) emit();
      } else {
        const row = rows.get(e.row);
        if (!row) continue;
        rows.delete(e.row);
        const stages = e.stages ? { examples: STAGES0, paraphrases: { ...STAGES0, ms: e.stages.generator }, evaluation: { ...STAGES0, ms: e.stages.evaluator } } : undefined;
        settleRow(tally.calls, row, stages);
        tally.done++;
        tally.session++;
        emit();
      }
    }
    lookUntil(trace.end);
    return looks;
  } finally {
    Date.now = realNow;
  }
}

/** The first look at or past each share of calls (what bench/eta.ts prints), and the worst point error from 10 % to 80 % of calls. */
export function etaErrors(looks: readonly EtaLook[], shares: readonly number[] = [0.1, 0.25, 0.5, 0.75]): { at: (EtaLook | null)[]; worst: number; ranges: number } {
  const at = shares.map((s) => looks.find((l) => l.share >= s) ?? null);
  let worst = 0;
  let ranges = 0;
  for (const l of looks) {
    if (l.share < 0.1 || l.share > 0.8 || l.truth <= 0) continue;
    if (l.eta !== null) worst = Math.max(worst, Math.abs(l.eta - l.truth) / l.truth);
    else ranges++;
  }
  return { at, worst, ranges };
}

/** A look's error as bench/eta.ts prints it: "+12 %", a range "−20…+5 %" while there is no point, "none". */
export function formatLook(l: EtaLook | null): string {
  if (!l) return '–';
  const err = (v: number) => `${v >= l.truth ? '+' : ''}${(((v - l.truth) / l.truth) * 100).toFixed(0)} %`;
  if (l.eta !== null) return err(l.eta);
  if (l.range) return `${err(l.range.min)}…${err(l.range.max)}`;
  return 'none';
}
