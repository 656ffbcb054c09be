// Long work drawn one way for every kind of it (evaluation jobs, sweeps, comparisons): its
// progress card, its actions and its history. The progress card says the units people count
// (rows, jobs, pairs), the model calls behind them (which move from the first second, where rows
// finish in bursts), what it is doing, and time left only once the host can say it honestly
// (common/eta.ts); the bar follows the calls when they are known.
import type { ReactNode } from 'react';
import { ErrorBanner, JumpTo, ProgressBar, TableWrap } from './Common';
import { StatusChip } from './RunSetup';
import { useStore } from '../store';
import type { ViewName } from '../store/uiSlice';
import { count, duration } from './labels';

export type WorkPhase = 'loading' | 'examples' | 'rows';

const PHASE_TEXT: Record<WorkPhase, string> = {
  loading: 'loading models',
  examples: 'writing the shared examples',
  rows: 'classifying rows',
};

export interface WorkProgressProps {
  testId: string;
  /** Still going (an ETA and the phase are shown only then). */
  running: boolean;
  /** The first is the headline and, without calls, what the bar follows: rows, then jobs or pairs. */
  counts: { done: number; total: number; noun: string }[];
  calls?: { done: number; total: number } | null;
  phase?: WorkPhase | null;
  etaSeconds: number | null;
  /** While the rate is not stable yet: the time left from the fastest to the slowest rate seen. */
  etaRange?: { min: number; max: number } | null;
  /** "4.2 rows/min", when there is one. */
  rate?: string | null;
  /** Right-hand side: the running accuracy, and such. */
  children?: ReactNode;
}

export function WorkProgress(props: WorkProgressProps) {
  const [head, ...rest] = props.counts;
  const calls = props.calls && props.calls.total > 0 ? props.calls : null;
  const fraction = calls ? calls.done / calls.total : head && head.total > 0 ? head.done / head.total : 0;
  const phase = props.running && props.phase && props.phase !== 'rows' ? PHASE_TEXT[props.phase] : null;
  const range = props.etaRange && props.etaRange.max > props.etaRange.min ? props.etaRange : null;
  const eta = props.running
    ? props.etaSeconds !== null
      ? `about ${duration(props.etaSeconds * 1000)} left`
      : range
        ? `${duration(range.min * 1000)}–${duration(range.max * 1000)} left`
        : 'estimating time left…'
    : null;
  const details = [
    phase,
    ...rest.map((c) => `${c.done.toLocaleString('en-US')} / ${count(c.total, c.noun)}`),
    calls ? `${calls.done.toLocaleString('en-US')} of ${count(calls.total, 'model call')}` : null,
    props.rate ?? null,
    eta,
  ].filter(Boolean);
  return (
    <div className="card" data-testid={props.testId} data-calls-done={calls?.done} data-done={head?.done} data-phase={props.phase ?? undefined}>
      <div className="row">
        {head ? (
          <strong>
            {head.done.toLocaleString('en-US')} / {count(head.total, head.noun)}
          </strong>
        ) : null}
        <span className="muted small" data-testid={`${props.testId}-details`}>
          {details.join(' · ')}
        </span>
        {/* Said aloud: what it is doing and when it ends, not every count. */}
        <span className="sr-only" role="status">
          {props.running ? (phase ?? 'running') : 'stopped'}
        </span>
        <span className="spacer" />
        {props.children}
      </div>
      <ProgressBar value={fraction} label={calls ? 'Progress in model calls' : `${head?.noun ?? 'Work'}s done`} />
    </div>
  );
}

export type WorkAction = 'pause' | 'resume' | 'cancel';

/** The statuses every kind of long work has, whatever else its own enum holds. */
const RUNNING = new Set(['running', 'queued']);
const RESUMABLE = new Set(['paused', 'interrupted', 'failed', 'error', 'cancelled']);

/**
 * Pause, Resume and Cancel for long work, shown by its status the same way for jobs, sweeps and
 * comparisons: Pause while it runs, Resume once it has stopped short of done, Cancel while it
 * runs or is paused. `actions` lists what this kind offers; test ids are `${testIdPrefix}-pause` etc.
 */
export function WorkActions(props: { status: string; actions: readonly WorkAction[]; onAction(a: WorkAction): void; busy?: boolean; testIdPrefix: string; what: string }) {
  const { status, actions } = props;
  const shown = actions.filter((a) => (a === 'pause' ? RUNNING.has(status) : a === 'resume' ? RESUMABLE.has(status) : RUNNING.has(status) || status === 'paused'));
  return (
    <>
      {shown.map((a) => (
        <button
          key={a}
          className={a === 'resume' ? 'btn primary' : a === 'cancel' ? 'btn danger' : 'btn'}
          disabled={props.busy}
          onClick={() => props.onAction(a)}
          aria-label={`${a === 'pause' ? 'Pause' : a === 'resume' ? 'Resume' : 'Cancel'} the ${props.what}`}
          data-testid={`${props.testIdPrefix}-${a}`}
        >
          {a === 'pause' ? 'Pause' : a === 'resume' ? 'Resume' : 'Cancel'}
        </button>
      ))}
    </>
  );
}

export interface HistoryColumn<T> {
  header: string;
  num?: boolean;
  cell(item: T): ReactNode;
}

/**
 * The history of one kind of long work, drawn the same way for all: a card with the count, an
 * empty state that leads to the set-up, and a table whose first column links to the item's own
 * page (#/view/ID), then the kind's columns, the status, when it started and a last cell for
 * actions.
 */
export function WorkHistory<T extends { id: string; createdAt: number; status: Parameters<typeof StatusChip>[0]['status'] }>(props: {
  title: string;
  noun: string;
  items: readonly T[] | null;
  view: ViewName;
  name(item: T): ReactNode;
  columns: HistoryColumn<T>[];
  /** A last cell per row (e.g. Resume), when the kind has one. */
  actions?(item: T): ReactNode;
  testId: string;
  rowTestId: string;
  statusTestId: string;
  error?: string | null;
}) {
  const navigate = useStore((s) => s.navigate);
  const items = props.items ?? [];
  return (
    <div className="card" data-testid={props.testId}>
      <div className="card-head">
        <h2>{props.title}</h2>
        <span className="sub">{count(items.length, props.noun)}</span>
      </div>
      <ErrorBanner message={props.error} />
      {props.items && items.length === 0 ? (
        <p className="muted">
          No {props.noun}s yet: <JumpTo target='[data-step="data"]'>choose a data file</JumpTo> to start one.
        </p>
      ) : null}
      {items.length > 0 ? (
        <TableWrap label={props.title}>
          <table className="data">
            <thead>
              <tr>
                <th>Name</th>
                {props.columns.map((c) => (
                  <th key={c.header} className={c.num ? 'num' : undefined}>
                    {c.header}
                  </th>
                ))}
                <th>Status</th>
                <th>Started</th>
                        {props.actions ? (
                  <th>
                    <span className="sr-only">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {items.map((item) => (
                <tr key={item.id} data-testid={props.rowTestId}>
                  <td>
                    <a
                      href={`#/${props.view}/${encodeURIComponent(item.id)}`}
                      onClick={(e) => {
                        e.preventDefault();
                        navigate({ view: props.view, id: item.id });
                      }}
                    >
                      {props.name(item)}
                    </a>
                  </td>
                  {props.columns.map((c) => (
                    <td key={c.header} className={c.num ? 'num' : 'small'}>
                      {c.cell(item)}
                    </td>
                  ))}
                  <td>
                    <StatusChip status={item.status} testId={props.statusTestId} />
                  </td>
                  <td className="small muted">{new Date(item.createdAt).toLocaleString()}</td>
                  {props.actions ? <td>{props.actions(item)}</td> : null}
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      ) : null}
    </div>
  );
}
