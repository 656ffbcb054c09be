// A person's review of a job (jobs/review*.ts) on a real job database: decisions, undo and history;
// the queue's orders, filters and pages; what review gives back (the audit estimate against
// values by hand, the triage plan, the metrics after gold corrections); decisions imported all or
// none; the labelled data set exported with the file's own columns.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseCsv } from 'csv-parse/sync';
import { JobReview, openJobStore, type JobStore, type QueueQuery, type QueueRow } from '../../../electron/jobs';
import { wilson } from '../../../electron/common/stats';
import { auditOrder } from '../../../electron/jobs/review-queue';
import { runScriptedJob } from '../../helpers/scripted-job';
import { UNDO_V12 } from '../../helpers/stored-job';

const dir = mkdtempSync(join(tmpdir(), 'tatra-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function reviewed(opts: Omit<Parameters<typeof runScriptedJob>[1], 'dir'>): Promise<{ store: JobStore; review: JobReview; id: string }> {
  const store = openJobStore(join(dir, `d${n++}`));
  const { id } = await runScriptedJob(store, { ...opts, dir });
  return { store, review: new JobReview(store), id };
}

/** Every row of a queue, page by page (its cursor), and whether each page said where the next starts. */
function walk(review: JobReview, id: string, q: Omit<QueueQuery, 'limit' | 'after'>, limit = 7): QueueRow[] {
  const rows: QueueRow[] = [];
  let after: QueueQuery['after'] = null;
  for (;;) {
    const page = review.queue(id, { ...q, limit, after });
    rows.push(...page.rows);
    if (!page.next) return rows;
    after = page.next;
  }
}

describe('decisions', () => {
  it('each is kept with what it replaced and when; undo goes back one decision at a time; a retry is one decision', async () => {
    const { store, review, id } = await reviewed({ rows: 6 });
    try {
      const tatra = store.row(id, 2)!.prediction!;
      const other = tatra === 'positive' ? 'negative' : 'positive';
      const first = review.decide(id, { index: 2, label: other, queue: 'uncertain', clientId: 'a' });
      expect(first.decision).toMatchObject({ index: 2, label: other, queue: 'uncertain' });
      expect(first.progress).toMatchObject({ rowsDone: 6, reviewed: 1, agreed: 0, changed: 1, skipped: 0 });
      // Sent again (its answer lost): the same one decision.
      expect(review.decide(id, { index: 2, label: other, queue: 'uncertain', clientId: 'a' }).decision.logId).toBe(first.decision.logId);
      const second = review.decide(id, { index: 2, label: tatra, queue: 'uncertain', clientId: 'b' });
      // Still the one it was, though the row was decided again since.
      expect(review.decide(id, { index: 2, label: other, queue: 'uncertain', clientId: 'a' }).decision).toEqual(first.decision);
      review.decide(id, { index: 3, label: null, queue: 'uncertain' });
      expect(review.decide(id, { index: 4, label: store.row(id, 4)!.prediction, queue: 'audit' }).progress).toMatchObject({ reviewed: 2, agreed: 2, changed: 0, skipped: 1 });
      // Only the latest decision of a row can be undone.
      expect(() => review.undo(id, first.decision.logId)).toThrow(/decided again after that decision/);
      expect(review.undo(id, second.decision.logId)).toMatchObject({ index: 2, decision: { label: other, logId: first.decision.logId } });
      expect(review.undo(id, first.decision.logId)).toMatchObject({ index: 2, decision: null });
      expect(() => review.undo(id, first.decision.logId)).toThrow(/was undone/);
      expect(review.history(id, 2).map((h) => [h.action, h.label, h.replaced, h.undone])).toEqual([
        ['label', other, tatra, true],
        ['label', tatra, other, true],
        ['undo', other, tatra, false],
        ['undo', null, other, false],
      ]);
      expect(() => review.decide(id, { index: 99, label: tatra, queue: 'row' })).toThrow(/has no row 99/);
      expect(() => review.decide(id, { index: 1, label: 'maybe', queue: 'row' })).toThrow(/"maybe" is not a label of task sst2/);
    } finally {
      store.close();
    }
  });
});

describe('the queue', () => {
  it('uncertain: lowest confidence first, paged by cursor, every open row once; filters by label and confidence', async () => {
    const { store, review, id } = await reviewed({ rows: 40 });
    try {
      const all = walk(review, id, { order: 'uncertain', show: 'open' });
      expect(all.map((r) => r.index).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      const keys = all.map((r) => [r.confidence, r.index] as const);
      expect(keys).toEqual([...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
      expect(new Set(all.map((r) => r.confidence)).size).toBeGreaterThan(2);
      // Each run's votes add up to the row's.
      for (const r of all) {
        const sum: Record<string, number> = {};
        for (const run of r.runVotes) for (const [l, v] of Object.entries(run.votes)) sum[l] = (sum[l] ?? 0) + v;
        expect(Object.fromEntries(Object.entries(r.votes).filter(([, v]) => v > 0))).toEqual(sum);
      }
      // A decided row leaves the open queue, and shows in the decided one with its decision.
      review.decide(id, { index: all[0]!.index, label: 'positive', queue: 'uncertain' });
      expect(review.queue(id, { order: 'uncertain', show: 'open', limit: 100, withTotal: true }).total).toBe(39);
      expect(review.queue(id, { order: 'uncertain', show: 'decided', limit: 100 }).rows.map((r) => [r.index, r.decision?.label])).toEqual([[all[0]!.index, 'positive']]);
      const positives = walk(review, id, { order: 'uncertain', show: 'all', label: 'positive', minConfidence: 0.6, maxConfidence: 0.9 });
      expect(positives.length).toBeGreaterThan(0);
      expect(positives.every((r) => r.prediction === 'positive' && r.confidence >= 0.6 && r.confidence <= 0.9)).toBe(true);
      expect(positives).toHaveLength(all.filter((r) => r.prediction === 'positive' && r.confidence >= 0.6 && r.confidence <= 0.9).length);
    } finally {
      store.close();
    }
  });

  it('disagree: rows whose label is not gold, most confident first; early: rows whose vote stopped before r runs', async () => {
    const { store, review, id } = await reviewed({ rows: 30, settings: { n: 2, k: 2, r: 4, seed: 3, scope: 'run', earlyStop: true } });
    try {
      const wrong = walk(review, id, { order: 'disagree', show: 'open' });
      const stored = [...store.iterateRows(id)];
      expect(wrong.map((r) => r.index).sort((a, b) => a - b)).toEqual(stored.filter((r) => r.correct === false).map((r) => r.index));
      const keys = wrong.map((r) => [r.confidence, r.index] as const);
      expect(keys).toEqual([...keys].sort((a, b) => b[0] - a[0] || b[1] - a[1]));
      const early = walk(review, id, { order: 'early', show: 'open' });
      const stopped = stored.filter((r) => r.runs!.length < 4).map((r) => r.index);
      expect(stopped.length).toBeGreaterThan(0);
      expect(early.map((r) => r.index).sort((a, b) => a - b)).toEqual(stopped);
      // A job from before v12 (no runs counted): the migration counts them from the stored runs.
      store.db.exec(UNDO_V12);
      store.db.pragma('user_version = 11');
      store.close();
      const again = openJobStore(store.path.replace(/[\\/]tatra\.db$/, ''));
      try {
        expect(walk(new JobReview(again), id, { order: 'early', show: 'open' }).map((r) => r.index).sort((a, b) => a - b)).toEqual(stopped);
      } finally {
        again.close();
      }
    } finally {
      store.close();
    }
  });

  it('audit: one random order of every row, the same in every process, taking no filter', async () => {
    const { store, review, id } = await reviewed({ rows: 50 });
    try {
      const rows = walk(review, id, { order: 'audit', show: 'open' }, 9).map((r) => r.index);
      expect([...rows].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      expect(rows).not.toEqual([...rows].sort((a, b) => a - b));
      expect(rows).toEqual(Array.from(auditOrder(id, 50)));
      expect(() => review.queue(id, { order: 'audit', show: 'open', limit: 5, label: 'positive' })).toThrow(/takes no filter/);
    } finally {
      store.close();
    }
  });
});

describe('what review gives back', () => {
  it('an unlabelled file: the audit sample estimates accuracy, overall and per label, with Wilson intervals; the triage plan counts from it', async () => {
    const { store, review, id } = await reviewed({ rows: 40, unlabelled: true });
    try {
      const audit = review.queue(id, { order: 'audit', show: 'open', limit: 12 }).rows;
      // The person agrees with TATRA on the first 9 and corrects 3.
      audit.forEach((r, i) => review.decide(id, { index: r.index, label: i < 9 ? r.prediction : r.prediction === 'positive' ? 'negative' : 'positive', queue: 'audit' }));
      // A row reviewed from another order is not part of the sample.
      const other = review.queue(id, { order: 'uncertain', show: 'open', limit: 1 }).rows[0]!;
      review.decide(id, { index: other.index, label: other.prediction, queue: 'uncertain' });
      const s = review.summary(id);
      expect(s.audit).toMatchObject({ reviewed: 12, agreed: 9 });
      // Wilson at 9/12, z = 1.96: centre (0.75 + 1.92/12)/(1 + 3.8416/12) = 0.6898, half 0.2493.
      expect(s.audit.accuracy!.estimate).toBeCloseTo(0.75, 10);
      expect(s.audit.accuracy!.low).toBeCloseTo(0.4677, 3);
      expect(s.audit.accuracy!.high).toBeCloseTo(0.9111, 3);
      const byLabel = s.audit.perLabel.map((l) => [l.label, l.reviewed]);
      expect(byLabel.reduce((a, [, n]) => a + (n as number), 0)).toBe(12);
      expect(s.triage.basis).toBe('audit');
      // The lowest threshold accepts every row; each step accepts fewer, leaves more to review.
      const steps = s.triage.steps;
      expect(steps[0]).toMatchObject({ accepted: 40, toReview: 0 });
      for (let i = 1; i < steps.length; i++) {
        expect(steps[i]!.accepted).toBeLessThan(steps[i - 1]!.accepted);
        expect(steps[i]!.toReview + steps[i]!.accepted).toBeLessThanOrEqual(40);
      }
      expect(steps[0]!.accuracy).toEqual(wilson(9, 12));
    } finally {
      store.close();
    }
  });

  it('a labelled file: corrections of gold are kept apart, and the metrics are read before and after them', async () => {
    const { store, review, id } = await reviewed({ rows: 24 });
    try {
      const rows = [...store.iterateRows(id)];
      const wrong = rows.filter((r) => r.correct === false);
      const right = rows.filter((r) => r.correct === true);
      expect(wrong.length).toBeGreaterThan(2);
      // The person sides with TATRA on two rows it got "wrong" (gold corrected), and against it on one it got right.
      review.decide(id, { index: wrong[0]!.index, label: wrong[0]!.prediction, queue: 'disagree' });
      review.decide(id, { index: wrong[1]!.index, label: wrong[1]!.prediction, queue: 'disagree' });
      review.decide(id, { index: right[0]!.index, label: right[0]!.gold === 'positive' ? 'negative' : 'positive', queue: 'uncertain' });
      // One that agrees with gold is no correction.
      review.decide(id, { index: right[1]!.index, label: right[1]!.gold, queue: 'uncertain' });
      const m = review.metrics(id);
      expect(m.corrections).toBe(3);
      expect(m.before.correct).toBe(right.length);
      expect(m.after.correct).toBe(right.length + 2 - 1);
      expect(m.after.evaluated).toBe(24);
      // TATRA's answers and the file's gold are as they were.
      expect([...store.iterateRows(id)].map((r) => [r.gold, r.prediction])).toEqual(rows.map((r) => [r.gold, r.prediction]));
      expect(review.summary(id)).toMatchObject({ corrections: 3, triage: { basis: 'gold' } });
    } finally {
      store.close();
    }
  });
});

describe('import and final export', () => {
  it('imports a file of decisions all at once; a bad one is one line and imports nothing', async () => {
    const { store, review, id } = await reviewed({ rows: 10 });
    try {
      const file = (name: string, text: string) => {
        const p = join(dir, name);
        writeFileSync(p, text);
        return p;
      };
      await expect(review.importFile(id, file('bad-label.csv', 'index,label\n0,positive\n1,Negative\n2,posative\n'))).rejects.toThrow(
        'bad-label.csv: line 4: "posative" is not a label of task sst2 (negative, positive); nothing was imported',
      );
      await expect(review.importFile(id, file('bad-row.csv', 'index,label\n0,positive\n10,negative\n'))).rejects.toThrow(/line 3: "10" is not a row of job .* \(its rows are 0 to 9\); nothing was imported/);
      await expect(review.importFile(id, file('twice.jsonl', '{"index":1,"label":"positive"}\n{"index":1,"label":"negative"}\n'))).rejects.toThrow(/line 2: row 1 was already given a label on line 1/);
      await expect(review.importFile(id, file('cols.csv', 'row,label\n1,positive\n'))).rejects.toThrow(/needs the columns "index"/);
      expect(review.summary(id).progress.reviewed).toBe(0);
      const ok = await review.importFile(id, file('ok.csv', 'index,label,note\n0,positive,x\n1,Negative,y\n5,negative,z\n'));
      expect(ok).toMatchObject({ recorded: 3, unchanged: 0, progress: { reviewed: 3 } });
      expect(review.history(id, 1)).toMatchObject([{ action: 'label', label: 'negative', queue: 'import' }]);
      // Again: nothing new to record.
      expect(await review.importFile(id, file('ok.csv', 'index,label,note\n0,positive,x\n1,Negative,y\n5,negative,z\n'))).toMatchObject({ recorded: 0, unchanged: 3 });
    } finally {
      store.close();
    }
  });

  it('exports the labelled data set: the file columns as they were, the final label and its source, confidence and votes', async () => {
    const { store, review, id } = await reviewed({ rows: 8, unlabelled: true, extraColumn: true });
    try {
      const tatra1 = store.row(id, 1)!.prediction!;
      const other = tatra1 === 'positive' ? 'negative' : 'positive';
      review.decide(id, { index: 1, label: other, queue: 'uncertain' });
      review.decide(id, { index: 2, label: null, queue: 'uncertain' });
      const csv = await review.exportFinal(id, 'csv', join(dir, 'final.csv'));
      const records = parseCsv(readFileSync(csv, 'utf8'), { columns: true }) as Record<string, string>[];
      expect(Object.keys(records[0]!)).toEqual(['text', 'source', 'tatra_index', 'tatra_final_label', 'tatra_final_source', 'tatra_label', 'tatra_confidence', 'tatra_votes:negative', 'tatra_votes:positive']);
      expect(records[1]).toMatchObject({ text: 'a dull film number 1', source: 'site 1', tatra_index: '1', tatra_final_label: other, tatra_final_source: 'reviewed', tatra_label: tatra1 });
      // A skip leaves TATRA's label.
      expect(records[2]).toMatchObject({ tatra_final_source: 'tatra', tatra_final_label: store.row(id, 2)!.prediction });
      const jsonl = await review.exportFinal(id, 'jsonl', join(dir, 'final.jsonl'));
      const objects = readFileSync(jsonl, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(objects).toHaveLength(8);
      expect(objects[1]).toMatchObject({ text: 'a dull film number 1', source: 'site 1', tatra_index: 1, tatra_final_label: other, tatra_final_source: 'reviewed' });
      expect(Object.values(objects[3]!.tatra_votes as Record<string, number>).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });

  it('a labelled file: an unreviewed row keeps its gold, a reviewed one the person label', async () => {
    const { store, review, id } = await reviewed({ rows: 4 });
    try {
      review.decide(id, { index: 0, label: 'negative', queue: 'disagree' });
      const records = parseCsv(readFileSync(await review.exportFinal(id, 'csv', join(dir, 'gold.csv')), 'utf8'), { columns: true }) as Record<string, string>[];
      expect(records.map((r) => [r.label, r.tatra_final_label, r.tatra_final_source])).toEqual([
        ['positive', 'negative', 'reviewed'],
        ['negative', 'negative', 'gold'],
        ['positive', 'positive', 'gold'],
        ['negative', 'negative', 'gold'],
      ]);
    } finally {
      store.close();
    }
  });
});
