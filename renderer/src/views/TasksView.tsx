// Tasks: browse the eleven built-in tasks, create and edit your own, validated as you type.
import { useMemo, useState } from 'react';
import type { TaskEntry } from '../../../electron/common/contract/tasks';
import { LabelChip, NumberField } from '../components/Common';
import { TagInput } from '../components/TagInput';
import { useStore } from '../store';
import { blankDraft, checkDraft, draftFromTask, type TaskDraft } from './taskDraft';

const KIND_NAMES = { classification: 'Classification', multiple_choice: 'Multiple choice', math: 'Math' } as const;

function FieldError({ errors, path }: { errors: Record<string, string>; path: string }) {
  const m = errors[path];
  return m ? (
    <span className="field-error" role="alert">
      {m}
    </span>
  ) : null;
}

function TaskList({ tasks, selected, onSelect }: { tasks: TaskEntry[]; selected: string | undefined; onSelect(id: string): void }) {
  const groups: [string, TaskEntry[]][] = [
    ['Built-in', tasks.filter((t) => t.source === 'builtin')],
    ['Your tasks', tasks.filter((t) => t.source === 'user')],
  ];
  return (
    <div className="list" role="listbox" aria-label="Tasks">
      {groups.map(([title, entries]) => (
        <div key={title} className="stack" style={{ gap: 2 }}>
          <div className="section-label">{title}</div>
          {entries.length === 0 ? <div className="muted small" style={{ padding: '0 12px' }}>None yet</div> : null}
          {entries.map((e) => (
            <button key={e.task.id} role="option" className="list-item" aria-selected={selected === e.task.id} onClick={() => onSelect(e.task.id)} data-testid={`task-${e.task.id}`}>
              <span className="title">
                {e.task.name}
                <span className="chip">{e.task.id}</span>
              </span>
              <span className="meta">
                {KIND_NAMES[e.task.kind]} · {e.task.kind === 'math' ? 'free-form answers' : `${e.task.labels.length} labels`}
              </span>
            </button>
          ))}
        </div>
      ))}
    </div>
  );
}

function TaskEditor({ entry, seed, reserved, onDone }: { entry: TaskEntry | null; seed?: TaskEntry; reserved: string[]; onDone(id: string): void }) {
  const readOnly = entry?.source === 'builtin';
  const isNew = entry === null;
  const ed = useTaskEditor(entry, seed, isNew ? reserved : NO_IDS, readOnly, onDone);
  const { draft, left, submitted, errorCount } = ed;
  return (
    <form
      className="card"
      aria-label="Task editor"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void ed.save(e.currentTarget);
      }}
      onBlur={(e) => {
        const field = (e.target as HTMLElement).closest('[data-field]')?.getAttribute('data-field');
        if (field && !left.has(field)) ed.setLeft(new Set([...left, field]));
      }}
    >
      <div className="card-head">
        <div>
          <h2>{isNew ? 'New task' : draft.name}</h2>
          <span className="sub">{readOnly ? 'Built-in task (read-only). Duplicate it to make your own version.' : isNew ? 'Saved in your data folder.' : 'Your task, saved in the data folder.'}</span>
        </div>
        <div className="row">
          {readOnly || (!submitted && left.size === 0) ? null : (
            <span className={`chip ${errorCount === 0 ? 'ok' : 'bad'}`} data-testid="task-validity" role="status">
              {errorCount === 0 ? 'Valid' : `${errorCount} to fix`}
            </span>
          )}
        </div>
      </div>
      <fieldset disabled={readOnly} style={{ border: 0, padding: 0, margin: 0 }} className="stack">
        <TaskFields draft={draft} errors={ed.errors} isNew={isNew} up={ed.up} upLabel={ed.upLabel} />
      </fieldset>
      <div className="row">
        <TaskActions entry={entry} readOnly={readOnly} saving={ed.saving} onDone={onDone} />
      </div>
    </form>
  );
}

const NO_IDS: string[] = [];

type Up = (patch: Partial<TaskDraft>) => void;
type UpLabel = (i: number, patch: Partial<TaskDraft['labels'][number]>) => void;

/** The editor's draft, which problems are shown yet (a field once left, all on Save), and saving. */
function useTaskEditor(entry: TaskEntry | null, seed: TaskEntry | undefined, reserved: string[], readOnly: boolean, onDone: (id: string) => void) {
  const saveTask = useStore((s) => s.saveTask);
  const [draft, setDraft] = useState<TaskDraft>(() => {
    if (entry) return draftFromTask(entry.task);
    // A duplicate starts as a copy of the built-in under a fresh id.
    if (seed) return { ...draftFromTask(seed.task), id: `${seed.task.id}-copy`, name: `${seed.task.name} (copy)` };
    return blankDraft();
  });
  const [saving, setSaving] = useState(false);
  const base = entry?.task ?? seed?.task;
  const check = useMemo(() => checkDraft(draft, base, reserved), [draft, base, reserved]);
  // A problem is said once its field has been left, or on Save: never on a blank form before anything is typed.
  const [left, setLeft] = useState<ReadonlySet<string>>(() => new Set());
  const [submitted, setSubmitted] = useState(false);
  const shown = (path: string) => submitted || left.has(path) || (path.startsWith('labels.') && left.has(path.split('.').slice(0, 2).join('.')));
  const errors = readOnly ? {} : Object.fromEntries(Object.entries(check.errors).filter(([path]) => shown(path)));
  const up: Up = (patch) => setDraft((d) => ({ ...d, ...patch }));
  const upLabel: UpLabel = (i, patch) => setDraft((d) => ({ ...d, labels: d.labels.map((l, j) => (j === i ? { ...l, ...patch } : l)) }));
  const errorCount = Object.keys(check.errors).length;

  const save = async (form: HTMLFormElement) => {
    setSubmitted(true);
    if (!check.task) {
      // Take the user to the first field that needs them, once this render has marked them.
      requestAnimationFrame(() => form.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    setSaving(true);
    const saved = await saveTask(check.task);
    setSaving(false);
    if (saved) onDone(saved.task.id);
  };
  return { draft, errors, errorCount, left, setLeft, submitted, saving, up, upLabel, save };
}

/** The task's fields: id, name, kind, instruction, paraphrase rule, topics, and its labels or answer format. */
function TaskFields({ draft, errors, isNew, up, upLabel }: { draft: TaskDraft; errors: Record<string, string>; isNew: boolean; up: Up; upLabel: UpLabel }) {
  return (
    <>
      <div className="grid-3">
        <label className="field" data-field="id">
          <span>Id</span>
          <input type="text" value={draft.id} disabled={!isNew} onChange={(e) => up({ id: e.target.value })} aria-invalid={!!errors.id} placeholder="my-task" data-testid="task-id" />
          <FieldError errors={errors} path="id" />
        </label>
        <label className="field" data-field="name">
          <span>Name</span>
          <input type="text" value={draft.name} onChange={(e) => up({ name: e.target.value })} aria-invalid={!!errors.name} data-testid="task-name" />
          <FieldError errors={errors} path="name" />
        </label>
        <label className="field">
          <span>Kind</span>
          <select value={draft.kind} onChange={(e) => up({ kind: e.target.value as TaskDraft['kind'], evaluatorMaxTokens: e.target.value === 'math' ? 256 : draft.evaluatorMaxTokens })}>
            {Object.entries(KIND_NAMES).map(([k, v]) => (
              <option key={k} value={k}>
                {v}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label className="field">
        <span>Description</span>
        <input type="text" value={draft.description} onChange={(e) => up({ description: e.target.value })} />
      </label>
      <label className="field" data-field="instruction">
        <span>Instruction for the evaluator</span>
        <textarea rows={4} value={draft.instruction} onChange={(e) => up({ instruction: e.target.value })} aria-invalid={!!errors.instruction} data-testid="task-instruction" placeholder="Classify the sentiment of the sentence as positive or negative." />
        <FieldError errors={errors} path="instruction" />
      </label>
      <div className="grid-3">
        <label className="field" data-field="inputName">
          <span>Input name</span>
          <input type="text" value={draft.inputName} onChange={(e) => up({ inputName: e.target.value })} aria-invalid={!!errors.inputName} />
          <FieldError errors={errors} path="inputName" />
        </label>
        <label className="field" data-field="preserve">
          <span>A paraphrase must preserve</span>
          <input type="text" value={draft.preserve} onChange={(e) => up({ preserve: e.target.value })} aria-invalid={!!errors.preserve} placeholder="the sentiment and its intensity" data-testid="task-preserve" />
          <FieldError errors={errors} path="preserve" />
        </label>
        <NumberField label="Evaluator token limit" value={draft.evaluatorMaxTokens} min={1} max={4096} onChange={(v) => up({ evaluatorMaxTokens: v })} />
      </div>
      <label className="field" data-field="topics">
        <span>Shared topic pool {draft.kind === 'math' ? '' : '(for labels without their own)'}</span>
        <TagInput label="Shared topics" value={draft.topics} onChange={(topics) => up({ topics })} placeholder="Type a topic and press Enter" testId="task-topics" invalid={!!errors.topics} />
        <FieldError errors={errors} path="topics" />
      </label>
      {draft.kind === 'math' ? (
        <label className="field">
          <span>Answer format</span>
          <select value={draft.answerFormat} onChange={(e) => up({ answerFormat: e.target.value as TaskDraft['answerFormat'] })}>
            <option value="">unspecified</option>
            <option value="integer">integer</option>
            <option value="tex">TeX</option>
          </select>
        </label>
      ) : (
        <LabelsEditor draft={draft} errors={errors} up={up} upLabel={upLabel} />
      )}
    </>
  );
}

/** Save or duplicate, delete a task of one's own, and take the task to Classify. */
function TaskActions({ entry, readOnly, saving, onDone }: { entry: TaskEntry | null; readOnly: boolean; saving: boolean; onDone(id: string): void }) {
  const deleteTask = useStore((s) => s.deleteTask);
  return (
    <>
      {readOnly ? (
        <button type="button" className="btn" onClick={() => onDone(`new:${entry?.task.id}`)} data-testid="task-duplicate">
          Duplicate as a new task
        </button>
      ) : (
        <button type="submit" className="btn primary" disabled={saving} data-testid="task-save">
          {saving ? 'Saving…' : 'Save task'}
        </button>
      )}
      {entry?.source === 'user' ? (
        <button
          type="button"
          className="btn danger"
          onClick={() => {
            if (window.confirm(`Delete task "${entry.task.name}"?`)) void deleteTask(entry.task.id).then((ok) => ok && onDone(''));
          }}
        >
          Delete
        </button>
      ) : null}
      <span className="spacer" />
      {entry ? (
        <button
          type="button"
          className="btn"
          onClick={() => {
            useStore.getState().setCurrentTask(entry.task.id);
            useStore.getState().navigate({ view: 'classify' });
          }}
          data-testid="task-use"
        >
          Use in Classify →
        </button>
      ) : null}
    </>
  );
}

/** The labels of a classification task: their order, names, style rules and topics, and the default label. */
function LabelsEditor({
  draft,
  errors,
  up,
  upLabel,
}: {
  draft: TaskDraft;
  errors: Record<string, string>;
  up(patch: Partial<TaskDraft>): void;
  upLabel(i: number, patch: Partial<TaskDraft['labels'][number]>): void;
}) {
  const labelNames = draft.labels.map((l) => l.name.trim()).filter(Boolean);
  return (
    <div className="stack">
      <div className="row">
        <h3>Labels</h3>
        <span className="muted small">in order; the default label decides the last ties</span>
        <span className="spacer" />
        <label className="field inline">
          <span>Default label</span>
          <select value={draft.defaultLabel} onChange={(e) => up({ defaultLabel: e.target.value })} style={{ width: 160 }}>
            <option value="">(first in order)</option>
            {labelNames.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </div>
      <FieldError errors={errors} path="labels" />
      <FieldError errors={errors} path="defaultLabel" />
      {draft.labels.map((l, i) => (
        <div className="label-editor" key={i} data-testid={`label-${i}`}>
          <div className="row">
            <LabelChip label={l.name.trim() || `label ${i + 1}`} labels={labelNames.length ? labelNames : [l.name]} />
            <label className="field" style={{ flex: 1 }} data-field={`labels.${i}.name`}>
              <span className="sr-only">Label {i + 1} name</span>
              <input type="text" value={l.name} placeholder={`label ${i + 1}`} onChange={(e) => upLabel(i, { name: e.target.value })} aria-invalid={!!errors[`labels.${i}.name`]} data-testid={`label-${i}-name`} />
            </label>
            <button type="button" className="btn ghost small" onClick={() => up({ labels: draft.labels.filter((_, j) => j !== i) })} aria-label={`Remove label ${i + 1}`}>
              Remove
            </button>
          </div>
          <FieldError errors={errors} path={`labels.${i}.name`} />
          <div className="grid-2">
            <label className="field">
              <span>Style rules</span>
              <TagInput label={`Style rules of label ${i + 1}`} value={l.style} onChange={(style) => upLabel(i, { style })} placeholder="praise, enjoyment" testId={`label-${i}-style`} />
            </label>
            <label className="field" data-field={`labels.${i}.topics`}>
              <span>Topics</span>
              <TagInput label={`Topics of label ${i + 1}`} value={l.topics} onChange={(topics) => upLabel(i, { topics })} placeholder="empty: use the shared pool" testId={`label-${i}-topics`} invalid={!!errors[`labels.${i}.topics`]} />
              <FieldError errors={errors} path={`labels.${i}.topics`} />
            </label>
          </div>
        </div>
      ))}
      <div>
        <button type="button" className="btn small" onClick={() => up({ labels: [...draft.labels, { name: '', style: [], topics: [] }] })}>
          + Add label
        </button>
      </div>
    </div>
  );
}

export function TasksView() {
  const tasks = useStore((s) => s.tasks);
  const route = useStore((s) => s.route);
  const navigate = useStore((s) => s.navigate);
  const selected = route.id;
  const reserved = useMemo(() => tasks.filter((t) => t.source === 'builtin').map((t) => t.task.id), [tasks]);
  const duplicateOf = selected?.startsWith('new:') ? tasks.find((t) => t.task.id === selected.slice(4)) : undefined;
  const entry = selected && !selected.startsWith('new') ? (tasks.find((t) => t.task.id === selected) ?? null) : null;
  const editorKey = selected ?? 'none';
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Tasks</h1>
          <p>What to classify and how: the instruction, the labels with their style rules, and the topic pools the generator draws on.</p>
        </div>
        <button className="btn primary" onClick={() => navigate({ view: 'tasks', id: 'new' })} data-testid="task-new">
          + New task
        </button>
      </div>
      <div className="split">
        <div className="card" style={{ padding: 8 }}>
          <TaskList tasks={tasks} selected={selected} onSelect={(id) => navigate({ view: 'tasks', id })} />
        </div>
        {selected === 'new' || duplicateOf ? (
          <TaskEditor key={editorKey} entry={null} seed={duplicateOf} reserved={reserved} onDone={(id) => navigate({ view: 'tasks', id })} />
        ) : entry ? (
          <TaskEditor key={editorKey} entry={entry} reserved={reserved} onDone={(id) => navigate({ view: 'tasks', id: id || undefined })} />
        ) : (
          <div className="card empty">
            <p>
              Choose a task on the left, or{' '}
              <a
                href="#/tasks/new"
                onClick={(e) => {
                  e.preventDefault();
                  navigate({ view: 'tasks', id: 'new' });
                }}
              >
                create a new one
              </a>
              .
            </p>
          </div>
        )}
      </div>
    </div>
  );
}
