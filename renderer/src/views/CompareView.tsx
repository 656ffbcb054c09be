// Compare: pick generators and evaluators, a task and a data set; every pair runs as an
// evaluation job (evaluators of one generator share its examples and paraphrases). Results as a
// pair table, a generator × evaluator heatmap and grouped bars like the paper's cross-model table.
import { useEffect, useMemo, useRef, useState } from 'react';
import { useSeededField } from '../components/seededFields';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { comparisonMatrix, modelLabel, type ComparisonPair, type ComparisonRecord } from '../../../electron/common/contract/models';
import { ROW_LIMIT } from '../../../electron/common/settings';
import { DEFAULT_SETTINGS, type TatraSettings } from '../../../electron/common/tatra';
import { getApi, messageOf } from '../api/client';
import { ErrorBanner, NumberField, ProgressBar, TableWrap } from '../components/Common';
import { duration, heatCell, pct } from '../components/labels';
import { ChartFigure } from '../components/ChartFigure';
import { RunSettingsFields } from '../components/RunSettingsFields';
import { TaskSelect } from '../components/TaskSelect';
import { useResolvedColor } from '../components/VoteCharts';
import { useStore } from '../store';
import { Welcome } from '../components/Welcome';

const SERIES = ['var(--l0)', 'var(--l1)', 'var(--l2)', 'var(--l3)', 'var(--l4)', 'var(--l5)', 'var(--l6)', 'var(--l7)'];

function ModelChecklist(props: { title: string; value: string[]; onChange(v: string[]): void; testId: string }) {
  const library = useStore((s) => s.library);
  const remotes = useStore((s) => s.remoteModels);
  const loadRemotes = useStore((s) => s.loadRemoteModels);
  useEffect(() => {
    if (remotes === null) void loadRemotes(false);
  }, [remotes, loadRemotes]);
  const [typed, setTyped] = useState('');
  // Local GGUFs and remote models side by side: a comparison may mix them.
  const known = [...(library?.models.map((m) => m.path) ?? []), ...(remotes ?? []).map((r) => `remote:${r.entry.name}`)];
  const all = [...known, ...props.value.filter((p) => !known.includes(p))];
  const toggle = (p: string) => props.onChange(props.value.includes(p) ? props.value.filter((x) => x !== p) : [...props.value, p]);
  return (
    <fieldset className="field" data-testid={props.testId} style={{ border: 'none', padding: 0, margin: 0 }}>
      <span>
        {props.title} <span className="muted small">({props.value.length} chosen)</span>
      </span>
      <div className="stack" style={{ gap: 4, maxHeight: 180, overflow: 'auto' }}>
        {all.length === 0 && <span className="muted small">No models in the library; type a path below.</span>}
        {all.map((p) => (
          <label key={p} className="row small" style={{ gap: 6 }} title={p}>
            <input type="checkbox" checked={props.value.includes(p)} onChange={() => toggle(p)} />
            {library?.models.find((m) => m.path === p)?.name ?? modelLabel(p)}
            {library?.models.some((m) => m.path === p && m.name !== modelLabel(p)) && <span className="muted xs">{modelLabel(p)}</span>}
          </label>
        ))}
      </div>
      <div className="row" style={{ gap: 6 }}>
        <input
          type="text"
          placeholder="/path/to/model.gguf or remote:NAME"
          value={typed}
          spellCheck={false}
          onChange={(e) => setTyped(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && typed.trim()) {
              props.onChange([...new Set([...props.value, typed.trim()])]);
              setTyped('');
            }
          }}
        />
        <button
          className="btn small"
          disabled={!typed.trim()}
          onClick={() => {
            props.onChange([...new Set([...props.value, typed.trim()])]);
            setTyped('');
          }}
        >
          Add
        </button>
      </div>
    </fieldset>
  );
}

function SetupCard() {
  const currentTaskId = useStore((s) => s.currentTaskId);
  const start = useStore((s) => s.startComparison);
  const error = useStore((s) => s.compareError);
  const [task, setTask] = useState(currentTaskId);
  const [dataset, setDataset] = useState('');
  const saved = useStore((s) => s.settings);
  // Start from the chosen models (the first one a newcomer adds is chosen for every form).
  const chosenGenerator = saved?.generator ?? null;
  const chosenEvaluator = saved?.evaluator ?? chosenGenerator;
  const [generators, setGenerators] = useSeededField<string[]>(useMemo(() => (chosenGenerator ? [chosenGenerator] : []), [chosenGenerator]));
  const [evaluators, setEvaluators] = useSeededField<string[]>(useMemo(() => (chosenEvaluator ? [chosenEvaluator] : []), [chosenEvaluator]));
  const [settings, setSettings] = useState<TatraSettings>({ ...DEFAULT_SETTINGS, r: 1 });
  const [limit, setLimit] = useState(50);
  const [textColumn, setTextColumn] = useState('');
  const [labelColumn, setLabelColumn] = useState('');
  const [busy, setBusy] = useState(false);
  const [uploadError, setUploadError] = useState<string | null>(null);
  const fileRef = useRef<HTMLInputElement>(null);
  const ready = task && dataset.trim() && generators.length > 0 && evaluators.length > 0 && !busy;
  const run = async () => {
    setBusy(true);
    await start({
      task,
      dataset: dataset.trim(),
      generators,
      evaluators,
      settings,
      limit,
      ...(textColumn.trim() ? { textColumn: textColumn.trim() } : {}),
      ...(labelColumn.trim() ? { labelColumn: labelColumn.trim() } : {}),
    });
    setBusy(false);
  };
  return (
    <div className="card">
      <div className="card-head">
        <h2>New comparison</h2>
        <span className="sub">
          {generators.length} × {evaluators.length} = {generators.length * evaluators.length} pairs, each an evaluation job
        </span>
      </div>
      <div className="grid-2">
        <TaskSelect value={task} onChange={setTask} testId="compare-task" />
        <label className="field">
          <span>Data set (CSV, TSV or JSONL with gold labels)</span>
          <div className="row" style={{ gap: 6 }}>
            <input type="text" value={dataset} placeholder="/path/to/data.csv" spellCheck={false} data-testid="compare-data" onChange={(e) => setDataset(e.target.value)} style={{ flex: 1 }} />
            <button className="btn small" onClick={() => fileRef.current?.click()}>
              Upload…
            </button>
            <input
              ref={fileRef}
              type="file"
              accept=".csv,.tsv,.jsonl,.txt"
              hidden
              onChange={(e) => {
                const f = e.target.files?.[0];
                if (!f) return;
                setUploadError(null);
                getApi()
                  .upload(f)
                  .then((r) => setDataset(r.path))
                  .catch((err: unknown) => setUploadError(messageOf(err)));
              }}
            />
          </div>
        </label>
        <ModelChecklist title="Generators (write examples and paraphrases)" value={generators} onChange={setGenerators} testId="compare-generators" />
        <ModelChecklist title="Evaluators (classify)" value={evaluators} onChange={setEvaluators} testId="compare-evaluators" />
      </div>
      <RunSettingsFields value={settings} onChange={setSettings} testIdPrefix="compare">
        <NumberField label="rows (limit)" value={limit} min={ROW_LIMIT.min} max={ROW_LIMIT.max} onChange={setLimit} testId="compare-limit" />
        <label className="field">
          <span>Text column</span>
          <input type="text" value={textColumn} placeholder="guessed" onChange={(e) => setTextColumn(e.target.value)} />
        </label>
        <label className="field">
          <span>Label column</span>
          <input type="text" value={labelColumn} placeholder="guessed" onChange={(e) => setLabelColumn(e.target.value)} />
        </label>
      </RunSettingsFields>
      <ErrorBanner message={error ?? uploadError} />
      <div className="row" style={{ marginTop: 12 }}>
        <button className="btn primary" disabled={!ready} onClick={() => void run()} data-testid="compare-run">
          {busy ? 'Starting…' : 'Run comparison'}
        </button>
      </div>
    </div>
  );
}

function statusChip(s: ComparisonPair['status'] | ComparisonRecord['status']): string {
  return s === 'done' ? 'chip ok' : s === 'running' ? 'chip run' : s === 'error' ? 'chip bad' : 'chip';
}

function Heatmap({ rec }: { rec: ComparisonRecord }) {
  const m = comparisonMatrix(rec);
  const values = m.flat().filter((v): v is number => v !== null);
  const lo = Math.min(...values, 1);
  const hi = Math.max(...values, 0);
  return (
    <div className="stack" style={{ gap: 6 }} data-testid="compare-heatmap">
      <div className="row" style={{ justifyContent: 'center' }}>
        <span className="axis-title">Evaluator →</span>
      </div>
      <div className="heat" style={{ gridTemplateColumns: `minmax(120px, auto) repeat(${rec.spec.evaluators.length}, minmax(80px, 1fr))` }} role="table" aria-label="Accuracy, generators in rows, evaluators in columns">
        <div role="row" style={{ display: 'contents' }}>
          <div className="lab axis-title" role="columnheader">
            Generator ↓
          </div>
          {rec.spec.evaluators.map((e) => (
            <div className="lab col" key={`c-${e}`} title={e} role="columnheader">
              {modelLabel(e)}
            </div>
          ))}
        </div>
        {rec.spec.generators.map((g, i) => (
          <div role="row" style={{ display: 'contents' }} key={`r-${g}`}>
            <div className="lab" title={g} role="rowheader">
              {modelLabel(g)}
            </div>
            {rec.spec.evaluators.map((e, j) => {
              const v = m[i]?.[j] ?? null;
              return (
                <div key={`${g}-${e}`} className="cell" role="cell" data-testid="heat-cell" title={`${modelLabel(g)} → ${modelLabel(e)}: ${pct(v)}`} style={heatCell(v === null ? null : hi <= lo ? 0.5 : (v - lo) / (hi - lo))}>
                  {pct(v)}
                </div>
              );
            })}
          </div>
        ))}
      </div>
    </div>
  );
}

function Bars({ rec }: { rec: ComparisonRecord }) {
  const color = useResolvedColor();
  const m = comparisonMatrix(rec);
  const data = rec.spec.generators.map((g, i) => ({
    generator: modelLabel(g),
    ...Object.fromEntries(rec.spec.evaluators.map((e, j) => [modelLabel(e), m[i]?.[j] === null || m[i]?.[j] === undefined ? 0 : Math.round(m[i]![j]! * 1000) / 10])),
  }));
  const text = {
    caption: 'Accuracy by generator, one column per evaluator',
    columns: ['Generator', ...rec.spec.evaluators.map((e) => `evaluator ${modelLabel(e)}`)],
    rows: rec.spec.generators.map((g, i) => [modelLabel(g), ...rec.spec.evaluators.map((_, j) => pct(m[i]?.[j] ?? null))]),
  };
  return (
    <ChartFigure data={text} testId="compare-chart" style={{ width: '100%', height: 260 }} title="Accuracy by generator, one bar per evaluator">
      <ResponsiveContainer width="100%" height={236}>
        <BarChart data={data} margin={{ top: 8, right: 16, bottom: 8, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid vertical={false} stroke={color('var(--border)')} />
          <XAxis dataKey="generator" stroke={color('var(--muted)')} fontSize={12} />
          <YAxis domain={[0, 100]} stroke={color('var(--muted)')} fontSize={12} unit="%" />
          <Tooltip formatter={(v) => `${String(v)}%`} contentStyle={{ background: color('var(--panel)'), border: `1px solid ${color('var(--border)')}` }} />
          <Legend wrapperStyle={{ fontSize: 12 }} />
          {rec.spec.evaluators.map((e, j) => (
            <Bar key={e} dataKey={modelLabel(e)} name={`evaluator ${modelLabel(e)}`} fill={color(SERIES[j % SERIES.length]!)} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}

function ResultCard({ rec }: { rec: ComparisonRecord }) {
  const cancel = useStore((s) => s.cancelComparison);
  const navigate = useStore((s) => s.navigate);
  const s = rec.spec.settings;
  return (
    <div className="card" data-testid="compare-result" data-status={rec.status}>
      <div className="card-head">
        <h2>
          {rec.spec.task} · {modelLabel(rec.spec.dataset)} <span className={statusChip(rec.status)}>{rec.status}</span>
        </h2>
        <span className="sub">
          n={s.n} k={s.k} r={s.r} seed={s.seed}
          {rec.spec.limit ? ` · ${rec.spec.limit} rows` : ''}
        </span>
        <span className="spacer" />
        {rec.status === 'running' && (
          <button className="btn ghost small" onClick={() => void cancel(rec.id)}>
            Cancel
          </button>
        )}
      </div>
      <ErrorBanner message={rec.error} />
      {rec.warnings.map((w) => (
        <ErrorBanner key={w} title="Warning" message={w} />
      ))}
      <TableWrap label="Pairs of the comparison">
        <table className="data" data-testid="compare-table">
          <thead>
            <tr>
              <th>Generator</th>
              <th>Evaluator</th>
              <th>Status</th>
              <th className="num">Accuracy</th>
              <th className="num">Macro-F1</th>
              <th className="num">Rows</th>
              <th className="num">Time</th>
              <th className="num">Tokens</th>
              <th>Job</th>
            </tr>
          </thead>
          <tbody>
            {rec.pairs.map((p) => (
              <tr key={`${p.generator}|${p.evaluator}`} data-testid="pair-row" data-status={p.status}>
                <td title={p.generator}>{modelLabel(p.generator)}</td>
                <td title={p.evaluator}>{modelLabel(p.evaluator)}</td>
                <td>
                  <span className={statusChip(p.status)} title={p.error ?? undefined}>
                    {p.status}
                  </span>
                  {p.status === 'running' && p.rows > 0 && <ProgressBar value={p.rowsDone / p.rows} label={`Rows done for ${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}`} />}
                </td>
                <td className="num">{pct(p.accuracy)}</td>
                <td className="num">{pct(p.macroF1)}</td>
                <td className="num">{p.rows > 0 ? `${p.rowsDone}/${p.rows}` : '–'}</td>
                <td className="num">{p.ms > 0 ? duration(p.ms) : '–'}</td>
                <td className="num">{p.tokens > 0 ? p.tokens.toLocaleString('en-US') : '–'}</td>
                <td>
                  {p.jobId ? (
                    <button className="btn ghost xs" onClick={() => navigate({ view: 'evaluate', id: p.jobId! })}>
                      {p.jobId.slice(0, 8)}
                    </button>
                  ) : (
                    '–'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <div className="grid-2" style={{ marginTop: 16 }}>
        <Heatmap rec={rec} />
        <Bars rec={rec} />
      </div>
      <p className="muted small">Evaluators of one generator saw byte-identical examples and paraphrases (cached by generator, task, settings, seed and input), so differences in a row come from the evaluator alone.</p>
    </div>
  );
}

function HistoryCard() {
  const comparisons = useStore((s) => s.comparisons);
  const current = useStore((s) => s.currentComparisonId);
  const open = useStore((s) => s.openComparison);
  if (comparisons.length === 0) return null;
  return (
    <div className="card">
      <div className="card-head">
        <h2>Comparisons</h2>
      </div>
      <div className="list" data-testid="compare-history">
        {comparisons.map((c) => (
          <button key={c.id} className="list-item" aria-current={c.id === current ? 'true' : undefined} onClick={() => void open(c.id)} data-testid="compare-history-item">
            <span className="row" style={{ gap: 8 }}>
              <span className={statusChip(c.status)}>{c.status}</span>
              <strong>{c.task}</strong> · {modelLabel(c.dataset)} · {c.generators.length} generator{c.generators.length === 1 ? '' : 's'} × {c.evaluators.length} evaluator{c.evaluators.length === 1 ? '' : 's'}
            </span>
            <span className="muted small">{new Date(c.createdAt).toLocaleString()}</span>
          </button>
        ))}
      </div>
    </div>
  );
}

export function CompareView() {
  const watchModels = useStore((s) => s.watchModels);
  const loadLibrary = useStore((s) => s.loadLibrary);
  const loadComparisons = useStore((s) => s.loadComparisons);
  const loadTasks = useStore((s) => s.loadTasks);
  const tasksLoaded = useStore((s) => s.tasksLoaded);
  const currentId = useStore((s) => s.currentComparisonId);
  const rec = useStore((s) => (s.currentComparisonId ? s.comparisonRecords[s.currentComparisonId] : undefined));
  const comparisons = useStore((s) => s.comparisons);
  const open = useStore((s) => s.openComparison);
  useEffect(() => {
    const stop = watchModels();
    void loadLibrary();
    void loadComparisons();
    if (!tasksLoaded) void loadTasks();
    return stop;
  }, [watchModels, loadLibrary, loadComparisons, loadTasks, tasksLoaded]);
  useEffect(() => {
    // After a reload: show the newest comparison.
    if (!currentId && comparisons[0]) void open(comparisons[0].id);
  }, [currentId, comparisons, open]);
  return (
    <div className="page">
      <div className="page-head">
        <h1>Compare models</h1>
        <span className="muted">which generator with which evaluator</span>
      </div>
      <Welcome />
      <SetupCard />
      {rec && <ResultCard rec={rec} />}
      <HistoryCard />
    </div>
  );
}
