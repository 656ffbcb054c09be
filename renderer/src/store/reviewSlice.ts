// A person's review of a job on this page: the queue (a buffer of rows paged from the main process
// ahead of the one on screen, so the next row shows the moment a key is pressed), this window's
// decisions (sent in order and kept until acknowledged: reviewOps.ts), the undo stack, where
// review stands, and what other windows decide on the same job (`review.decided`).
import type { QueueCursor, ReviewOrder, ReviewProgress, ReviewRow, ReviewSummary } from '../../../electron/common/contract/review';
import { ApiCallError, getApi, messageOf } from '../api/client';
import { isTransient, loadOps, newClientId, saveOps, type DecideOp, type ReviewOp } from './reviewOps';
import { markIfMissing } from './jobsSlice';
import type { GetState, SetState, SliceCreator } from './types';

/** Rows asked for at a time; the next page is asked for while this many undecided rows are still ahead. */
const PAGE = 40;
const AHEAD = 15;
/** How long to wait before sending again what a main process that is down did not take. */
const RETRY_MS = 1500;

export interface ReviewQuery {
  order: ReviewOrder;
  /** Only rows TATRA gave this label (not for the audit order). */
  label: string | null;
  minConfidence: number | null;
  maxConfidence: number | null;
}

export interface ReviewQueue extends ReviewQuery {
  jobId: string;
  rows: ReviewRow[];
  /** The row on screen: a position in `rows`. */
  pos: number;
  next: QueueCursor | null;
  /** No page after the last one loaded. */
  exhausted: boolean;
  loading: boolean;
  /** Open rows the query matched when it was first asked. */
  total: number | null;
  error: string | null;
}

export interface ReviewSlice {
  review: ReviewQueue | null;
  reviewProgress: Record<string, ReviewProgress>;
  reviewSummary: Record<string, ReviewSummary>;
  /** This window's decisions and undos not acknowledged yet. */
  reviewUnsent: number;
  /** The main process did not answer the last send: they wait to be sent again. */
  reviewOffline: boolean;
  openReview(jobId: string, query?: Partial<ReviewQuery>): Promise<void>;
  reviewDecide(label: string | null): void;
  reviewAccept(): void;
  reviewUndo(): void;
  reviewMove(delta: number): void;
  loadReviewSummary(jobId: string): Promise<void>;
  handleReviewDecided(e: { jobId: string; index: number; decision: ReviewRow['decision']; progress: ReviewProgress }): void;
  flushReviewOps(): Promise<void>;
}

// Module state, not store state: what is sent and the acknowledgements of this window's own decisions.
let ops: ReviewOp[] = typeof localStorage === 'undefined' ? [] : loadOps();
let flushing = false;
let retry: ReturnType<typeof setTimeout> | undefined;
const logIds = new Map<string, number>();
const stack: DecideOp[] = [];

const emptyQuery = (): ReviewQuery => ({ order: 'uncertain', label: null, minConfidence: null, maxConfidence: null });

/** Rows this window decided whose decision is not acknowledged yet (a reload shows them decided, not again). */
function unsentIndexes(jobId: string): Map<number, DecideOp> {
  const out = new Map<number, DecideOp>();
  for (const op of ops) {
    if (op.kind === 'decide' && op.jobId === jobId) out.set(op.index, op);
    if (op.kind === 'undo' && op.decide.jobId === jobId) out.delete(op.decide.index);
  }
  return out;
}

function setOps(set: SetState, next: ReviewOp[]): void {
  ops = next;
  saveOps(ops);
  set({ reviewUnsent: ops.length });
}

function withRow(q: ReviewQueue, index: number, decision: ReviewRow['decision']): ReviewQueue {
  return { ...q, rows: q.rows.map((r) => (r.index === index ? { ...r, decision } : r)) };
}

/** The next row after `from` nobody has decided, or the end of the buffer. */
function nextOpen(rows: readonly ReviewRow[], from: number): number {
  let i = from + 1;
  while (i < rows.length && rows[i]!.decision !== null) i++;
  return i;
}

async function loadPage(set: SetState, get: GetState, first: boolean): Promise<void> {
  const q = get().review;
  if (!q || q.loading || (q.exhausted && !first)) return;
  set({ review: { ...q, loading: true } });
  try {
    const page = await getApi().call('review.queue', {
      jobId: q.jobId,
      order: q.order,
      ...(q.label !== null && q.order !== 'audit' ? { label: q.label } : {}),
      ...(q.minConfidence !== null && q.order !== 'audit' ? { minConfidence: q.minConfidence } : {}),
      ...(q.maxConfidence !== null && q.order !== 'audit' ? { maxConfidence: q.maxConfidence } : {}),
      after: first ? null : q.next,
      limit: PAGE,
      withTotal: first,
    });
    const now = get().review;
    // Another query was asked for meanwhile: this page belongs to the old one.
    if (!now || now.jobId !== q.jobId || now.order !== q.order || now.label !== q.label || now.minConfidence !== q.minConfidence || now.maxConfidence !== q.maxConfidence) return;
    const unsent = unsentIndexes(q.jobId);
    const have = new Set(now.rows.map((r) => r.index));
    const rows = page.rows.filter((r) => !have.has(r.index) && !unsent.has(r.index));
    set({
      review: { ...now, rows: [...now.rows, ...rows], next: page.next, exhausted: page.next === null, loading: false, error: null, ...(first ? { total: page.total } : {}) },
      reviewProgress: { ...get().reviewProgress, [q.jobId]: page.progress },
    });
  } catch (e) {
    const now = get().review;
    if (now) set({ review: { ...now, loading: false, error: messageOf(e) } });
  }
}

/** Keeps enough undecided rows loaded ahead of the one on screen. */
function prefetch(set: SetState, get: GetState): void {
  const q = get().review;
  if (!q || q.exhausted || q.loading) return;
  let ahead = 0;
  for (let i = q.pos; i < q.rows.length && ahead < AHEAD; i++) if (q.rows[i]!.decision === null) ahead++;
  if (ahead < AHEAD) void loadPage(set, get, false);
}

function scheduleRetry(get: GetState): void {
  clearTimeout(retry);
  retry = setTimeout(() => void get().flushReviewOps(), RETRY_MS);
}

/** Sends one op; true when it is done with (acknowledged, or refused for good and said so). */
async function send(op: ReviewOp, set: SetState, get: GetState): Promise<boolean> {
  try {
    if (op.kind === 'decide') {
      const out = await getApi().call('review.decide', { jobId: op.jobId, index: op.index, label: op.label, queue: op.queue, clientId: op.clientId });
      logIds.set(op.clientId, out.decision.logId);
      const q = get().review;
      const row = q?.jobId === op.jobId ? q.rows.find((r) => r.index === op.index) : undefined;
      if (q && row?.decision && row.decision.logId < 0) set({ review: withRow(q, op.index, out.decision) });
      set({ reviewProgress: { ...get().reviewProgress, [op.jobId]: out.progress } });
    } else {
      // Its id, or (sent before a reload) the decision sent again: the same one entry answers.
      const d = op.decide;
      const logId = logIds.get(d.clientId) ?? (await getApi().call('review.decide', { jobId: d.jobId, index: d.index, label: d.label, queue: d.queue, clientId: d.clientId })).decision.logId;
      const out = await getApi().call('review.undo', { jobId: op.decide.jobId, logId });
      set({ reviewProgress: { ...get().reviewProgress, [op.decide.jobId]: out.progress } });
    }
    return true;
  } catch (e) {
    if (e instanceof ApiCallError && isTransient(e.code)) return false;
    get().notify('error', `A review decision was not saved: ${messageOf(e)}`);
    return true;
  }
}

export const createReviewSlice: SliceCreator<ReviewSlice> = (set, get) => ({
  review: null,
  reviewProgress: {},
  reviewSummary: {},
  reviewUnsent: ops.length,
  reviewOffline: false,
  async openReview(jobId, query = {}) {
    const base = get().review?.jobId === jobId ? get().review! : null;
    const q: ReviewQuery = { ...emptyQuery(), ...(base ? { order: base.order, label: base.label, minConfidence: base.minConfidence, maxConfidence: base.maxConfidence } : {}), ...query };
    set({ review: { jobId, ...q, rows: [], pos: 0, next: null, exhausted: false, loading: false, total: null, error: null } });
    void get().flushReviewOps();
    await loadPage(set, get, true);
    void get().loadReviewSummary(jobId);
  },
  reviewDecide(label) {
    const q = get().review;
    const row = q?.rows[q.pos];
    if (!q || !row) return;
    const op: DecideOp = { kind: 'decide', jobId: q.jobId, index: row.index, label, queue: q.order, clientId: newClientId() };
    stack.push(op);
    const decided = withRow(q, row.index, { index: row.index, label, logId: -1, queue: q.order, at: new Date().toISOString() });
    set({ review: { ...decided, pos: nextOpen(decided.rows, q.pos) } });
    setOps(set, [...ops, op]);
    prefetch(set, get);
    void get().flushReviewOps();
  },
  reviewAccept() {
    const row = get().review?.rows[get().review!.pos];
    if (row?.prediction) get().reviewDecide(row.prediction);
  },
  reviewUndo() {
    const q = get().review;
    const last = stack.pop();
    if (!q || !last) return;
    // Not sent yet: it never leaves this window.
    const unsent = ops.findIndex((o) => o.kind === 'decide' && o.clientId === last.clientId);
    if (unsent >= 0 && !(flushing && unsent === 0)) setOps(set, ops.filter((_, i) => i !== unsent));
    else setOps(set, [...ops, { kind: 'undo', decide: last }]);
    const at = q.rows.findIndex((r) => r.index === last.index);
    if (at >= 0) set({ review: { ...withRow(q, last.index, null), pos: at } });
    void get().flushReviewOps();
  },
  reviewMove(delta) {
    const q = get().review;
    if (!q) return;
    set({ review: { ...q, pos: Math.max(0, Math.min(q.rows.length, q.pos + delta)) } });
    prefetch(set, get);
  },
  async loadReviewSummary(jobId) {
    try {
      const summary = await getApi().call('review.summary', { jobId });
      set({ reviewSummary: { ...get().reviewSummary, [jobId]: summary }, reviewProgress: { ...get().reviewProgress, [jobId]: summary.progress } });
    } catch (e) {
      if ((e instanceof ApiCallError && isTransient(e.code)) || markIfMissing(set, get, jobId, e)) return;
      get().notify('error', `Could not read where review stands: ${messageOf(e)}`);
    }
  },
  handleReviewDecided(e) {
    set({ reviewProgress: { ...get().reviewProgress, [e.jobId]: e.progress } });
    const q = get().review;
    if (!q || q.jobId !== e.jobId || (e.decision && [...logIds.values()].includes(e.decision.logId))) return;
    // Another window's decision (or undo): the row shows it, and is passed over when moving on.
    if (q.rows.some((r) => r.index === e.index && r.decision?.logId !== -1)) set({ review: withRow(q, e.index, e.decision) });
  },
  async flushReviewOps() {
    if (flushing) return;
    flushing = true;
    try {
      while (ops.length > 0) {
        const op = ops[0]!;
        if (!(await send(op, set, get))) {
          set({ reviewOffline: true });
          scheduleRetry(get);
          return;
        }
        setOps(
          set,
          ops.filter((o) => o !== op),
        );
      }
      set({ reviewOffline: false });
    } finally {
      flushing = false;
    }
  },
});
