// An experiment's time left from its running job's: the job's own ETA (jobs/row-progress.ts, over
// its calls weighted by what they cost, a range while its rate is not stable), and each job still
// to run taken to last as long as the running one will in all (they classify the same rows). One
// way to say the time left: an experiment's rate of rows, measured across jobs of other settings
// and other cached work, was another estimator that missed where the job's did not.
// Pure: numbers in, numbers out.

/** The running job's time left as its progress says it (seconds), how long it has run (seconds), and the jobs still to run after it. */
export interface RunningJobEta {
  etaSeconds: number | null;
  etaRange: { min: number; max: number } | null;
  elapsedSeconds: number;
  jobsAfter: number;
}

/**
 * The experiment's time left: a point where the job has one, else a range where the job has one
 * (both null until the job's rate is known).
 */
export function experimentEta(job: RunningJobEta): { etaSeconds: number | null; etaRange: { min: number; max: number } | null } {
  const after = Math.max(0, job.jobsAfter);
  const total = (left: number) => left + after * (job.elapsedSeconds + left);
  if (job.etaSeconds !== null) {
    const point = total(job.etaSeconds);
    return { etaSeconds: point, etaRange: { min: point, max: point } };
  }
  if (job.etaRange) return { etaSeconds: null, etaRange: { min: total(job.etaRange.min), max: total(job.etaRange.max) } };
  return { etaSeconds: null, etaRange: null };
}
