// Pick a model for a role: a searchable list of the library's GGUFs and the remote models, by
// friendly name, with each one's fit and a details panel; a path on the machine running TATRA or
// an openai+http://HOST:PORT/v1#MODEL can still be typed. A model without a chat template (a base
// model, which TATRA's prompts do not suit) is flagged where it is chosen. ARIA 1.2 combobox.
import { type ChangeEvent, type FocusEvent, type KeyboardEvent, useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ModelEntry, RemoteModelStatus } from '../../../electron/common/contract/models';
import { formatBytes, formatParams } from '../../../electron/common/bytes';
import { writtenAsRemote } from '../../../electron/common/model-spec';
import { useStore } from '../store';
import { BreakableName } from './Common';
import { fitOf } from '../store/modelsSlice';
import { FitBadge } from './FitBadge';

export interface ModelOption {
  /** What the run is given: a GGUF path or remote:NAME. */
  value: string;
  name: string;
  detail: string;
  local: ModelEntry | null;
  remote: RemoteModelStatus | null;
}

/** Library and remote models as options, loading them (and refreshing them when the library changes). */
export function useModelOptions(): { options: ModelOption[]; loaded: boolean } {
  const library = useStore((s) => s.library);
  const remotes = useStore((s) => s.remoteModels);
  const version = useStore((s) => s.modelsVersion);
  const loadLibrary = useStore((s) => s.loadLibrary);
  const loadRemotes = useStore((s) => s.loadRemoteModels);
  useEffect(() => {
    void loadLibrary();
    void loadRemotes(false);
  }, [version, loadLibrary, loadRemotes]);
  const options = useMemo(() => {
    const models = library?.models ?? [];
    // Two files with one name (a copy elsewhere) are told apart by their file.
    const named = new Map<string, number>();
    for (const m of models) named.set(m.name, (named.get(m.name) ?? 0) + 1);
    return [
      ...models.map((m) => ({
        value: m.path,
        name: m.name,
        detail: [named.get(m.name)! > 1 ? m.path : null, m.architecture, formatParams(m.parameters), m.quantization, formatBytes(m.sizeBytes)].filter((x) => x && x !== '–').join(' · '),
        local: m,
        remote: null,
      })),
      ...(remotes ?? []).map((r) => ({
        value: `remote:${r.entry.name}`,
        name: `remote:${r.entry.name}`,
        detail: `${r.entry.model} · ${r.entry.urls.length} endpoint${r.entry.urls.length === 1 ? '' : 's'}`,
        local: null,
        remote: r,
      })),
    ];
  }, [library, remotes]);
  return { options, loaded: library !== null && remotes !== null };
}

/** Typed text that names a model by where it is rather than by name. */
const looksLikeSpec = (text: string) => /[\\/]/.test(text) || writtenAsRemote(text);

/** Everything known about one option, for the panel beside the list. */
function Details({ option }: { option: ModelOption }) {
  const fit = useStore((s) => fitOf(s.fits, option.value));
  if (option.remote) {
    const r = option.remote.entry;
    return (
      <dl className="details" data-testid="model-details">
        <dt>Server model</dt>
        <dd>{r.model}</dd>
        <dt>Endpoints</dt>
        <dd>{r.urls.join(', ')}</dd>
      </dl>
    );
  }
  const m = option.local!;
  return (
    <dl className="details" data-testid="model-details">
      <dt>Architecture</dt>
      <dd>{m.architecture}</dd>
      <dt>Parameters</dt>
      <dd>{formatParams(m.parameters)}</dd>
      <dt>Quantisation</dt>
      <dd>{m.quantization ?? '–'}</dd>
      <dt>File</dt>
      <dd>{formatBytes(m.sizeBytes)}</dd>
      <dt>Context</dt>
      <dd>{m.contextLength?.toLocaleString('en-US') ?? '–'} tokens</dd>
      <dt>Chat template</dt>
      <dd>{m.hasChatTemplate ? 'yes' : <span className="bad-text">none: a base model?</span>}</dd>
      <dt>Fit</dt>
      <dd>
        <FitBadge path={m.path} />
      </dd>
      {/* The offload is said under the badge already. */}
      {fit?.warning && fit.warning.indexOf(fit.offload) < 0 ? <dd className="wide">{fit.warning}</dd> : null}
      <dt>Path</dt>
      <dd className="path">
        <BreakableName text={m.path} />
      </dd>
    </dl>
  );
}

type PickerProps = { label: string; value: string; onChange(path: string): void; testId?: string; error?: string | null };

export function ModelPicker(props: PickerProps) {
  const { options, loaded } = useModelOptions();
  const id = useId();
  const picker = useModelPicker(props, options);
  const { open, setOpen, box, pop, leftwards, chosen, matches, current, needle } = picker;
  return (
    <div className="field model-picker" ref={box} data-testid={props.testId ? `${props.testId}-picker` : undefined}>
      <label htmlFor={`${id}-input`}>{props.label}</label>
      <div className="picker-box">
        <input
          id={`${id}-input`}
          type="text"
          role="combobox"
          aria-expanded={open}
          aria-controls={`${id}-list`}
          aria-autocomplete="list"
          aria-activedescendant={open && current ? `${id}-opt-${matches.indexOf(current)}` : undefined}
          aria-invalid={!!props.error}
          aria-describedby={`${id}-hint`}
          placeholder={options.length > 0 ? 'Search models, or type a path' : '/path/to/model.gguf or remote:NAME'}
          value={picker.shown}
          spellCheck={false}
          autoComplete="off"
          data-testid={props.testId}
          onFocus={picker.onFocus}
          onBlur={picker.onBlur}
          onChange={picker.onChange}
          onKeyDown={picker.onKeyDown}
        />
        <button type="button" className="picker-toggle" tabIndex={-1} aria-label={`Show the models for ${props.label}`} onMouseDown={(e) => e.preventDefault()} onClick={() => setOpen(!open)}>
          ▾
        </button>
      </div>
      {open ? (
        <div className={leftwards ? 'picker-pop leftwards' : 'picker-pop'} ref={pop} data-testid="model-options">
          <OptionList
            id={id}
            label={props.label}
            value={props.value}
            matches={matches}
            current={current}
            onHover={picker.setActive}
            onPick={picker.pick}
            onClose={() => setOpen(false)}
            empty={options.length === 0 ? (loaded ? 'No models yet.' : 'Loading…') : needle && looksLikeSpec(needle) ? 'A path or server: used as typed.' : 'No model matches.'}
          />
          {current ? <Details option={current} /> : null}
        </div>
      ) : null}
      <span className="field-hint" id={`${id}-hint`}>
        <PickerHint chosen={chosen} value={props.value} choices={options.length} />
      </span>
      {chosen?.local && !chosen.local.hasChatTemplate ? (
        <span className="field-warn" data-testid="no-chat-template">
          {chosen.name} has no chat template: it looks like a base model, and TATRA's prompts need an instruction-tuned one. Expect poor labels.
        </span>
      ) : null}
      {props.error ? <span className="field-error">{props.error}</span> : null}
    </div>
  );
}

/** The picker's open state, the typed search, the active option and the keys that move it. */
function useModelPicker(props: PickerProps, options: ModelOption[]) {
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const box = useRef<HTMLDivElement>(null);
  const pop = useRef<HTMLDivElement>(null);
  // The list is wider than a narrow field: under a field near the window's right edge it opens
  // leftwards (from the field's right edge) rather than past the window.
  const [leftwards, setLeftwards] = useState(false);
  useLayoutEffect(() => {
    if (!open || !box.current || !pop.current) return;
    const field = box.current.getBoundingClientRect();
    setLeftwards(field.left + pop.current.offsetWidth > document.documentElement.clientWidth && field.right - pop.current.offsetWidth >= 0);
  }, [open]);
  const chosen = options.find((o) => o.value === props.value) ?? null;
  // The text the field had when it took the focus, kept while it has it: the library arriving
  // then would otherwise swap a path for the model's name under a selection or a caret, and what
  // is typed next would land beside the name instead of replacing it.
  const [focusedText, setFocusedText] = useState<string | null>(null);
  const shown = query ?? focusedText ?? (chosen ? chosen.name : props.value);
  const needle = (query ?? '').trim().toLowerCase();
  const matches = needle && !looksLikeSpec(needle) ? options.filter((o) => `${o.name} ${o.detail} ${o.value}`.toLowerCase().includes(needle)) : options;
  const current = matches[Math.min(active, matches.length - 1)] ?? null;

  const pick = (o: ModelOption) => {
    props.onChange(o.value);
    setQuery(null);
    setFocusedText(o.name);
    setOpen(false);
  };
  // Closing by leaving the field: a typed path stays as typed; a search that picked nothing is dropped.
  const leave = () => {
    setOpen(false);
    setQuery(null);
    setFocusedText(null);
  };
  const onFocus = () => {
    setFocusedText(shown);
    setOpen(true);
  };
  const onBlur = (e: FocusEvent<HTMLInputElement>) => {
    if (!box.current?.contains(e.relatedTarget as Node | null)) leave();
  };
  const onChange = (e: ChangeEvent<HTMLInputElement>) => {
    const text = e.target.value;
    setQuery(text);
    setActive(0);
    setOpen(true);
    // A path or server spec is the value as typed; other text searches the list.
    if (text.trim() === '' || looksLikeSpec(text)) props.onChange(text);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setOpen(true);
      setActive((i) => Math.max(0, Math.min(matches.length - 1, i + (e.key === 'ArrowDown' ? 1 : -1))));
    } else if (e.key === 'Enter' && open && current && !looksLikeSpec(query ?? '')) {
      e.preventDefault();
      pick(current);
    } else if (e.key === 'Escape') {
      leave();
    }
  };
  return { open, setOpen, box, pop, leftwards, chosen, shown, needle, matches, current, setActive, pick, onFocus, onBlur, onChange, onKeyDown };
}

/**
 * The picker's list column: the listbox holds the matching options only (a listbox may own nothing
 * else), with the line when none matches and the way to the Models view beside it, in the column
 * that scrolls.
 */
function OptionList(props: { id: string; label: string; value: string; matches: ModelOption[]; current: ModelOption | null; empty: string; onHover(i: number): void; onPick(o: ModelOption): void; onClose(): void }) {
  const { id, matches, current } = props;
  const navigate = useStore((s) => s.navigate);
  return (
    <div className="picker-list">
      <ul role="listbox" id={`${id}-list`} aria-label={`Models for ${props.label}`} tabIndex={-1}>
        {matches.map((o, i) => (
          <li
            key={o.value}
            id={`${id}-opt-${i}`}
            role="option"
            aria-selected={o.value === props.value}
            className={o === current ? 'active' : undefined}
            onMouseDown={(e) => e.preventDefault()}
            onMouseEnter={() => props.onHover(i)}
            onClick={() => props.onPick(o)}
            data-testid="model-option"
          >
            <span className="title">
              {o.name}
              {o.local && !o.local.hasChatTemplate ? <span className="chip warn">no chat template</span> : null}
            </span>
            <span className="meta">{o.detail}</span>
          </li>
        ))}
      </ul>
      {matches.length === 0 ? <p className="empty-option">{props.empty}</p> : null}
      <p className="picker-foot">
        <a
          href="#/models"
          onMouseDown={(e) => e.preventDefault()}
          onClick={(e) => {
            e.preventDefault();
            props.onClose();
            navigate({ view: 'models' });
          }}
        >
          Add or download a model…
        </a>
      </p>
    </div>
  );
}

/** Under the field: the chosen model's facts and fit, or what may be typed, or the way to add one. */
function PickerHint({ chosen, value, choices }: { chosen: ModelOption | null; value: string; choices: number }) {
  const navigate = useStore((s) => s.navigate);
  if (chosen) {
    return (
      <span className="row" style={{ gap: 6 }}>
        <span>{chosen.detail}</span>
        {chosen.local ? <FitBadge path={chosen.value} /> : null}
      </span>
    );
  }
  if (value.trim()) return <>a path on the machine running TATRA, or a server</>;
  if (choices > 0) return <>{`${choices} model${choices === 1 ? '' : 's'} to choose from`}</>;
  return (
    <>
      no model yet:{' '}
      <a
        href="#/models"
        onClick={(e) => {
          e.preventDefault();
          navigate({ view: 'models' });
        }}
      >
        add or download one
      </a>
    </>
  );
}
