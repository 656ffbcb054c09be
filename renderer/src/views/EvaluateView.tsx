// Evaluate: load a CSV/TSV/JSONL file, map its columns and labels, start a job; watch it run;
// read its results; export; browse the history and resume an interrupted job.
import { useEffect, useMemo, useRef, useState } from 'react';
import type { JobStatus, JobSummary } from '../../../electron/common/contract/jobs';
import { ROW_LIMIT } from '../../../electron/common/settings';
import { DEFAULT_SETTINGS, type TatraSettings } from '../../../electron/common/tatra';
import { ErrorBanner, LabelChip, Metric, ProgressBar } from '../components/Common';
import { ConfidenceHistogram, ConfusionMatrix, RunsCurve } from '../components/EvalCharts';
import { ModelPicker } from '../components/ModelPicker';
import { RunSettingsFields } from '../components/RunSettingsFields';
import { RowsTable } from '../components/RowsTable';
import { duration, pct, shortModel } from '../components/labels';
import { useStore } from '../store';
import { taskById } from '../store/tasksSlice';

const STATUS_CHIP: Record<JobStatus, string> = {
  queued: 'chip',
  running: 'chip run',
  paused: 'chip warn',
  interrupted: 'chip warn',
  cancelled: 'chip',
  done: 'chip ok',
  failed: 'chip bad',
};

export function StatusChip({ status }: { status: JobStatus }) {
  return (
    <span className={STATUS_CHIP[status]} data-testid="job-status">
      {status}
    </span>
  );
}

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
    <div className="card">
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
          <input type="text" value={draft.path} onChange={(e) => setDraft({ path: e.target.value })} placeholder="/data/sst2_test.jsonl" spellCheck={false} data-testid="data-path" />
        </label>
        <button className="btn" type="submit" disabled={!draft.path.trim() || draft.previewing} style={{ alignSelf: 'flex-end' }} data-testid="data-preview">
          {draft.previewing ? 'Reading…' : 'Preview'}
        </button>
      </form>
      <ErrorBanner message={draft.previewError} title="Cannot read the file" />
    </div>
  );
}

export function MappingStep({ labels }: { labels: string[] }) {
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const previewData = useStore((s) => s.previewData);
  const p = draft.preview;
  if (!p) return null;
  const shownCols = p.columns.slice(0, 6);
  const unmapped = p.goldValues.filter((g) => !draft.labelMap[g.value]);
  return (
    <div className="card" data-testid="mapping">
      <div className="card-head">
        <h2>2 · Columns and labels</h2>
        <span className="sub">
          {p.format.toUpperCase()} · {p.rowCount === null ? 'many' : p.rowCount.toLocaleString()} rows{p.emptyInputs ? ` · ${p.emptyInputs} empty inputs skipped` : ''}
        </span>
      </div>
      <div className="table-wrap" style={{ maxHeight: 220 }}>
        <table className="data" data-testid="preview-table">
          <thead>
            <tr>
              {shownCols.map((c) => (
                <th key={c}>
                  {c}
                  {c === draft.inputColumn ? <span className="chip run" style={{ marginLeft: 6 }}>input</span> : null}
                  {c === draft.goldColumn ? <span className="chip ok" style={{ marginLeft: 6 }}>gold</span> : null}
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
      </div>
      <div className="grid-2">
        <label className="field">
          <span>Input column</span>
          <select value={draft.inputColumn ?? ''} onChange={(e) => setDraft({ inputColumn: e.target.value || null })} data-testid="input-column">
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
            onChange={(e) => {
              setDraft({ goldColumn: e.target.value || null });
              void previewData();
            }}
            data-testid="gold-column"
          >
            <option value="">none</option>
            {p.columns.map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </label>
      </div>
      {draft.goldColumn && labels.length > 0 && p.goldValues.length > 0 ? (
        <div className="stack">
          <h3>Gold values → task labels</h3>
          <div className="table-wrap">
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
                      <select value={draft.labelMap[g.value] ?? ''} onChange={(e) => setDraft({ labelMap: { ...draft.labelMap, [g.value]: e.target.value } })} aria-label={`Label for ${g.value}`} style={{ width: 200 }}>
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
          </div>
          {unmapped.length > 0 ? (
            <div className="banner warn">
              {unmapped.length} value{unmapped.length === 1 ? '' : 's'} ({unmapped.reduce((a, g) => a + g.count, 0)} rows) map to no label; those rows will have no gold.
            </div>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function SettingsStep() {
  const tasks = useStore((s) => s.tasks);
  const taskId = useStore((s) => s.currentTaskId);
  const setTask = useStore((s) => s.setCurrentTask);
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const settings = useStore((s) => s.settings);
  const startJob = useStore((s) => s.startJob);
  const navigate = useStore((s) => s.navigate);
  const previewData = useStore((s) => s.previewData);
  const [tatra, setTatra] = useState<TatraSettings>(settings?.tatra ?? DEFAULT_SETTINGS);
  const [generator, setGenerator] = useState(settings?.generator ?? '');
  const [evaluator, setEvaluator] = useState(settings?.evaluator ?? settings?.generator ?? '');
  const [starting, setStarting] = useState(false);
  const [seeded, setSeeded] = useState(false);
  if (settings && !seeded) {
    setSeeded(true);
    setTatra(settings.tatra);
    setGenerator(settings.generator ?? '');
    setEvaluator(settings.evaluator ?? settings.generator ?? '');
  }
  const ready = !!draft.preview && !!draft.inputColumn && generator.trim() !== '' && evaluator.trim() !== '' && !starting;
  const start = async () => {
    if (!ready || !draft.inputColumn) return;
    setStarting(true);
    const labelMap = Object.fromEntries(Object.entries(draft.labelMap).filter(([, v]) => v));
    const job = await startJob({
      taskId,
      dataPath: draft.path,
      inputColumn: draft.inputColumn,
      goldColumn: draft.goldColumn,
      labelMap,
      generator,
      evaluator,
      settings: tatra,
      limit: draft.limit ?? undefined,
      baseline: draft.baseline,
      name: draft.name || undefined,
    });
    setStarting(false);
    if (job) navigate({ view: 'evaluate', id: job.id });
  };
  return (
    <div className="card">
      <div className="card-head">
        <h2>3 · Task, models and settings</h2>
      </div>
      <div className="grid-3">
        <label className="field">
          <span>Task</span>
          <select
            value={taskId}
            onChange={(e) => {
              setTask(e.target.value);
              if (draft.preview) void previewData();
            }}
            data-testid="eval-task"
          >
            {tasks.map((t) => (
              <option key={t.task.id} value={t.task.id}>
                {t.task.name} ({t.task.id})
              </option>
            ))}
          </select>
        </label>
        <ModelPicker label="Generator" value={generator} onChange={setGenerator} testId="eval-generator" />
        <ModelPicker label="Evaluator" value={evaluator} onChange={setEvaluator} testId="eval-evaluator" />
      </div>
      <RunSettingsFields value={tatra} onChange={setTatra} testIdPrefix="eval">
        <label className="field">
          <span>Only the first rows</span>
          <input type="number" min={ROW_LIMIT.min} max={ROW_LIMIT.max} value={draft.limit ?? ''} placeholder="all" onChange={(e) => setDraft({ limit: e.target.value ? Math.min(ROW_LIMIT.max, Math.max(ROW_LIMIT.min, Math.floor(Number(e.target.value)))) : null })} style={{ width: 100 }} data-testid="eval-limit" />
        </label>
      </RunSettingsFields>
      <div className="row">
        <label className="field inline">
          <input type="checkbox" checked={draft.baseline} onChange={(e) => setDraft({ baseline: e.target.checked })} /> Also run the zero-shot baseline
        </label>
        <label className="field" style={{ flex: 1, maxWidth: 360 }}>
          <span className="sr-only">Name</span>
          <input type="text" value={draft.name} onChange={(e) => setDraft({ name: e.target.value })} placeholder="Name for the history (optional)" />
        </label>
        <span className="spacer" />
        <button className="btn primary" disabled={!ready} onClick={() => void start()} data-testid="eval-start">
          {starting ? 'Starting…' : 'Start evaluation'}
        </button>
      </div>
    </div>
  );
}

function History() {
  const jobs = useStore((s) => s.jobs);
  const navigate = useStore((s) => s.navigate);
  const jobAction = useStore((s) => s.jobAction);
  return (
    <div className="card" data-testid="history">
      <div className="card-head">
        <h2>History</h2>
        <span className="sub">{jobs.length} evaluations</span>
      </div>
      {jobs.length === 0 ? (
        <p className="muted">No evaluations yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="data">
            <thead>
              <tr>
                <th>Name</th>
                <th>Task</th>
                <th>Models</th>
                <th>Status</th>
                <th className="num">Rows</th>
                <th className="num">Accuracy</th>
                <th>Started</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {jobs.map((j) => (
                <tr key={j.id} data-testid="history-row">
                  <td>
                    <a
                      href={`#/evaluate/${encodeURIComponent(j.id)}`}
                      onClick={(e) => {
                        e.preventDefault();
                        navigate({ view: 'evaluate', id: j.id });
                      }}
                    >
                      {j.name || j.id}
                    </a>
                  </td>
                  <td>{j.taskId}</td>
                  <td className="small">
                    {shortModel(j.generator)}
                    {j.evaluator !== j.generator ? ` → ${shortModel(j.evaluator)}` : ''}
                  </td>
                  <td>
                    <StatusChip status={j.status} />
                  </td>
                  <td className="num">
                    {j.done}/{j.total}
                  </td>
                  <td className="num">{pct(j.accuracy)}</td>
                  <td className="small muted">{new Date(j.createdAt).toLocaleString()}</td>
                  <td>
                    {j.status === 'interrupted' || j.status === 'paused' ? (
                      <button className="btn small" onClick={() => void jobAction(j.id, 'resume')}>
                        Resume
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function JobView({ jobId }: { jobId: string }) {
  const job = useStore((s) => s.jobs.find((j) => j.id === jobId));
  const progress = useStore((s) => s.progress[jobId]);
  const metrics = useStore((s) => s.metrics[jobId]);
  const tasks = useStore((s) => s.tasks);
  const refreshJob = useStore((s) => s.refreshJob);
  const loadMetrics = useStore((s) => s.loadMetrics);
  const jobAction = useStore((s) => s.jobAction);
  const exportJob = useStore((s) => s.exportJob);
  const navigate = useStore((s) => s.navigate);
  const [exported, setExported] = useState<{ path: string; url: string | null } | null>(null);

  useEffect(() => {
    void refreshJob(jobId);
    void loadMetrics(jobId);
  }, [jobId, refreshJob, loadMetrics]);

  // While it runs, metrics and rows refresh about twenty times over the job (every row of a
  // small one) and on every status change, driven by progress events rather than a timer.
  const done = progress?.done ?? job?.done ?? 0;
  const totalRows = progress?.total ?? job?.total ?? 0;
  const step = Math.max(1, Math.ceil(totalRows / 20));
  const refreshKey = `${job?.status ?? ''}:${Math.floor(done / step)}`;
  useEffect(() => {
    void loadMetrics(jobId);
  }, [refreshKey, jobId, loadMetrics]);

  const task = job ? taskById(tasks, job.taskId) : undefined;
  const labels = useMemo(() => task?.labels.map((l) => l.name) ?? [], [task]);
  if (!job) {
    return (
      <div className="page">
        <p className="muted">Loading evaluation {jobId}…</p>
      </div>
    );
  }
  const total = progress?.total ?? job.total;
  const running = job.status === 'running' || job.status === 'queued';
  const doExport = async (format: 'csv' | 'json') => {
    const out = await exportJob(jobId, format);
    if (!out) return;
    setExported(out);
    if (out.url) {
      const a = document.createElement('a');
      a.href = out.url;
      a.download = '';
      document.body.appendChild(a);
      a.click();
      a.remove();
    }
  };
  return (
    <div className="page" data-testid="job-view">
      <div className="page-head">
        <div>
          <div className="row">
            <button className="btn ghost small" onClick={() => navigate({ view: 'evaluate' })}>
              ← All evaluations
            </button>
          </div>
          <h1>
            {job.name || job.id} <StatusChip status={job.status} />
          </h1>
          <p>
            {task?.name ?? job.taskId} · {shortModel(job.generator)}
            {job.evaluator !== job.generator ? ` → ${shortModel(job.evaluator)}` : ''} · n={job.settings.n}, k={job.settings.k}, r={job.settings.r}, seed {job.settings.seed}, examples per {job.settings.scope}
          </p>
        </div>
        <div className="row">
          {job.status === 'running' ? (
            <button className="btn" onClick={() => void jobAction(jobId, 'pause')} data-testid="job-pause">
              Pause
            </button>
          ) : null}
          {job.status === 'paused' || job.status === 'interrupted' || job.status === 'failed' ? (
            <button className="btn primary" onClick={() => void jobAction(jobId, 'resume')} data-testid="job-resume">
              Resume
            </button>
          ) : null}
          {running || job.status === 'paused' ? (
            <button className="btn danger" onClick={() => void jobAction(jobId, 'cancel')} data-testid="job-cancel">
              Cancel
            </button>
          ) : null}
          <button className="btn" onClick={() => void doExport('csv')} data-testid="export-csv">
            Export CSV
          </button>
          <button className="btn" onClick={() => void doExport('json')} data-testid="export-json">
            Export JSON
          </button>
        </div>
      </div>
      {job.error ? <ErrorBanner message={job.error} title="The evaluation stopped" /> : null}
      {job.status === 'interrupted' ? <div className="banner warn">This evaluation was interrupted (the app stopped while it ran). Resume continues from the first unfinished row with the same examples and seeds.</div> : null}
      {exported ? (
        <div className="banner info" data-testid="export-done">
          Exported to <code>{exported.path}</code>
          {exported.url ? (
            <>
              {' '}
              · <a href={exported.url}>download again</a>
            </>
          ) : null}
        </div>
      ) : null}

      <div className="card" data-testid="job-progress">
        <div className="row">
          <strong>
            {done.toLocaleString()} / {total.toLocaleString()} rows
          </strong>
          <span className="muted small">
            {progress?.rowsPerMinute != null ? `${progress.rowsPerMinute.toFixed(1)} rows/min` : ''}
            {running && progress?.etaSeconds != null ? ` · about ${duration(progress.etaSeconds * 1000)} left` : ''}
          </span>
          <span className="spacer" />
          <span className="small">
            running accuracy <strong data-testid="running-accuracy">{pct(progress?.runningAccuracy ?? job.accuracy)}</strong>
          </span>
        </div>
        <ProgressBar value={total > 0 ? done / total : 0} label="Rows done" />
      </div>

      <div className="metrics">
        <Metric name="Accuracy" value={pct(metrics?.accuracy ?? null)} hint="Final vote against gold, over finished rows with gold" />
        <Metric name="Macro-F1" value={pct(metrics?.macroF1 ?? null)} />
        <Metric name="Rows scored" value={(metrics?.scored ?? 0).toLocaleString()} />
        {metrics?.baselineAccuracy != null ? <Metric name="Zero-shot baseline" value={pct(metrics.baselineAccuracy)} /> : null}
        {metrics?.lenientAccuracy != null ? <Metric name="Lenient (gold in output)" value={pct(metrics.lenientAccuracy)} hint="The reference code's score: the gold string appears anywhere in an output" /> : null}
      </div>

      {metrics ? (
        <div className="grid-2">
          <div className="card">
            <div className="card-head">
              <h2>Confusion matrix</h2>
              <span className="sub">rows: gold · columns: prediction</span>
            </div>
            {metrics.confusion.labels.length > 0 ? <ConfusionMatrix confusion={metrics.confusion} /> : <p className="muted">No labelled rows yet.</p>}
            <div className="card-head" style={{ marginTop: 8 }}>
              <h3>Confidence</h3>
              <span className="sub">rows by the winner’s share of the votes</span>
            </div>
            <ConfidenceHistogram buckets={metrics.confidenceHistogram} />
          </div>
          <div className="card">
            <div className="card-head">
              <h2>Accuracy after j runs</h2>
              <span className="sub">the vote over the first j runs; dashed: run j alone</span>
            </div>
            <RunsCurve metrics={metrics} />
            {metrics.perLabel.length > 0 ? (
              <table className="data">
                <thead>
                  <tr>
                    <th>Label</th>
                    <th className="num">Precision</th>
                    <th className="num">Recall</th>
                    <th className="num">F1</th>
                    <th className="num">Support</th>
                  </tr>
                </thead>
                <tbody>
                  {metrics.perLabel.map((l) => (
                    <tr key={l.label}>
                      <td>
                        <LabelChip label={l.label} labels={labels} />
                      </td>
                      <td className="num">{pct(l.precision)}</td>
                      <td className="num">{pct(l.recall)}</td>
                      <td className="num">{pct(l.f1)}</td>
                      <td className="num">{l.support}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </div>
        </div>
      ) : null}

      <div className="card">
        <div className="card-head">
          <h2>Rows</h2>
          <span className="sub">click a row for its examples, paraphrases and votes</span>
        </div>
        <RowsTable jobId={jobId} labels={labels} refreshKey={refreshKey} />
      </div>
    </div>
  );
}

export function EvaluateView() {
  const route = useStore((s) => s.route);
  const tasks = useStore((s) => s.tasks);
  const taskId = useStore((s) => s.currentTaskId);
  const labels = useMemo(() => taskById(tasks, taskId)?.labels.map((l) => l.name) ?? [], [tasks, taskId]);
  if (route.id) return <JobView jobId={route.id} key={route.id} />;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Evaluate</h1>
          <p>Run TATRA over a labelled file and see where it goes wrong. Jobs run in the background and survive a reload or a restart.</p>
        </div>
      </div>
      <DataStep />
      <MappingStep labels={labels} />
      <SettingsStep />
      <History />
    </div>
  );
}

export type { JobSummary };
