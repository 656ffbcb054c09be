// A job's rows as a race reads them (experiments/race.ts): which are finished and whether each was
// right, without the rows' texts and votes (a race reads every cell's rows after every round).
import type { JobStore } from './store';

export interface RowOutcome {
  index: number;
  /** Done or failed: a round that holds it has run it. */
  finished: boolean;
  /** Right (true) or wrong; null without a gold label or a result. */
  correct: boolean | null;
}

export function rowOutcomes(store: JobStore, jobId: string): RowOutcome[] {
  const rows = store.db.prepare(`SELECT idx, status, correct FROM job_rows WHERE job_id = ? ORDER BY idx`).all(jobId) as { idx: number; status: string; correct: number | null }[];
  return rows.map((r) => ({ index: r.idx, finished: r.status !== 'pending', correct: r.status === 'done' && r.correct !== null ? r.correct === 1 : null }));
}
