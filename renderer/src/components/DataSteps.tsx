// The data steps Evaluate and Sweep both begin with: 1 · a data file (dropped, chosen or a path
// on the machine running TATRA) and 2 · its columns and the gold values' task labels. Both edit
// the store's one draft, so a file previewed in one view is still mapped in the other.
import { useMemo, useRef, useState } from 'react';
import type { DataPreview } from '../../../electron/common/contract/jobs';
import { ErrorBanner, TableWrap } from './Common';
import { count } from './labels';
import { useStore } from '../store';
import { taskById } from '../store/tasksSlice';

export function DataStep() {
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const previewData = useStore((s) => s.previewData);
  const uploadData = useStore((s) => s.uploadData);
  const [over, setOver] = useState(false);
  const fileRef = useRef<HTMLInputElement>(null);
  const pick = (files: FileList | null) => {
    const f = files?.[0];
    if (f) void uploadData(f);
  };
  return (
    <div className="card" data-step="data">
      <div className="card-head">
        <h2>1 · Data</h2>
        <span className="sub">CSV, TSV or JSONL (the paper's messages/solution format or flat objects)</span>
      </div>
      <div
        className={`dropzone ${over ? 'over' : ''}`}
        role="button"
        tabIndex={0}
        onClick={() => fileRef.current?.click()}
        onKeyDown={(e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            fileRef.current?.click();
          }
        }}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          pick(e.dataTransfer.files);
        }}
        data-testid="dropzone"
      >
        <strong>Drop a data file here, or click to choose one</strong>
        <span className="small">It is copied into the data folder of the machine running TATRA.</span>
        <input ref={fileRef} type="file" accept=".csv,.tsv,.jsonl,.json,.txt" hidden onChange={(e) => pick(e.target.files)} data-testid="file-input" />
      </div>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          void previewData();
        }}
      >
        <label className="field" style={{ flex: 1 }}>
          <span>…or a path on that machine</span>
          <input type="text" value={draft.path} onChange={(e) => setDraft({ path: e.target.value, fileName: '' })} placeholder="/data/sst2_test.jsonl" spellCheck={false} data-testid="data-path" />
        </label>
        <button className="btn" type="submit" disabled={!draft.path.trim() || draft.previewing} style={{ alignSelf: 'flex-end' }} data-testid="data-preview">
          {draft.previewing ? 'Reading…' : 'Preview'}
        </button>
      </form>
      <ErrorBanner message={draft.previewError} title="Cannot read the file" />
    </div>
  );
}

/** The gold values are mapped to the labels of the task chosen in step 3 (the store's current task). */
export function MappingStep() {
  const draft = useStore((s) => s.draft);
  const p = draft.preview;
  if (!p) {
    // The step is there before a file is: the numbering never jumps from 1 to 3.
    return (
      <div className="card" data-testid="mapping-empty">
        <div className="card-head">
          <h2>2 · Columns and labels</h2>
          <span className="sub">{draft.previewing ? 'reading the file…' : 'after step 1: which column is the input, which the gold label'}</span>
        </div>
      </div>
    );
  }
  return (
    <div className="card" data-testid="mapping">
      <div className="card-head">
        <h2>2 · Columns and labels</h2>
        <span className="sub">
          <strong>{draft.fileName || p.path}</strong> · {p.format.toUpperCase()} · {p.rowCount === null ? 'many' : p.rowCount.toLocaleString()} rows{p.emptyInputs ? ` · ${p.emptyInputs} empty inputs skipped` : ''}
        </span>
      </div>
      <PreviewTable preview={p} inputColumn={draft.inputColumn} goldColumn={draft.goldColumn} />
      <ColumnChoice preview={p} />
      <GoldLabelMap preview={p} />
    </div>
  );
}

/** The file's first rows, the input and gold columns marked. */
function PreviewTable({ preview: p, inputColumn, goldColumn }: { preview: DataPreview; inputColumn: string | null; goldColumn: string | null }) {
  const shownCols = p.columns.slice(0, 6);
  return (
    <TableWrap label="First rows of the file" style={{ maxHeight: 220 }}>
      <table className="data" data-testid="preview-table">
        <thead>
          <tr>
            {shownCols.map((c) => (
              <th key={c}>
                {c}
                {c === inputColumn ? <span className="chip run" style={{ marginLeft: 6 }}>input</span> : null}
                {c === goldColumn ? <span className="chip ok" style={{ marginLeft: 6 }}>gold</span> : null}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {p.sample.slice(0, 8).map((row, i) => (
            <tr key={i}>
              {shownCols.map((c) => (
                <td key={c} style={{ maxWidth: 420, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }}>
                  {row[c]}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** Which column is the input and which the gold label; choosing one previews the file again. */
function ColumnChoice({ preview: p }: { preview: DataPreview }) {
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const previewData = useStore((s) => s.previewData);
  return (
    <div className="grid-2">
      <label className="field">
        <span>Input column</span>
        <select value={draft.inputColumn ?? ''} onChange={(e) => (e.target.value ? void previewData(undefined, { inputColumn: e.target.value }) : setDraft({ inputColumn: null }))} data-testid="input-column">
          <option value="">choose…</option>
          {p.columns.map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
      </label>
      <label className="field">
        <span>Gold label column (optional: without it, no accuracy)</span>
        <select
          value={draft.goldColumn ?? ''}
          onChange={(e) => void previewData(undefined, { goldColumn: e.target.value || null })}
          data-testid="gold-column"
        >
          <option value="">none</option>
          {p.columns.map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** Each gold value in the file and the task label it stands for; shown once a gold column is chosen. */
function GoldLabelMap({ preview: p }: { preview: DataPreview }) {
  const tasks = useStore((s) => s.tasks);
  const taskId = useStore((s) => s.currentTaskId);
  const labels = useMemo(() => taskById(tasks, taskId)?.labels.map((l) => l.name) ?? [], [tasks, taskId]);
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  // A gold column just picked has its values once the file is read again: none of the last one's meanwhile.
  if (!draft.goldColumn || draft.goldColumn !== p.goldColumn || labels.length === 0 || p.goldValues.length === 0) return null;
  const unmapped = p.goldValues.filter((g) => !draft.labelMap[g.value]);
  return (
    <div className="stack">
      <h3>Gold values → task labels</h3>
      <TableWrap label="Gold values and their task labels">
        <table className="data" data-testid="label-map">
          <thead>
            <tr>
              <th>Value in the file</th>
              <th className="num">Rows</th>
              <th>Task label</th>
            </tr>
          </thead>
          <tbody>
            {p.goldValues.slice(0, 50).map((g) => (
              <tr key={g.value}>
                <td>
                  <code>{g.value}</code>
                </td>
                <td className="num">{g.count.toLocaleString()}</td>
                <td>
                  {/* While the file is read again its answer suggests the mapping afresh: a choice made meanwhile would be lost. */}
                  <select
                    value={draft.labelMap[g.value] ?? ''}
                    onChange={(e) => setDraft({ labelMap: { ...draft.labelMap, [g.value]: e.target.value } })}
                    disabled={draft.previewing}
                    aria-label={`Label for ${g.value}`}
                    style={{ width: 200 }}
                  >
                    <option value="">(unmapped: no gold)</option>
                    {labels.map((l) => (
                      <option key={l}>{l}</option>
                    ))}
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {unmapped.length > 0 ? (
        <div className="banner warn">
          {count(unmapped.length, 'value')} ({count(unmapped.reduce((a, g) => a + g.count, 0), 'row')}) {unmapped.length === 1 ? 'maps' : 'map'} to no label; those rows will have no gold.
        </div>
      ) : null}
    </div>
  );
}
