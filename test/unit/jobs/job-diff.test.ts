// `tatra jobs diff A B` (docs/method.md §16): two jobs on the same data file, compared on the rows
// both scored, against a count by hand from their rows; jobs that share no rows are refused in one line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJobStore } from '../../../electron/jobs';
import { diffJobs } from '../../../electron/jobs/job-diff';
import { signTestExact } from '../../../electron/common/stats';
import { runScriptedJob } from '../../helpers/scripted-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('jobs diff', () => {
  it('compares two jobs on the rows both scored, as counted by hand', async () => {
    const store = openJobStore(join(dir, 'db'));
    try {
      const a = await runScriptedJob(store, { rows: 40, dir, settings: { n: 3, k: 2, r: 3, seed: 3, scope: 'run' } });
      const b = await runScriptedJob(store, { rows: 40, dir, settings: { n: 1, k: 2, r: 1, seed: 5, scope: 'run' } });
      const rows = (id: string) => [...store.iterateRows(id)];
      const right = new Map(rows(b.id).map((r) => [r.index, r.correct]));
      let onlyFirst = 0;
      let onlySecond = 0;
      for (const r of rows(a.id)) {
        if (r.correct && right.get(r.index) === false) onlyFirst++;
        if (r.correct === false && right.get(r.index)) onlySecond++;
      }
      const d = diffJobs(a.manager.get(a.id), a.manager.get(b.id), (id) => store.iterateRows(id));
      expect(d.comparison).toMatchObject({ rows: 40, firstBetter: onlyFirst, secondBetter: onlySecond, test: 'mcnemar-exact' });
      expect(d.comparison.pValue).toBeCloseTo(signTestExact(onlyFirst, onlySecond), 12);
      expect(d.comparison.difference.estimate).toBeCloseTo((onlyFirst - onlySecond) / 40, 12);
      expect(onlyFirst + onlySecond).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });

  it('refuses, in one line, jobs that ran on different data', async () => {
    const store = openJobStore(join(dir, 'db2'));
    try {
      const a = await runScriptedJob(store, { rows: 20, dir });
      const b = await runScriptedJob(store, { rows: 30, dir });
      expect(() => diffJobs(a.manager.get(a.id), a.manager.get(b.id), (id) => store.iterateRows(id))).toThrow(/^jobs \S+ and \S+ share no rows: they ran on different data \(.*\)$/);
    } finally {
      store.close();
    }
  });
});
