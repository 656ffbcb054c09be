// What review gives back, beside the queue: TATRA's accuracy estimated from the audit sample (with
// its 95 % interval, overall and for each label it gave), the gold corrections and the metrics
// before and after them, and the triage plan to pick a budget from.
import { useEffect, useState } from 'react';
import type { Interval } from '../../../electron/common/contract/interval';
import type { JobMetrics } from '../../../electron/common/contract/jobs';
import type { ReviewSummary } from '../../../electron/common/contract/review';
import { getApi, messageOf } from '../api/client';
import { useStore } from '../store';
import { TableWrap } from './Common';
import { pct } from './labels';

function withInterval(i: Interval | null): string {
  return i ? `${pct(i.estimate)} (95 % CI ${pct(i.low)}–${pct(i.high)})` : '–';
}

function Audit({ audit }: { audit: ReviewSummary['audit'] }) {
  if (audit.reviewed === 0) {
    return <p className="small muted">Review rows in the audit order (a random sample of every row) to estimate how often TATRA is right on the whole file.</p>;
  }
  return (
    <div className="stack" style={{ gap: 6 }} data-testid="review-audit">
      <p className="small">
        From {audit.reviewed} audited rows, TATRA is right on <strong>{withInterval(audit.accuracy)}</strong> of the file.
      </p>
      <ul className="small review-list">
        {audit.perLabel
          .filter((l) => l.reviewed > 0)
          .map((l) => (
            <li key={l.label}>
              When it says {l.label}: {withInterval(l.accuracy)} over {l.reviewed} rows
            </li>
          ))}
      </ul>
    </div>
  );
}

function Corrections({ jobId, corrections }: { jobId: string; corrections: number }) {
  const [m, setM] = useState<{ before: JobMetrics; after: JobMetrics } | null>(null);
  useEffect(() => {
    if (corrections === 0) return;
    let live = true;
    getApi()
      .call('review.metrics', { jobId })
      .then((r) => live && setM(r))
      .catch((e: unknown) => live && useStore.getState().notify('error', `Could not load the metrics before and after your corrections: ${messageOf(e)}`));
    return () => {
      live = false;
    };
  }, [jobId, corrections]);
  if (corrections === 0) return null;
  return (
    <p className="small" data-testid="review-corrections">
      You corrected the file&apos;s gold on {corrections} {corrections === 1 ? 'row' : 'rows'} (kept apart from the file and from TATRA&apos;s answers).
      {m ? ` Accuracy ${pct(m.before.accuracy)} with the file's gold, ${pct(m.after.accuracy)} with your corrections; macro-F1 ${pct(m.before.macroF1)} → ${pct(m.after.macroF1)}.` : ''}
    </p>
  );
}

function Triage({ triage }: { triage: ReviewSummary['triage'] }) {
  if (triage.steps.length === 0) return null;
  const basis = triage.basis === 'gold' ? "the file's gold" : triage.basis === 'audit' ? 'the audit sample' : null;
  return (
    <div className="stack" style={{ gap: 6 }}>
      <h3>Triage plan</h3>
      <p className="small muted">
        Accept TATRA where its share of the votes is at least c and review the rest: how many rows that leaves, and how often the accepted ones are right
        {basis ? ` (from ${basis})` : ' (review the audit order to know)'}.
      </p>
      <TableWrap label="Triage plan" style={{ maxHeight: 260 }}>
        <table className="data" data-testid="review-triage">
          <thead>
            <tr>
              <th scope="col">Accept at ≥</th>
              <th scope="col" className="num">
                Accepted
              </th>
              <th scope="col" className="num">
                Left to review
              </th>
              <th scope="col">Expected accuracy of accepted</th>
            </tr>
          </thead>
          <tbody>
            {triage.steps.map((s) => (
              <tr key={s.threshold}>
                <th scope="row">{pct(s.threshold, 0)}</th>
                <td className="num">{s.accepted.toLocaleString()}</td>
                <td className="num">{s.toReview.toLocaleString()}</td>
                <td>{withInterval(s.accuracy)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </div>
  );
}

export function ReviewReport({ jobId, summary }: { jobId: string; summary: ReviewSummary | undefined }) {
  return (
    <div className="card" data-testid="review-report">
      <div className="card-head">
        <h2>What review gives back</h2>
      </div>
      {summary ? (
        <>
          <Audit audit={summary.audit} />
          <Corrections jobId={jobId} corrections={summary.corrections} />
          <Triage triage={summary.triage} />
        </>
      ) : (
        <p className="skeleton">loading…</p>
      )}
    </div>
  );
}
