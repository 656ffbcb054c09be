// An experiment's time left: its running job's own time left (jobs/row-progress.ts, a range while
// the job's rate is not stable), plus the planner's price of each cell still to run after it
// (jobs/planner.ts cellSeconds: each cell's own n, k, models and rows, what earlier cells or the
// cache already made counted once), scaled by how the running job's pace compares with its own
// price. The price is made once when the experiment starts or resumes (and again after a job ends
// while some cell had none), never on the runner's path; a cell the planner could not price
// (nothing measured its models' speed yet) counts as long as the running job in all, the only
// guess left. Taking every job as long as the running one was wrong by the ratio of their work:
// a sweep's n = 0 job makes no paraphrase, its n = 8 job makes eight a run.
// Pure: numbers in, numbers out.
import type { CountRange } from '../common/plan';
import type { JobProgress } from '../common/contract/jobs';
import type { CellPrice, CellState } from './kind';

export interface ExperimentEtaInput {
  /** The running job, or null between jobs. */
  job: {
    /** Its own time left as its progress says it (a point, else a range; both null until its rate is known). */
    etaSeconds: number | null;
    etaRange: CountRange | null;
    /** How long it has run in this session (seconds). */
    elapsedSeconds: number;
    /** The planner's price of its work this session (seconds), null where there is none. */
    planned: CountRange | null;
    /** The share of that priced work it still has (rows left now over rows priced). */
    leftShare: number;
  } | null;
  /** The planner's price of each cell still to run after it, in seconds (null: could not be priced). */
  after: readonly (CountRange | null)[];
  /** Measured time over planned time of the jobs that ran before (the last pace seen), when known. */
  pace?: CountRange | null;
}

export interface ExperimentEta {
  etaSeconds: number | null;
  etaRange: CountRange | null;
  /** Measured time over planned time, as the running job showed it: what the next estimate starts from. */
  pace: CountRange | null;
}

const NONE: ExperimentEta = { etaSeconds: null, etaRange: null, pace: null };

/**
 * The experiment's time left: a point where the running job has one and every cell after it a
 * single price, else a range (the job's range, the planner's min and max with early stopping);
 * null when nothing can say (no price and no rate).
 */
export function experimentEta(input: ExperimentEtaInput): ExperimentEta {
  const { job } = input;
  // The job's total time in this session as its own rate says it.
  const ownLeft = job ? (job.etaSeconds !== null ? { min: job.etaSeconds, max: job.etaSeconds } : job.etaRange) : { min: 0, max: 0 };
  const measured = job && ownLeft ? { min: job.elapsedSeconds + ownLeft.min, max: job.elapsedSeconds + ownLeft.max } : null;
  const mid = job?.planned ? (job.planned.min + job.planned.max) / 2 : 0;
  const pace = measured && mid > 0 ? { min: measured.min / mid, max: measured.max / mid } : (input.pace ?? null);
  const scale = pace ?? { min: 1, max: 1 };
  // Before the job's rate is known: its price for the rows it has left, at the last pace seen.
  const own = ownLeft ?? (job?.planned ? { min: job.planned.min * job.leftShare * scale.min, max: job.planned.max * job.leftShare * scale.max } : null);
  if (!own) return NONE;
  let min = own.min;
  let max = own.max;
  for (const price of input.after) {
    if (price) {
      min += price.min * scale.min;
      max += price.max * scale.max;
    } else if (measured) {
      min += measured.min;
      max += measured.max;
    } else return NONE;
  }
  return { etaSeconds: min === max ? min : null, etaRange: { min, max }, pace };
}

/**
 * An experiment's time left from its cells as they stand: `current` the running job (null between
 * jobs), `live` its latest progress and when the runner first saw it, `prices` the planner's by
 * cell key (absent until they come), `pace` the last seen.
 */
export function cellsEta<Cell>(p: {
  states: readonly CellState<Cell>[];
  current: string | null;
  live: { progress: JobProgress; since: number } | undefined;
  prices: ReadonlyMap<string, CellPrice> | undefined;
  pace: CountRange | null;
  key(cell: Cell): string;
}): ExperimentEta {
  const priceOf = (s: CellState<Cell>) => p.prices?.get(p.key(s.cell)) ?? null;
  const running = p.current === null ? undefined : p.states.find((s) => s.job?.id === p.current);
  // Cells the walk will still run after this one (a failed, cancelled or dropped cell's job is not run again).
  const after = p.states.filter((s) => s !== running && s.error === null && s.dropped === null && (s.job === null || s.job.interrupted || ['queued', 'paused'].includes(s.job.status)));
  const price = running ? priceOf(running) : null;
  const left = running?.job ? running.job.rowsTotal - running.job.rowsDone : 0;
  const { live } = p;
  return experimentEta({
    job:
      p.current === null
        ? null
        : {
            etaSeconds: live?.progress.etaSeconds ?? null,
            etaRange: live?.progress.etaRange ?? null,
            elapsedSeconds: live ? (Date.now() - live.since) / 1000 : 0,
            planned: price?.seconds ?? null,
            leftShare: price && price.rows > 0 ? Math.min(1, left / price.rows) : 1,
          },
    after: after.map((s) => priceOf(s)?.seconds ?? null),
    pace: p.pace,
  });
}
