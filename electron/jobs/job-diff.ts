// Two jobs on the same data file compared on the rows both scored (docs/method.md §16): `tatra jobs
// diff A B`. Each row's outcome is its own job's (right or wrong against that job's gold); rows one
// job has not finished, or has no gold for, are left out of both.
import { UserError } from '../common/errors';
import type { PairedComparison } from '../common/contract/interval';
import { comparePaired, seedOf } from '../common/stats';
import type { JobInfo, JobRow } from './types';

export interface JobDiff {
  first: JobInfo;
  second: JobInfo;
  /** First minus second, on the rows both scored. */
  comparison: PairedComparison;
}

function outcomes(rows: Iterable<JobRow>): Array<boolean | null> {
  const out: Array<boolean | null> = [];
  for (const row of rows) out[row.index] = row.status === 'done' && row.correct !== null ? row.correct : null;
  return out;
}

/** The paired comparison of two jobs; one UserError line when they share no data file or no scored row. */
export function diffJobs(first: JobInfo, second: JobInfo, rowsOf: (id: string) => Iterable<JobRow>): JobDiff {
  if (first.id === second.id) throw new UserError(`give two different jobs (both are ${first.id})`, 'bad_option');
  if (first.dataset.fingerprint !== second.dataset.fingerprint) {
    throw new UserError(`jobs ${first.id} and ${second.id} share no rows: they ran on different data (${first.dataset.path}, ${second.dataset.path})`, 'no_shared_rows');
  }
  const comparison = comparePaired([outcomes(rowsOf(first.id))], [outcomes(rowsOf(second.id))], { seed: seedOf(first.id, second.id) });
  if (!comparison || comparison.rows === 0) throw new UserError(`jobs ${first.id} and ${second.id} share no rows both scored (finished, with gold)`, 'no_shared_rows');
  return { first, second, comparison };
}
