// What a person's review gives back (docs/method.md §17):
//   - on a file without gold, the audit sample (rows reviewed in the audit order, a uniform random
//     sample: review-queue.ts) estimates TATRA's accuracy on every row, overall and for each label
//     TATRA gave, with a 95 % Wilson interval;
//   - on a labelled file, the rows where the person's label differs from the file's gold are gold
//     corrections, kept apart from both (review-store.ts): the metrics with the corrected gold are
//     the job's metric counts with those rows counted again (metric-counts.ts), a cost in the
//     corrections, not the rows;
//   - the triage plan: "accept TATRA where its confidence is at least c, review the rest", for
//     each c the rows left to review and the expected accuracy of the rows accepted, from gold
//     where the file has it, else from the audit sample.
import type Database from 'better-sqlite3';
import type { Interval } from '../common/contract/interval';
import { wilson } from '../common/stats';
import type { TaskDefinition } from '../common/task';
import { countRow, parseCounts, serializeCounts, type MetricCounts } from './metric-counts';
import type { JobInfo, JobRow } from './types';

export interface AuditEstimate {
  /** Audit rows the person labelled, and of those, the ones where TATRA's label was theirs. */
  reviewed: number;
  agreed: number;
  /** TATRA's accuracy on every row, estimated from the sample; null before the first. */
  accuracy: Interval | null;
  /** For each label TATRA gave: how often it was right when it gave it (its precision). */
  perLabel: Array<{ label: string; reviewed: number; agreed: number; accuracy: Interval | null }>;
}

export interface TriageStep {
  /** Accept TATRA's label where its confidence is at least this. */
  threshold: number;
  /** Finished rows accepted so. */
  accepted: number;
  /** Finished rows below it a person has not labelled yet. */
  toReview: number;
  /** Expected accuracy of the accepted rows; null where nothing tells (no gold, no audit row at or above it). */
  accuracy: Interval | null;
}

export interface TriagePlan {
  /** What the expected accuracies rest on: the file's gold, the audit sample, or nothing yet. */
  basis: 'gold' | 'audit' | 'none';
  steps: TriageStep[];
}

interface DecidedRow {
  label: string;
  prediction: string | null;
  confidence: number | null;
  queue: string;
}

function decidedRows(db: Database.Database, jobId: string): DecidedRow[] {
  return db
    .prepare(
      `SELECT d.label, r.prediction, r.confidence, d.queue FROM review_decisions d JOIN job_rows r ON r.job_id = d.job_id AND r.idx = d.idx
       WHERE d.job_id = ? AND d.label IS NOT NULL AND r.status = 'done'`,
    )
    .all(jobId) as DecidedRow[];
}

export function auditEstimate(db: Database.Database, job: JobInfo): AuditEstimate {
  const audit = decidedRows(db, job.id).filter((d) => d.queue === 'audit');
  const agreed = audit.filter((d) => d.label === d.prediction).length;
  const labels = job.task.kind === 'math' ? [...new Set(audit.map((d) => d.prediction ?? ''))] : job.task.labels.map((l) => l.name);
  return {
    reviewed: audit.length,
    agreed,
    accuracy: wilson(agreed, audit.length),
    perLabel: labels.map((label) => {
      const gave = audit.filter((d) => d.prediction === label);
      const right = gave.filter((d) => d.label === label).length;
      return { label, reviewed: gave.length, agreed: right, accuracy: wilson(right, gave.length) };
    }),
  };
}

/** Thresholds worth offering: each distinct confidence (what changes the rows accepted), at most about 20. */
function thresholds(shares: ReadonlyMap<number, number>): number[] {
  const distinct = [...shares.keys()].sort((a, b) => a - b);
  if (distinct.length <= 21) return distinct;
  return Array.from({ length: 21 }, (_, i) => i / 20);
}

export function triagePlan(db: Database.Database, job: JobInfo, counts: MetricCounts): TriagePlan {
  const decided = decidedRows(db, job.id);
  const audit = decided.filter((d) => d.queue === 'audit');
  const basis = counts.evaluated > 0 ? 'gold' : audit.length > 0 ? 'audit' : 'none';
  const steps = thresholds(counts.shares).map((c): TriageStep => {
    let accepted = 0;
    for (const [confidence, n] of counts.shares) if (confidence >= c) accepted += n;
    const reviewedBelow = decided.filter((d) => (d.confidence ?? 0) < c).length;
    let accuracy: Interval | null = null;
    if (basis === 'gold') {
      let n = 0;
      let right = 0;
      for (const [confidence, [rows, correct]] of counts.scored) {
        if (confidence < c) continue;
        n += rows;
        right += correct;
      }
      accuracy = wilson(right, n);
    } else if (basis === 'audit') {
      const above = audit.filter((d) => (d.confidence ?? 0) >= c);
      accuracy = wilson(above.filter((d) => d.label === d.prediction).length, above.length);
    }
    return { threshold: c, accepted, toReview: counts.rowsDone - accepted - reviewedBelow, accuracy };
  });
  return { basis, steps };
}

/** Rows whose gold the person corrected: labelled with something other than the file's gold. */
export function goldCorrections(db: Database.Database, jobId: string): Array<{ index: number; label: string }> {
  return db
    .prepare(
      `SELECT d.idx AS "index", d.label FROM review_decisions d JOIN job_rows r ON r.job_id = d.job_id AND r.idx = d.idx
       WHERE d.job_id = ? AND d.label IS NOT NULL AND r.gold IS NOT NULL AND d.label != r.gold ORDER BY d.idx`,
    )
    .all(jobId) as Array<{ index: number; label: string }>;
}

/** The counts with each corrected row scored against the person's label instead of the file's gold. */
export function correctedCounts(task: TaskDefinition, counts: MetricCounts, corrections: ReadonlyArray<{ label: string; row: JobRow }>): MetricCounts {
  const after = parseCounts(serializeCounts(counts));
  for (const { label, row } of corrections) {
    countRow(after, task, row, -1);
    countRow(after, task, { ...row, gold: label });
  }
  return after;
}
