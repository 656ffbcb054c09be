// Compare: the same data steps as Evaluate and Sweep (file, columns, label mapping), then a task,
// generators and evaluators; every pair runs as an evaluation job (evaluators of one generator
// share its examples and paraphrases). Results as a pair table, a generator × evaluator heat map
// and grouped bars like the paper's cross-model table.
import { useEffect, useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { modelLabel } from '../../../electron/common/model-spec';
import { comparisonMatrix, type ComparisonResult } from '../../../electron/common/contract/comparisons';
import { DEFAULT_SETTINGS, type TatraSettings } from '../../../electron/common/tatra';
import { ChartFigure } from '../components/ChartFigure';
import { ErrorBanner, ProgressBar, TableWrap } from '../components/Common';
import { WorkActions, WorkHistory, WorkProgress } from '../components/WorkProgress';
import { DataStep, MappingStep } from '../components/DataSteps';
import { duration, heatCell, pct } from '../components/labels';
import { useModelOptions } from '../components/ModelPicker';
import { RunPlan } from '../components/RunPlan';
import { BudgetField, BudgetStopBanner, useBudget } from '../components/BudgetField';
import { RowLimitField, StatusChip, TaskField, chosenLabelMap, chosenRows } from '../components/RunSetup';
import { RunSettingsFields } from '../components/RunSettingsFields';
import { useSeededField, useSeededFields } from '../components/seededFields';
import { useResolvedColor } from '../components/VoteCharts';
import { Welcome } from '../components/Welcome';
import { useStore } from '../store';
import type { ExperimentAction } from '../store/experimentsSlice';
import { useExperimentList, useExperimentResult } from '../store/useExperiments';
import type { Budget } from '../../../electron/common/plan';
import { taskById } from '../store/tasksSlice';
import { formatHash } from '../store/uiSlice';

const SERIES = ['var(--l0)', 'var(--l1)', 'var(--l2)', 'var(--l3)', 'var(--l4)', 'var(--l5)', 'var(--l6)', 'var(--l7)'];

/** Several models for one role: the library's and the remote ones by name, with their details; a path or server can be added. */
function ModelChecklist(props: { title: string; value: string[]; onChange(v: string[]): void; testId: string }) {
  const { options } = useModelOptions();
  const [typed, setTyped] = useState('');
  // Local GGUFs and remote models side by side: a comparison may mix them; a typed one joins them.
  const known = options.map((o) => o.value);
  const extra = props.value.filter((p) => !known.includes(p)).map((p) => ({ value: p, name: modelLabel(p), detail: p }));
  const all = [...options, ...extra];
  const toggle = (p: string) => props.onChange(props.value.includes(p) ? props.value.filter((x) => x !== p) : [...props.value, p]);
  const add = () => {
    if (!typed.trim()) return;
    props.onChange([...new Set([...props.value, typed.trim()])]);
    setTyped('');
  };
  return (
    <fieldset className="field checklist" data-testid={props.testId}>
      <legend>
        {props.title} <span className="muted small">({props.value.length} chosen)</span>
      </legend>
      <div className="stack" style={{ gap: 4 }}>
        {all.length === 0 ? <span className="muted small">No models yet: add one in Models, or type a path below.</span> : null}
        {all.map((o) => (
          <label key={o.value} className="check-option" title={o.value}>
            <input type="checkbox" checked={props.value.includes(o.value)} onChange={() => toggle(o.value)} />
            <span className="stack" style={{ gap: 0 }}>
              <span>{o.name}</span>
              <span className="muted xs">{o.detail}</span>
            </span>
          </label>
        ))}
      </div>
      <div className="row" style={{ gap: 6, flexWrap: 'nowrap' }}>
        <input
          type="text"
          aria-label={`Add a model by path or server to ${props.title}`}
          placeholder="/path/to/model.gguf or remote:NAME"
          value={typed}
          spellCheck={false}
          onChange={(e) => setTyped(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }}
        />
        <button type="button" className="btn small" disabled={!typed.trim()} onClick={add}>
          Add
        </button>
      </div>
    </fieldset>
  );
}

/** Step 3 after the shared data steps: the task, the generators and evaluators to pair, the run settings. */
function SetupCard() {
  const taskId = useStore((s) => s.currentTaskId);
  const tasks = useStore((s) => s.tasks);
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const saved = useStore((s) => s.settings);
  const startExperiment = useStore((s) => s.startExperiment);
  const error = useStore((s) => s.experimentError.compare);
  const navigate = useStore((s) => s.navigate);
  // Like Evaluate: the saved run settings, the chosen models (the first one a newcomer adds is chosen for every form).
  const [tatra, setTatra] = useSeededFields<TatraSettings>(saved?.tatra ?? DEFAULT_SETTINGS);
  const chosenGenerator = saved?.generator ?? null;
  const chosenEvaluator = saved?.evaluator ?? chosenGenerator;
  const [generators, setGenerators] = useSeededField<string[]>(useMemo(() => (chosenGenerator ? [chosenGenerator] : []), [chosenGenerator]));
  const [evaluators, setEvaluators] = useSeededField<string[]>(useMemo(() => (chosenEvaluator ? [chosenEvaluator] : []), [chosenEvaluator]));
  const [busy, setBusy] = useState(false);
  const budget = useBudget();
  const pairs = generators.length * evaluators.length;
  const ready = !!draft.preview && !!draft.inputColumn && !!draft.goldColumn && pairs > 0 && !busy && budget.problem === null;
  const run = async () => {
    if (!ready || !draft.inputColumn || !draft.goldColumn) return;
    setBusy(true);
    const rec = await startExperiment({
      kind: 'compare',
      spec: {
      taskId,
      dataPath: draft.path,
      generators,
      evaluators,
      settings: tatra,
      inputColumn: draft.inputColumn,
      goldColumn: draft.goldColumn,
      labelMap: chosenLabelMap(draft.labelMap),
      ...(draft.limit !== null ? { limit: draft.limit } : {}),
      ...(budget.budget ? { budget: budget.budget } : {}),
      },
    });
    setBusy(false);
    if (rec) navigate({ view: 'compare', id: rec.id });
  };
  return (
    <div className="card" data-testid="compare-setup">
      <div className="card-head">
        <h2>3 · Task, models and settings</h2>
        <span className="sub">
          {generators.length} × {evaluators.length} = {pairs} pair{pairs === 1 ? '' : 's'}, each an evaluation job; evaluators of one generator share its examples and paraphrases
        </span>
      </div>
      <div className="grid-3">
        <TaskField testId="compare-task" />
        <ModelChecklist title="Generators (write examples and paraphrases)" value={generators} onChange={setGenerators} testId="compare-generators" />
        <ModelChecklist title="Evaluators (classify)" value={evaluators} onChange={setEvaluators} testId="compare-evaluators" />
      </div>
      <RunSettingsFields value={tatra} onChange={setTatra} testIdPrefix="compare">
        <RowLimitField value={draft.limit} onChange={(limit) => setDraft({ limit })} testId="compare-limit" />
      </RunSettingsFields>
      {draft.preview && !draft.goldColumn ? <div className="banner warn">A comparison measures accuracy: choose the gold label column in step 2.</div> : null}
      <ErrorBanner message={error} title="Cannot start the comparison" />
      <div className="row">
        <BudgetField state={budget} testId="compare-budget" placeholder="Budget for all pairs, e.g. calls=5000" />
        <span className="spacer" />
        <RunPlan
          task={taskById(tasks, taskId)}
          settings={tatra}
          rows={chosenRows(draft)}
          times={pairs}
          request={
            ready && draft.inputColumn && draft.goldColumn
              ? {
                  method: 'plans.compare',
                  input: { taskId, dataPath: draft.path, generators, evaluators, settings: tatra, inputColumn: draft.inputColumn, goldColumn: draft.goldColumn, labelMap: chosenLabelMap(draft.labelMap), ...(draft.limit !== null ? { limit: draft.limit } : {}) },
                }
              : null
          }
          testId="compare-plan"
        />
        <button className="btn primary" disabled={!ready} onClick={() => void run()} data-testid="compare-run">
          {busy ? 'Starting…' : 'Run comparison'}
        </button>
      </div>
    </div>
  );
}


function Heatmap({ rec }: { rec: ComparisonResult }) {
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

function Bars({ rec }: { rec: ComparisonResult }) {
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
          {/* In the bars' order (the evaluators as chosen), not alphabetical (recharts' default). */}
          <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={(item) => rec.spec.evaluators.findIndex((e) => modelLabel(e) === item.dataKey)} />
          {rec.spec.evaluators.map((e, j) => (
            <Bar key={e} dataKey={modelLabel(e)} name={`evaluator ${modelLabel(e)}`} fill={color(SERIES[j % SERIES.length]!)} isAnimationActive={false} />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}

function ResultCard({ rec }: { rec: ComparisonResult }) {
  const experimentAction = useStore((s) => s.experimentAction);
  const act = (id: string, action: ExperimentAction, opts?: { budget?: Budget }) => experimentAction('compare', id, action, opts);
  const navigate = useStore((s) => s.navigate);
  const s = rec.spec.settings;
  const running = rec.status === 'running';
  const p = rec.progress;
  return (
    <div className="stack" data-testid="compare-result" data-status={rec.status}>
      <div className="page-head">
        <div>
          <div className="row">
            <button className="btn ghost small" onClick={() => navigate({ view: 'compare' })}>
              ← All comparisons
            </button>
          </div>
          <h1>
            {rec.spec.taskId} · {modelLabel(rec.spec.dataPath)} <StatusChip status={rec.status} testId="compare-status" />
          </h1>
          <p>
            {rec.spec.generators.length} generator{rec.spec.generators.length === 1 ? '' : 's'} × {rec.spec.evaluators.length} evaluator{rec.spec.evaluators.length === 1 ? '' : 's'} · n={s.n}, k={s.k}, r={s.r}, seed {s.seed}
            {rec.spec.limit ? ` · ${rec.spec.limit} rows` : ''}
          </p>
        </div>
        <div className="row">
          <WorkActions status={rec.status} actions={['pause', 'resume', 'cancel']} onAction={(a) => void act(rec.id, a)} testIdPrefix="compare" what="comparison" />
        </div>
      </div>
      {p ? (
        <WorkProgress
          testId="compare-progress"
          running={running}
          counts={[
            { done: p.jobsDone, total: p.jobsTotal, noun: 'pair' },
            { done: p.rowsDone, total: p.rowsTotal, noun: 'row' },
          ]}
          etaSeconds={p.etaSeconds}
          etaRange={p.etaRange ?? null}
        />
      ) : null}
      <div className="card">
      <ErrorBanner message={rec.error} />
      {rec.stoppedBy === 'budget' && rec.status === 'paused' ? <BudgetStopBanner budget={rec.budget} usage={rec.usage} noun="rows" onResume={(budget) => void act(rec.id, 'resume', { budget })} testIdPrefix="compare" /> : null}
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
                  <StatusChip status={p.status} testId="pair-status" title={p.error} />
                  {p.status === 'running' && p.rowsTotal > 0 && <ProgressBar value={p.rowsDone / p.rowsTotal} label={`Rows done for ${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}`} />}
                </td>
                <td className="num">{pct(p.accuracy)}</td>
                <td className="num">{pct(p.macroF1)}</td>
                <td className="num">{p.rowsTotal > 0 ? `${p.rowsDone}/${p.rowsTotal}` : '–'}</td>
                <td className="num">{p.elapsedMs > 0 ? duration(p.elapsedMs) : '–'}</td>
                <td className="num">{p.tokens > 0 ? p.tokens.toLocaleString('en-US') : '–'}</td>
                <td>
                  {p.jobId ? (
                    <a href={formatHash({ view: 'evaluate', id: p.jobId })} title={`Open the evaluation ${p.jobId}`}>
                      {p.jobId.slice(0, 8)}
                    </a>
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
    </div>
  );
}

function HistoryCard() {
  const comparisons = useExperimentList('compare');
  return (
    <WorkHistory
      title="Comparisons"
      noun="comparison"
      items={comparisons}
      view="compare"
      name={(c) => `${c.taskId} · ${modelLabel(c.dataPath)}`}
      columns={[
        { header: 'Pairs', cell: (c) => `${c.generators.length} × ${c.evaluators.length}` },
        { header: 'Jobs', num: true, cell: (c) => (c.progress ? `${c.progress.jobsDone}/${c.progress.jobsTotal}` : '–') },
      ]}
      testId="compare-history"
      rowTestId="compare-history-item"
      statusTestId="compare-history-status"
    />
  );
}

/** One comparison: read when opened, then kept current by its progress events (connectStore). */
function ComparisonDetail({ id }: { id: string }) {
  const rec = useExperimentResult('compare', id);
  const error = useStore((s) => s.experimentError.compare);
  const open = useStore((s) => s.openExperiment);
  useEffect(() => {
    void open('compare', id);
  }, [id, open]);
  return (
    <div className="page" data-testid="compare-detail">
      <ErrorBanner message={error} />
      {rec ? <ResultCard rec={rec} /> : !error ? <p className="muted">Loading…</p> : null}
    </div>
  );
}

export function CompareView() {
  const route = useStore((s) => s.route);
  const loadExperiments = useStore((s) => s.loadExperiments);
  useEffect(() => {
    void loadExperiments();
  }, [loadExperiments]);
  if (route.id) return <ComparisonDetail id={route.id} key={route.id} />;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Compare models</h1>
          <p>Which generator with which evaluator: every pair an evaluation on the same rows, one experiment that survives a restart and resumes where it stopped.</p>
        </div>
      </div>
      <Welcome />
      <DataStep />
      <MappingStep />
      <SetupCard />
      <HistoryCard />
    </div>
  );
}
