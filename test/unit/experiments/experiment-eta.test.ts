// An experiment's time left comes from its running job's ETA (the job's own estimator), each job
// still to run as long as the running one in all.
import { describe, expect, it } from 'vitest';
import { experimentEta } from '../../../electron/experiments/experiment-eta';

describe('experimentEta', () => {
  it('adds the jobs still to run, each as long as the running job in all, to its time left', () => {
    // 30 s run, 30 s left, two jobs after it: 30 + 2 × 60.
    expect(experimentEta({ etaSeconds: 30, etaRange: { min: 30, max: 30 }, elapsedSeconds: 30, jobsAfter: 2 })).toEqual({ etaSeconds: 150, etaRange: { min: 150, max: 150 } });
    // The last job: its own time left.
    expect(experimentEta({ etaSeconds: 12, etaRange: { min: 12, max: 12 }, elapsedSeconds: 100, jobsAfter: 0 }).etaSeconds).toBe(12);
  });

  it('is a range while the job’s rate is not stable, and nothing before the job can say', () => {
    const r = experimentEta({ etaSeconds: null, etaRange: { min: 10, max: 40 }, elapsedSeconds: 20, jobsAfter: 1 });
    expect(r).toEqual({ etaSeconds: null, etaRange: { min: 10 + 30, max: 40 + 60 } });
    expect(experimentEta({ etaSeconds: null, etaRange: null, elapsedSeconds: 5, jobsAfter: 3 })).toEqual({ etaSeconds: null, etaRange: null });
  });
});
