// What difference a run's rows can tell apart before it is paid for (docs/method.md §16): the
// smallest difference between two pairings McNemar's test detects at 80 % power on these rows, and
// the rows a given difference needs, from how often two pairings disagree: measured between the two
// latest finished jobs on the same data file where there are two, from the accuracy of one
// (independent errors) where there is one, else the stated assumption.
import { resolve } from 'node:path';
import type { PlanPower } from '../common/plan';
import { ASSUMED_DISAGREEMENT, detectableDifference, independentDisagreement, pairedTable } from '../common/stats';
import type { JobStore } from './store';

/** The disagreement to plan with, and where it comes from in words. */
export function planDisagreement(store: JobStore, dataPath: string): { disagreement: number; basis: string } {
  const path = resolve(dataPath);
  const jobs = store
    .listJobs()
    .filter((j) => resolve(j.dataset.path) === path && j.rowsWithGold > 0 && j.status === 'done')
    .sort((a, b) => Date.parse(b.updated) - Date.parse(a.updated));
  if (jobs.length >= 2) {
    const t = pairedTable(store.outcomes(jobs[0]!.id), store.outcomes(jobs[1]!.id));
    const n = t.both + t.onlyFirst + t.onlySecond + t.neither;
    const measured = n > 0 ? (t.onlyFirst + t.onlySecond) / n : 0;
    // Two jobs that never disagreed tell nothing to plan with (the same settings twice): the assumption stands.
    if (n > 0 && measured > 0) return { disagreement: measured, basis: `measured between jobs ${jobs[0]!.id} and ${jobs[1]!.id} on this file (${n} rows both scored)` };
  }
  if (jobs.length >= 1) {
    const p = jobs[0]!.rowsCorrect / jobs[0]!.rowsWithGold;
    const d = independentDisagreement(p);
    if (d > 0) return { disagreement: d, basis: `from job ${jobs[0]!.id}'s accuracy on this file (${(100 * p).toFixed(1)} %), errors taken as independent` };
  }
  return { disagreement: ASSUMED_DISAGREEMENT, basis: `assumed: two pairings disagree on ${100 * ASSUMED_DISAGREEMENT} % of rows (no job on this file yet)` };
}

/** The power line of a plan: its rows and the difference they detect. */
export function planPower(store: JobStore, dataPath: string, rows: number): PlanPower {
  const { disagreement, basis } = planDisagreement(store, dataPath);
  return { rows, disagreement, basis, detectable: detectableDifference(rows, disagreement) };
}
