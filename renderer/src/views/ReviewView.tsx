// Review a job's rows from the keyboard (docs/method.md §17): a digit or a label's first letter
// picks a label, Enter accepts TATRA's, S skips, U undoes, the arrows move. Each decision is saved
// the moment it is made (and kept on this page until the app has it: reviewSlice.ts), the next
// row is already loaded, and where review stands stays in view.
import { useEffect, useMemo, useState } from 'react';
import type { ReviewOrder } from '../../../electron/common/contract/review';
import { getApi, messageOf } from '../api/client';
import { ErrorBanner, JobMissing, ProgressBar } from '../components/Common';
import { ReviewReport } from '../components/ReviewReport';
import { ReviewRowCard } from '../components/ReviewRowCard';
import { useStore } from '../store';
import { taskById } from '../store/tasksSlice';

const ORDERS: Array<{ order: ReviewOrder; name: string; hint: string }> = [
  { order: 'uncertain', name: 'Least sure first', hint: 'rows by the winner’s share of the votes, lowest first' },
  { order: 'disagree', name: 'Disagrees with gold', hint: 'TATRA’s label is not the file’s: most confident first, the likeliest gold errors' },
  { order: 'early', name: 'Stopped early', hint: 'rows whose vote stopped before every run' },
  { order: 'audit', name: 'Audit sample', hint: 'a random order of every row: what you review here estimates TATRA’s accuracy' },
];

/** The keys that pick each label: its number, and its first letter where no other label (nor S or U) has it. */
export function labelKeys(labels: readonly string[]): Array<{ label: string; digit: string | null; letter: string | null }> {
  const firsts = labels.map((l) => l.trim().charAt(0).toLowerCase());
  return labels.map((label, i) => {
    const f = firsts[i]!;
    const letter = /^[a-z]$/.test(f) && f !== 's' && f !== 'u' && firsts.filter((x) => x === f).length === 1 ? f : null;
    return { label, digit: i < 9 ? String(i + 1) : null, letter };
  });
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(target.tagName));
}

/** The job's label names, once both the job and its task are known on this page. */
function jobLabels(job: { taskId: string } | undefined, tasks: Parameters<typeof taskById>[0]): string[] {
  return job ? (taskById(tasks, job.taskId)?.labels.map((l) => l.name) ?? []) : [];
}

// The keys read the labels when a key is pressed, not from an earlier render: the labels come with
// the job and its task, which may reach a freshly loaded page after the queue's rows, and a listener
// set up in an effect is replaced only after the paint; a digit pressed in between was lost.
function useReviewKeys(jobId: string): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || isTyping(e.target)) return;
      const s = useStore.getState();
      // Enter and Space on a focused button are that button's.
      if ((e.key === 'Enter' || e.key === ' ') && e.target instanceof HTMLButtonElement) return;
      const k = e.key.toLowerCase();
      const pick = labelKeys(jobLabels(s.jobs.find((j) => j.id === jobId), s.tasks)).find((x) => x.digit === e.key || x.letter === k);
      if (pick) s.reviewDecide(pick.label);
      else if (e.key === 'Enter') s.reviewAccept();
      else if (k === 's') s.reviewDecide(null);
      else if (k === 'u') s.reviewUndo();
      else if (e.key === 'ArrowRight' || e.key === 'ArrowDown') s.reviewMove(1);
      else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') s.reviewMove(-1);
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [jobId]);
}

/** The keyboard back on the row once the queue is chosen, so Enter accepts rather than choosing again. */
function focusRow(): void {
  document.querySelector<HTMLElement>('[data-testid="review-row"]')?.focus();
}

function Filters({ jobId, labels }: { jobId: string; labels: readonly string[] }) {
  const q = useStore((s) => s.review);
  const openReview = useStore((s) => s.openReview);
  if (!q) return null;
  const audit = q.order === 'audit';
  const percent = (v: number | null) => (v === null ? '' : String(Math.round(v * 100)));
  const fromPercent = (text: string) => (text.trim() === '' ? null : Math.max(0, Math.min(100, Number(text))) / 100);
  return (
    <div className="row" data-testid="review-filters">
      <div role="radiogroup" aria-label="Order" className="row" style={{ gap: 4 }}>
        {ORDERS.map((o) => (
          <button key={o.order} role="radio" aria-checked={q.order === o.order} title={o.hint} className={`btn small ${q.order === o.order ? 'primary' : ''}`} onClick={() => void openReview(jobId, { order: o.order }).then(focusRow)} data-testid={`review-order-${o.order}`}>
            {o.name}
          </button>
        ))}
      </div>
      <label className="field inline">
        <span style={{ whiteSpace: 'nowrap' }}>TATRA said</span>
        <select value={q.label ?? ''} disabled={audit} onChange={(e) => void openReview(jobId, { label: e.target.value || null })} data-testid="review-label-filter">
          <option value="">any label</option>
          {labels.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </label>
      <label className="field inline">
        share of votes from
        <input type="number" min={0} max={100} style={{ width: 64 }} disabled={audit} defaultValue={percent(q.minConfidence)} onBlur={(e) => void openReview(jobId, { minConfidence: fromPercent(e.target.value) })} aria-label="Lowest share of votes, in percent" />
      </label>
      <label className="field inline">
        to
        <input type="number" min={0} max={100} style={{ width: 64 }} disabled={audit} defaultValue={percent(q.maxConfidence)} onBlur={(e) => void openReview(jobId, { maxConfidence: fromPercent(e.target.value) })} aria-label="Highest share of votes, in percent" />
      </label>
      {audit ? <span className="small muted">The audit sample takes no filter: it is a random sample of every row.</span> : null}
    </div>
  );
}

function Standing({ jobId }: { jobId: string }) {
  const p = useStore((s) => s.reviewProgress[jobId]);
  const unsent = useStore((s) => s.reviewUnsent);
  const offline = useStore((s) => s.reviewOffline);
  const total = useStore((s) => s.review?.total ?? null);
  if (!p) return null;
  return (
    <div className="card review-standing" data-testid="review-progress" data-reviewed={p.reviewed} data-unsent={unsent}>
      <ProgressBar value={p.rowsDone === 0 ? 0 : (p.reviewed + p.skipped) / p.rowsDone} label="Rows reviewed" />
      <p className="small">
        <strong>{p.reviewed.toLocaleString()}</strong> reviewed of {p.rowsDone.toLocaleString()} finished rows · {p.agreed.toLocaleString()} agreed with TATRA · {p.changed.toLocaleString()} changed · {p.skipped.toLocaleString()} skipped
        {total !== null ? ` · ${total.toLocaleString()} in this queue when it opened` : ''}
      </p>
      {unsent > 0 ? (
        <p className={offline ? 'small field-warn' : 'small muted'} role="status" data-testid="review-unsent">
          {offline ? `${unsent} ${unsent === 1 ? 'decision waits' : 'decisions wait'} for the app: kept on this page and sent as soon as it answers.` : 'saving…'}
        </p>
      ) : null}
    </div>
  );
}

function KeyBar({ keys }: { keys: ReturnType<typeof labelKeys> }) {
  const s = useStore.getState();
  return (
    <div className="row review-keys" aria-label="Decide">
      {keys.map((k) => (
        <button key={k.label} className="btn" onClick={() => s.reviewDecide(k.label)} data-testid={`review-pick-${k.label}`}>
          {k.digit ? <kbd>{k.digit}</kbd> : null}
          {k.letter ? <kbd>{k.letter.toUpperCase()}</kbd> : null} {k.label}
        </button>
      ))}
      <button className="btn primary" onClick={() => s.reviewAccept()}>
        <kbd>Enter</kbd> accept TATRA’s
      </button>
      <button className="btn" onClick={() => s.reviewDecide(null)}>
        <kbd>S</kbd> skip
      </button>
      <button className="btn" onClick={() => s.reviewUndo()}>
        <kbd>U</kbd> undo
      </button>
      <span className="row" style={{ gap: 4 }}>
        <button className="btn ghost" onClick={() => s.reviewMove(-1)}>
          <kbd>←</kbd> previous
        </button>
        <button className="btn ghost" onClick={() => s.reviewMove(1)}>
          next <kbd>→</kbd>
        </button>
      </span>
    </div>
  );
}

function ExportLabels({ jobId }: { jobId: string }) {
  const [done, setDone] = useState<{ path: string; url: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (format: 'csv' | 'jsonl') => {
    try {
      const out = await getApi().call('review.export', { jobId, format });
      const url = getApi().downloadUrl(out.path);
      setDone({ path: out.path, url });
      setError(null);
      if (url) {
        const a = document.createElement('a');
        a.href = url;
        a.download = '';
        document.body.appendChild(a);
        a.click();
        a.remove();
      }
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <div className="stack" style={{ gap: 6, alignItems: 'flex-end' }}>
      <div className="row" style={{ flexWrap: 'nowrap' }}>
        <button className="btn" onClick={() => void run('csv')} data-testid="review-export-csv">
          Export labels CSV
        </button>
        <button className="btn" onClick={() => void run('jsonl')} data-testid="review-export-jsonl">
          Export labels JSONL
        </button>
      </div>
      <ErrorBanner message={error} title="Export failed" />
      {done ? (
        <p className="small" data-testid="review-export-done">
          Exported to <code>{done.path}</code>
        </p>
      ) : null}
    </div>
  );
}

export function ReviewView({ jobId }: { jobId: string }) {
  const job = useStore((s) => s.jobs.find((j) => j.id === jobId));
  const tasks = useStore((s) => s.tasks);
  const q = useStore((s) => s.review);
  const summary = useStore((s) => s.reviewSummary[jobId]);
  const reviewed = useStore((s) => s.reviewProgress[jobId]?.reviewed ?? 0);
  const navigate = useStore((s) => s.navigate);
  const missing = useStore((s) => s.missingJobs[jobId] === true);
  const labels = useMemo(() => jobLabels(job, tasks), [job, tasks]);
  const keys = useMemo(() => labelKeys(labels), [labels]);
  useReviewKeys(jobId);
  useEffect(() => {
    void useStore.getState().refreshJob(jobId);
    void useStore.getState().openReview(jobId);
  }, [jobId]);
  // What review gives back, read again every ten decisions.
  const tens = Math.floor(reviewed / 10);
  useEffect(() => {
    if (tens > 0) void useStore.getState().loadReviewSummary(jobId);
  }, [tens, jobId]);
  // A row is shown only once its labels are known: the keys that pick them work from then on.
  const row = q?.jobId === jobId && labels.length > 0 ? q.rows[q.pos] : undefined;
  // The keyboard goes to the row when it appears while an order is focused (just chosen, its rows
  // still on their way), so Enter accepts rather than choosing the order again.
  const rowIndex = row?.index;
  useEffect(() => {
    if (rowIndex !== undefined && document.activeElement?.getAttribute('role') === 'radio') focusRow();
  }, [rowIndex]);
  if (missing) return <JobMissing jobId={jobId} />;
  return (
    <div className="page" data-testid="review-view">
      <div className="page-head">
        <div>
          <button className="btn ghost small" onClick={() => navigate({ view: 'evaluate', id: jobId })}>
            ← The evaluation
          </button>
          <h1>Review {job ? job.name || job.id : jobId}</h1>
          <p>Keys: a number or a label’s first letter picks it, Enter accepts TATRA’s, S skips, U undoes, the arrows move. Every decision is saved at once.</p>
        </div>
        <ExportLabels jobId={jobId} />
      </div>
      <Standing jobId={jobId} />
      <Filters jobId={jobId} labels={labels} />
      <ErrorBanner message={q?.error} title="The queue could not be read" />
      <KeyBar keys={keys} />
      {row ? (
        <ReviewRowCard jobId={jobId} row={row} labels={labels} position={`${(q!.pos + 1).toLocaleString()} of ${(q!.total ?? q!.rows.length).toLocaleString()} in this queue`} />
      ) : (
        <div className="card empty" data-testid="review-empty">
          {(q && !q.exhausted) || labels.length === 0 ? 'Loading the next rows…' : 'Nothing left in this queue: every row in it is decided. Pick another order, or export the labels.'}
        </div>
      )}
      <ReviewReport jobId={jobId} summary={summary} />
    </div>
  );
}
