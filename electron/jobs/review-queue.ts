// The review queue: a job's finished rows in the order worth a person's time, a page at a time,
// read from the database as the rows table is (a 100,000-row job opens without reading every
// row). The confidence orders walk the queue index (job_rows_queue: status, confidence, index,
// TATRA's label, whether it matched gold, runs made) and stop at the page's end; each page names
// where the next one starts (a cursor, not an offset, so rows decided meanwhile shift nothing).
//   - uncertain: lowest confidence first (the winner's share of the vote);
//   - disagree: TATRA's label is not the file's gold, most confident first: the rows most likely
//     to be gold errors rather than TATRA's;
//   - early: rows whose vote stopped before r runs (the early-stop rule), least confident first;
//   - audit: a uniform random order of all rows, fixed per job (a seeded shuffle): its first rows
//     reviewed are a random sample, from which review-report.ts estimates TATRA's accuracy. It
//     takes no filter, which would make it a sample of something else.
import type Database from 'better-sqlite3';
import { UserError } from '../common/errors';
import { seededRandom } from '../engine/rng';
import type { ReviewDecision, ReviewStore } from './review-store';
import type { StoredRun } from './run-texts';
import { unpackText } from './stored-text';
import type { JobInfo, RowStatus } from './types';

export type ReviewOrder = 'uncertain' | 'disagree' | 'early' | 'audit';

/** Where a page ends: the sort key (confidence, or the audit position) and the row's index. */
export interface QueueCursor {
  key: number;
  index: number;
}

export interface QueueQuery {
  order: ReviewOrder;
  /** Only rows TATRA gave this label. */
  label?: string | undefined;
  minConfidence?: number | undefined;
  maxConfidence?: number | undefined;
  /** open: rows not decided yet; decided: rows decided (skips included); all. */
  show: 'open' | 'decided' | 'all';
  after?: QueueCursor | null | undefined;
  limit: number;
  /** Also count the rows the query matches (a page's first). */
  withTotal?: boolean | undefined;
}

export interface QueueRow {
  index: number;
  line: number;
  input: string;
  status: RowStatus;
  gold: string | null;
  prediction: string | null;
  correct: boolean | null;
  confidence: number;
  votes: Record<string, number>;
  /** Each run's votes: what every run said on its own. */
  runVotes: Array<{ run: number; votes: Record<string, number> }>;
  decision: ReviewDecision | null;
  key: number;
}

export interface QueuePage {
  rows: QueueRow[];
  /** Where the next page starts; null: this was the last. */
  next: QueueCursor | null;
  /** Rows the query matches, when asked for. */
  total: number | null;
}

/** The audit order's rows checked at a time: a page rarely needs a second batch. */
const AUDIT_BATCH = 1024;

/** The audit order of a job of `size` rows: a shuffle seeded by the job's id, the same in every process. */
const auditOrders = new Map<string, Uint32Array>();
export function auditOrder(jobId: string, size: number): Uint32Array {
  const key = `${jobId}:${size}`;
  let order = auditOrders.get(key);
  if (!order) {
    let seed = 2166136261;
    for (const ch of jobId) seed = Math.imul(seed ^ ch.charCodeAt(0), 16777619) >>> 0;
    const rand = seededRandom(seed);
    order = new Uint32Array(size);
    for (let i = 0; i < size; i++) order[i] = i;
    for (let i = size - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      const t = order[i]!;
      order[i] = order[j]!;
      order[j] = t;
    }
    if (auditOrders.size > 16) auditOrders.clear();
    auditOrders.set(key, order);
  }
  return order;
}

const DECIDED = `EXISTS (SELECT 1 FROM review_decisions d WHERE d.job_id = r.job_id AND d.idx = r.idx)`;

function showClause(show: QueueQuery['show']): string | null {
  return show === 'open' ? `NOT ${DECIDED}` : show === 'decided' ? DECIDED : null;
}

/** The confidence orders: their WHERE, ORDER BY and cursor condition. */
function confidenceQuery(job: JobInfo, q: QueueQuery): { where: string[]; params: Record<string, unknown>; order: string; after: string } {
  const where = [`r.job_id = @job`, `r.status = 'done'`];
  const params: Record<string, unknown> = { job: job.id };
  if (q.label !== undefined) {
    where.push(`r.prediction = @label`);
    params.label = q.label;
  }
  if (q.minConfidence !== undefined) {
    where.push(`r.confidence >= @min`);
    params.min = q.minConfidence;
  }
  if (q.maxConfidence !== undefined) {
    where.push(`r.confidence <= @max`);
    params.max = q.maxConfidence;
  }
  if (q.order === 'disagree') where.push(`r.correct = 0`);
  if (q.order === 'early') {
    where.push(`r.runs_done < @r`);
    params.r = job.settings.r;
  }
  const show = showClause(q.show);
  if (show) where.push(show);
  const desc = q.order === 'disagree';
  return {
    where,
    params,
    order: desc ? `r.confidence DESC, r.idx DESC` : `r.confidence, r.idx`,
    after: desc ? `(r.confidence, r.idx) < (@afterKey, @afterIndex)` : `(r.confidence, r.idx) > (@afterKey, @afterIndex)`,
  };
}

function confidencePage(db: Database.Database, job: JobInfo, q: QueueQuery): { keys: Array<{ index: number; key: number }>; total: number | null } {
  const { where, params, order, after } = confidenceQuery(job, q);
  const total = q.withTotal ? (db.prepare(`SELECT COUNT(*) AS n FROM job_rows r INDEXED BY job_rows_queue WHERE ${where.join(' AND ')}`).get(params) as { n: number }).n : null;
  const paged = q.after ? [...where, after] : where;
  const rows = db
    .prepare(`SELECT r.idx AS "index", r.confidence AS key FROM job_rows r INDEXED BY job_rows_queue WHERE ${paged.join(' AND ')} ORDER BY ${order} LIMIT @limit`)
    .all({ ...params, limit: q.limit, ...(q.after ? { afterKey: q.after.key, afterIndex: q.after.index } : {}) }) as Array<{ index: number; key: number }>;
  return { keys: rows, total };
}

function auditPage(db: Database.Database, job: JobInfo, q: QueueQuery): { keys: Array<{ index: number; key: number }>; total: number | null } {
  if (q.label !== undefined || q.minConfidence !== undefined || q.maxConfidence !== undefined) {
    throw new UserError('the audit order takes no filter: its rows are a random sample of every row', 'bad_option');
  }
  const order = auditOrder(job.id, job.rowsTotal);
  const show = showClause(q.show);
  const check = db.prepare(`SELECT r.idx FROM job_rows r WHERE r.job_id = ? AND r.status = 'done' AND r.idx IN (SELECT value FROM json_each(?))${show ? ` AND ${show}` : ''}`);
  const keys: Array<{ index: number; key: number }> = [];
  for (let from = q.after ? q.after.key + 1 : 0; from < order.length && keys.length < q.limit; from += AUDIT_BATCH) {
    const batch = Array.from(order.subarray(from, from + AUDIT_BATCH));
    const ok = new Set((check.all(job.id, JSON.stringify(batch)) as { idx: number }[]).map((r) => r.idx));
    for (let i = 0; i < batch.length && keys.length < q.limit; i++) if (ok.has(batch[i]!)) keys.push({ index: batch[i]!, key: from + i });
  }
  const total = q.withTotal
    ? (db.prepare(`SELECT COUNT(*) AS n FROM job_rows r INDEXED BY job_rows_queue WHERE r.job_id = ? AND r.status = 'done'${show ? ` AND ${show}` : ''}`).get(job.id) as { n: number }).n
    : null;
  return { keys, total };
}

interface QueueDbRow {
  idx: number;
  line: number;
  input: string;
  status: RowStatus;
  gold: string | null;
  prediction: string | null;
  correct: number | null;
  confidence: number | null;
  votes_json: string | null;
  runs_json: string | Buffer | null;
}

/** Each run's votes from a row's stored runs (their predictions; paraphrases are not read). */
function runVotes(runs: string | Buffer | null): QueueRow['runVotes'] {
  const text = unpackText(runs);
  if (text === null) return [];
  return (JSON.parse(text) as StoredRun[]).map((run) => {
    const votes: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const p of run.predictions) if (p.label !== null) votes[p.label] = (Object.hasOwn(votes, p.label) ? votes[p.label]! : 0) + 1;
    return { run: run.run, votes };
  });
}

/** A page of the queue: the rows in order, with their votes by run and their decisions now. */
export function queuePage(db: Database.Database, reviews: ReviewStore, job: JobInfo, q: QueueQuery): QueuePage {
  const { keys, total } = q.order === 'audit' ? auditPage(db, job, q) : confidencePage(db, job, q);
  const indexes = keys.map((k) => k.index);
  const stored = db
    .prepare(`SELECT idx, line, input, status, gold, prediction, correct, confidence, votes_json, runs_json FROM job_rows WHERE job_id = ? AND idx IN (SELECT value FROM json_each(?))`)
    .all(job.id, JSON.stringify(indexes)) as QueueDbRow[];
  const byIndex = new Map(stored.map((r) => [r.idx, r]));
  const decisions = reviews.decisionsOf(job.id, indexes);
  const rows = keys.map(({ index, key }): QueueRow => {
    const r = byIndex.get(index)!;
    return {
      index,
      line: r.line,
      input: r.input,
      status: r.status,
      gold: r.gold,
      prediction: r.prediction,
      correct: r.correct === null ? null : r.correct !== 0,
      confidence: r.confidence ?? 0,
      votes: r.votes_json ? (JSON.parse(r.votes_json) as Record<string, number>) : {},
      runVotes: runVotes(r.runs_json),
      decision: decisions.get(index) ?? null,
      key,
    };
  });
  const last = keys.at(-1);
  return { rows, next: keys.length === q.limit && last ? { key: last.key, index: last.index } : null, total };
}
