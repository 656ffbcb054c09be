// One row of the review queue as a person decides on it: the input, TATRA's label with its share of
// the votes, what each run voted, the file's gold where it has one, the decision so far and the
// row's history; the examples and paraphrases that voted on demand (the rows table's panel).
import { useEffect, useState } from 'react';
import type { ReviewHistoryEntry, ReviewRow } from '../../../electron/common/contract/review';
import { getApi, messageOf } from '../api/client';
import { useStore } from '../store';
import { LabelChip } from './Common';
import { labelVar, pct } from './labels';
import { RowDetailPanel } from './RowsTable';

function VoteBars({ votes, labels }: { votes: Record<string, number>; labels: readonly string[] }) {
  const total = Object.values(votes).reduce((a, b) => a + b, 0);
  return (
    <div className="review-votes" aria-label="Votes per label">
      {labels.map((l) => {
        const v = votes[l] ?? 0;
        return (
          <div className="review-vote" key={l}>
            <span className="review-vote-label">{l}</span>
            <span className="review-vote-bar" aria-hidden="true">
              <span style={{ width: `${total === 0 ? 0 : (v / total) * 100}%`, background: labelVar(l, labels) }} />
            </span>
            <span className="num small">{v}</span>
          </div>
        );
      })}
    </div>
  );
}

/** Each run's votes on its own: a run that disagrees with the others shows where the vote split. */
function RunVotes({ runs, labels }: { runs: ReviewRow['runVotes']; labels: readonly string[] }) {
  if (runs.length === 0) return null;
  return (
    <table className="data review-runs">
      <caption className="sr-only">Votes of each run</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          {labels.map((l) => (
            <th scope="col" className="num" key={l}>
              {l}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {runs.map((r) => (
          <tr key={r.run}>
            <th scope="row">{r.run + 1}</th>
            {labels.map((l) => (
              <td className="num" key={l}>
                {r.votes[l] ?? 0}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function History({ jobId, row }: { jobId: string; row: ReviewRow }) {
  const [entries, setEntries] = useState<ReviewHistoryEntry[] | null>(null);
  const logId = row.decision?.logId ?? null;
  useEffect(() => {
    // Only a decided row has a history; an unsent decision's shows once it is saved.
    if (logId === null || logId < 0) return;
    let live = true;
    getApi()
      .call('review.history', { jobId, index: row.index })
      .then((h) => live && setEntries(h))
      .catch((e: unknown) => live && useStore.getState().notify('error', `Could not load row ${row.index + 1}'s history: ${messageOf(e)}`));
    return () => {
      live = false;
    };
  }, [jobId, row.index, logId]);
  if (logId === null || !entries || entries.length === 0) return null;
  return (
    <details className="review-history" data-testid="review-history">
      <summary className="small">History of this row ({entries.length})</summary>
      <ol className="small">
        {entries.map((h) => (
          <li key={h.id} className={h.undone ? 'muted' : undefined}>
            {new Date(h.at).toLocaleString()} · {h.action === 'undo' ? 'undone' : h.action === 'skip' ? 'skipped' : `labelled ${h.label}`} (was {h.replaced ?? 'no label'}){h.undone ? ' · undone later' : ''}
          </li>
        ))}
      </ol>
    </details>
  );
}

export function ReviewRowCard({ jobId, row, labels, position }: { jobId: string; row: ReviewRow; labels: readonly string[]; position: string }) {
  const [details, setDetails] = useState(false);
  const decision = row.decision;
  return (
    <div className="card review-row" data-testid="review-row" data-index={row.index} tabIndex={-1} role="region" aria-label={`Row ${row.index + 1}`}>
      <div className="card-head">
        <h2>
          Row {row.index + 1} <span className="sub small muted">{position}</span>
        </h2>
        {decision ? (
          <span className="chip" data-testid="review-decided">
            {decision.label === null ? 'skipped' : `you said ${decision.label}`}
            {decision.logId < 0 ? ' · saving' : ''}
          </span>
        ) : null}
      </div>
      <p className="review-input" data-testid="review-input">
        {row.input}
      </p>
      <div className="row small" aria-live="polite">
        <span>TATRA says</span> <LabelChip label={row.prediction} labels={labels} />
        <span className="muted">with {pct(row.confidence, 0)} of the votes</span>
        {row.gold !== null ? (
          <>
            <span>· the file says</span> <LabelChip label={row.gold} labels={labels} />
            {row.correct === false ? <span className="chip warn">they disagree</span> : null}
          </>
        ) : null}
      </div>
      <div className="review-evidence">
        <VoteBars votes={row.votes} labels={labels} />
        <RunVotes runs={row.runVotes} labels={labels} />
      </div>
      <div className="row">
        <button className="btn small ghost" onClick={() => setDetails(!details)} aria-expanded={details} data-testid="review-details">
          {details ? 'Hide' : 'Show'} the examples and paraphrases that voted
        </button>
      </div>
      {details ? <RowDetailPanel key={row.index} jobId={jobId} index={row.index} labels={[...labels]} onClose={() => setDetails(false)} /> : null}
      <History jobId={jobId} row={row} />
    </div>
  );
}
