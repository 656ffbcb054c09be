// The decisions this window made that the main process has not acknowledged yet, in the order they
// were made: kept in localStorage until acknowledged, so a reload, a closed tab or a main process
// that is down (killed, restarting) loses none of them; they are sent again, in order, as soon as
// it answers. Each decision carries a client id, so one sent twice (its answer lost) is recorded
// once (review-store.ts). An undo names the decision it takes back by that same id.
import type { ReviewQueueName } from '../../../electron/common/contract/review';

export interface DecideOp {
  kind: 'decide';
  jobId: string;
  index: number;
  /** null: a skip. */
  label: string | null;
  queue: ReviewQueueName;
  clientId: string;
}

export interface UndoOp {
  kind: 'undo';
  /** The decision to take back. */
  decide: DecideOp;
}

export type ReviewOp = DecideOp | UndoOp;

const KEY = 'tatra.review.unsent';

export function loadOps(): ReviewOp[] {
  try {
    const raw = localStorage.getItem(KEY);
    const ops = raw ? (JSON.parse(raw) as unknown) : [];
    return Array.isArray(ops) ? ops.filter((o): o is ReviewOp => typeof o === 'object' && o !== null && ((o as ReviewOp).kind === 'decide' || (o as ReviewOp).kind === 'undo')) : [];
  } catch {
    return [];
  }
}

export function saveOps(ops: readonly ReviewOp[]): void {
  try {
    if (ops.length === 0) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, JSON.stringify(ops));
  } catch {
    // Storage unavailable (privacy mode): unsent decisions then last as long as the page.
  }
}

/** Codes of a call that did not reach a working main process: the op stays and is sent again. */
export function isTransient(code: string): boolean {
  return code === 'offline' || code === 'unauthorised' || code === 'forbidden' || code === 'disposed' || code.startsWith('http_');
}

export function newClientId(): string {
  return typeof crypto !== 'undefined' && 'randomUUID' in crypto ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}
