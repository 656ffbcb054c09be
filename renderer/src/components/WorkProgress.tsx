// How long work is going, one way for every kind of it (evaluation jobs, sweeps, comparisons):
// the units people count (rows, jobs, pairs), the model calls behind them (which move from the
// first second, where rows finish in bursts), what it is doing, and time left only once the host
// can say it honestly (common/eta.ts). The bar follows the calls when they are known.
import type { ReactNode } from 'react';
import { ProgressBar } from './Common';
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
  const eta = props.running ? (props.etaSeconds !== null ? `about ${duration(props.etaSeconds * 1000)} left` : 'estimating time left…') : null;
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
