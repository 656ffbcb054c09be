// Small building blocks used across views.
import { useId, useLayoutEffect, useRef, useState, type CSSProperties, type ReactNode } from 'react';
import { reproducibleText, type ReproducibleSubject } from '../../../electron/common/reproducible';
import { useStore } from '../store';
import { labelVar } from './labels';

export function ErrorBanner({ message, title = 'Error' }: { message: string | null | undefined; title?: string }) {
  if (!message) return null;
  return (
    <div className="banner error" role="alert">
      <strong>{title}:</strong>
      <span>{message}</span>
    </div>
  );
}

/**
 * Notices float at the bottom right. So that they never hide a control for good, the page keeps
 * room below its content as tall as they are (--notice-room, read by .main): whatever sits
 * under a notice can be scrolled clear of it.
 */
export function Notices() {
  const notices = useStore((s) => s.notices);
  const dismiss = useStore((s) => s.dismiss);
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    const root = document.documentElement;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const update = () => root.style.setProperty('--notice-room', `${el.offsetHeight > 0 ? el.offsetHeight + 24 : 0}px`);
    const observer = new ResizeObserver(update);
    observer.observe(el);
    update();
    return () => {
      observer.disconnect();
      root.style.removeProperty('--notice-room');
    };
  }, []);
  return (
    <div className="notices" aria-live="polite" ref={ref}>
      {notices.map((n) => (
        <div key={n.id} className={`notice ${n.kind}`} role={n.kind === 'error' ? 'alert' : 'status'}>
          <p>{n.message}</p>
          <button className="btn ghost small" onClick={() => dismiss(n.id)} aria-label="Dismiss">
            ✕
          </button>
        </div>
      ))}
    </div>
  );
}

/**
 * A whole number within bounds. The bounds are shown before they are hit (the hint); a value
 * outside them is said once the field is left, not while it is being typed.
 */
export function NumberField(props: { label: string; value: number; min: number; max: number; onChange(v: number): void; hint?: string; testId?: string }) {
  const [text, setText] = useState(String(props.value));
  const [lastValue, setLastValue] = useState(props.value);
  const [left, setLeft] = useState(false);
  const id = useId();
  if (props.value !== lastValue) {
    setLastValue(props.value);
    setText(String(props.value));
  }
  const n = Number(text);
  const range = props.max >= 1_000_000 ? `${props.min.toLocaleString('en-US')} or more` : `${props.min.toLocaleString('en-US')}–${props.max.toLocaleString('en-US')}`;
  const problem = text.trim() === '' || !Number.isInteger(n) ? `a whole number, ${range}` : n < props.min || n > props.max ? `must be ${range}` : null;
  const error = left ? problem : null;
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        type="number"
        value={text}
        min={props.min}
        max={props.max}
        aria-invalid={error !== null}
        aria-describedby={`${id}-hint`}
        data-testid={props.testId}
        onBlur={() => setLeft(true)}
        onChange={(e) => {
          setText(e.target.value);
          const v = Number(e.target.value);
          if (e.target.value.trim() !== '' && Number.isInteger(v) && v >= props.min && v <= props.max) props.onChange(v);
        }}
      />
      {error ? (
        <span className="field-error" id={`${id}-hint`}>
          {error}
        </span>
      ) : (
        <span className="field-hint" id={`${id}-hint`}>
          {props.hint ?? range}
        </span>
      )}
    </label>
  );
}

/** "1,234 / 20,000 characters": the limit in view before it is hit, in the danger colour past it. */
export function CharCounter({ length, max, id }: { length: number; max: number; id: string }) {
  const over = length > max;
  return (
    <span id={id} className={over ? 'field-error' : 'field-hint'} data-testid="char-counter" aria-live={over ? 'polite' : 'off'}>
      {length.toLocaleString('en-US')} / {max.toLocaleString('en-US')} characters{over ? `: ${(length - max).toLocaleString('en-US')} too many` : ''}
    </span>
  );
}

/** Whether a result, job or sweep can be had again; nothing while it is not known yet (null). */
export function ReproducibleChip({ deterministic, subject, testId }: { deterministic: boolean | null; subject: ReproducibleSubject; testId: string }) {
  if (deterministic === null) return null;
  const { short, why } = reproducibleText(deterministic, subject);
  return (
    <span className={deterministic ? 'chip' : 'chip warn'} data-testid={testId} title={`${why[0]!.toUpperCase()}${why.slice(1)}.`}>
      {short}
    </span>
  );
}

export function LabelChip({ label, labels }: { label: string | null; labels: readonly string[] }) {
  if (label === null) return <span className="chip">no vote</span>;
  return (
    <span className="chip label" style={{ background: labelVar(label, labels) }}>
      {label}
    </span>
  );
}

export function Metric({ name, value, hint, detail }: { name: string; value: ReactNode; hint?: string; detail?: ReactNode }) {
  return (
    <div className="card metric" title={hint}>
      <span className="name">{name}</span>
      <span className="value">{value}</span>
      {detail ? <span className="detail">{detail}</span> : null}
    </div>
  );
}

/** A link from an empty state to the step it needs: scrolls to `target` (a selector) and puts the keyboard there. */
export function JumpTo({ target, children, testId }: { target: string; children: ReactNode; testId?: string }) {
  return (
    <a
      href={`#${target}`}
      data-testid={testId}
      onClick={(e) => {
        e.preventDefault();
        const el = document.querySelector<HTMLElement>(target);
        el?.scrollIntoView({ block: 'start', behavior: 'smooth' });
        el?.querySelector<HTMLElement>('input, select, textarea, button, [tabindex="0"]')?.focus({ preventScroll: true });
      }}
    >
      {children}
    </a>
  );
}

/**
 * A table that may scroll sideways or down in its own box: reachable from the keyboard (a
 * scrolling region must be, or its hidden part is out of reach) and named for screen readers.
 */
export function TableWrap({ label, children, style }: { label: string; children: ReactNode; style?: CSSProperties }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={label} style={style}>
      {children}
    </div>
  );
}

export function ProgressBar({ value, label }: { value: number; label: string }) {
  const v = Math.max(0, Math.min(1, value));
  return (
    <div className="progress" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(v * 100)}>
      <div style={{ width: `${v * 100}%` }} />
    </div>
  );
}

/**
 * A path, file or model name that may be longer than its column: it wraps after a separator
 * (/ \ - _ .) instead of between any two letters, so "synthetic-tiny-b-v1" breaks as
 * "synthetic-tiny-b-" / "v1", never "synthe" / "tic". One part longer than the column still
 * breaks inside (overflow-wrap: break-word) rather than leaving its box.
 */
export function BreakableName({ text }: { text: string }) {
  const parts = text.split(/(?<=[/\\\-_.])/);
  return <span className="breakable">{parts.flatMap((p, i) => (i === 0 ? [p] : [<wbr key={i} />, p]))}</span>;
}

/** In place of a job's page when the host has no such job: deleted, or a link from before. */
export function JobMissing({ jobId }: { jobId: string }) {
  const navigate = useStore((s) => s.navigate);
  return (
    <div className="page" data-testid="job-missing">
      <div className="page-head">
        <div>
          <button className="btn ghost small" onClick={() => navigate({ view: 'evaluate' })}>
            ← Evaluations
          </button>
          <h1>No evaluation {jobId}</h1>
          <p>It was deleted, or this link comes from another data folder.</p>
        </div>
      </div>
    </div>
  );
}
