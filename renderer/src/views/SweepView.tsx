// Sweep: the paper's sensitivity study (docs/method.md §12) over a grid of n, k, r and seeds, as one
// resumable experiment. Set-up shares Evaluate's data and mapping steps, task and model fields;
// a running sweep shows progress with an ETA, then accuracy against n, k and r with std bands,
// a k × n heat map, cost against accuracy and the points table; CSV/JSON export.
import { useEffect, useMemo, useState } from 'react';
import { SweepGrid } from '../../../electron/common/contract/sweeps';
import { describeZodError } from '../../../electron/common/contract';
import { ErrorBanner, Metric, ReproducibleChip, TableWrap } from '../components/Common';
import { WorkActions, WorkHistory, WorkProgress } from '../components/WorkProgress';
import { RunPlan } from '../components/RunPlan';
import type { Budget } from '../../../electron/common/plan';
import { taskById } from '../store/tasksSlice';
import { DataStep, MappingStep } from '../components/DataSteps';
import { RowLimitField, StatusChip, TaskAndModels, draftData, chosenRows, modelPairText, useModelPair } from '../components/RunSetup';
import { AccuracyLines, CostScatter, KnHeatmap } from '../components/SweepCharts';
import { duration, pct } from '../components/labels';
import { useStore } from '../store';
import { useExperimentList, useExperimentResult } from '../store/useExperiments';
import { Welcome } from '../components/Welcome';
import { BudgetField, BudgetStopBanner, useBudget } from '../components/BudgetField';

/** "0, 2,5" → [0, 2, 5]; null when a part is not a whole number. */
export function parseList(text: string): number[] | null {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) return null;
  return parts.map(Number);
}

const GRID_FIELDS = [
  { key: 'n', label: 'Paraphrases n', initial: '0,2,5' },
  { key: 'k', label: 'Examples k', initial: '4,8' },
  { key: 'r', label: 'Runs r', initial: '1,3,5' },
  { key: 'seeds', label: 'Seeds', initial: '1,2,3' },
] as const;

function SetupCard() {
  const taskId = useStore((s) => s.currentTaskId);
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const tasks = useStore((s) => s.tasks);
  const navigate = useStore((s) => s.navigate);
  const startExperiment = useStore((s) => s.startExperiment);
  const error = useStore((s) => s.experimentError.sweep);
  const models = useModelPair();
  const [lists, setLists] = useState<Record<(typeof GRID_FIELDS)[number]['key'], string>>({ n: '0,2,5', k: '4,8', r: '1,3,5', seeds: '1,2,3' });
  const [starting, setStarting] = useState(false);
  const parsed = SweepGrid.safeParse({ n: parseList(lists.n), k: parseList(lists.k), r: parseList(lists.r), seeds: parseList(lists.seeds) });
  const grid = parsed.success ? parsed.data : null;
  const jobs = grid ? grid.n.length * grid.k.length * grid.seeds.length : 0;
  const budget = useBudget();
  const ready = !!draft.preview && !!draft.inputColumn && !!draft.goldColumn && models.chosen && grid !== null && !starting && budget.problem === null;
  // Every job runs at the largest r; a sweep pays less than this plan once work is shared.
  const cells = grid ? grid.n.flatMap((n) => grid.k.flatMap((k) => grid.seeds.map(() => ({ n, k, r: Math.max(...grid.r), scope: 'run' as const })))) : [];
  // What Start sends, and what the plan beside it prices.
  const request =
    grid && draft.inputColumn && models.chosen
      ? {
          taskId,
          ...draftData({ ...draft, inputColumn: draft.inputColumn }),
          generator: models.generator,
          evaluator: models.evaluator,
          grid,
          // No name: the server names a sweep after its task and grid, which says more than the file name.
          ...(draft.limit !== null ? { limit: draft.limit } : {}),
        }
      : null;
  const start = async () => {
    if (!ready || !request) return;
    setStarting(true);
    const s = await startExperiment({ kind: 'sweep', spec: { ...request, ...(budget.budget ? { budget: budget.budget } : {}) } });
    setStarting(false);
    if (s) navigate({ view: 'sweep', id: s.id });
  };
  return (
    <div className="card" data-testid="sweep-setup">
      <div className="card-head">
        <h2>3 · Task, models and grid</h2>
        <span className="sub" data-testid="sweep-plan">
          {grid
            ? `${grid.n.length} n × ${grid.k.length} k × ${grid.r.length} r × ${grid.seeds.length} seeds: ${jobs} jobs at r=${Math.max(...grid.r)}; smaller r read their first runs`
            : 'comma-separated whole numbers in every grid field'}
        </span>
      </div>
      <TaskAndModels models={models} testIdPrefix="sweep" />
      <div className="row" style={{ alignItems: 'flex-start', flexWrap: 'wrap' }}>
        {GRID_FIELDS.map((f) => {
          const bad = parseList(lists[f.key]) === null;
          return (
            <label className="field" key={f.key}>
              <span>{f.label}</span>
              <input type="text" value={lists[f.key]} aria-invalid={bad} spellCheck={false} style={{ width: 140 }} onChange={(e) => setLists({ ...lists, [f.key]: e.target.value })} data-testid={`sweep-${f.key}`} />
              {bad ? <span className="field-error">e.g. {f.initial}</span> : null}
            </label>
          );
        })}
        <RowLimitField value={draft.limit} onChange={(limit) => setDraft({ limit })} testId="sweep-limit" />
      </div>
      {!parsed.success && parsed.error.issues.some((i) => i.code !== 'invalid_type') ? <ErrorBanner message={describeZodError(parsed.error)} title="Grid" /> : null}
      {draft.preview && !draft.goldColumn ? <div className="banner warn">A sweep measures accuracy: choose the gold label column above.</div> : null}
      <ErrorBanner message={error} title="Cannot start the sweep" />
      <div className="row">
        <BudgetField state={budget} testId="sweep-budget" placeholder="Budget for all jobs, e.g. calls=5000" />
        <span className="spacer" />
        <RunPlan task={taskById(tasks, taskId)} settings={cells[0] ?? { n: 0, k: 0, r: 1, scope: 'run' }} cells={cells} rows={chosenRows(draft)}
          request={request && draft.preview ? { method: 'plans.sweep', input: request } : null}
          testId="sweep-calls-plan"
        />
        <button className="btn primary" disabled={!ready} onClick={() => void start()} data-testid="sweep-start">
          {starting ? 'Starting…' : 'Start sweep'}
        </button>
      </div>
    </div>
  );
}

function History() {
  const sweeps = useExperimentList('sweep');
  const loadExperiments = useStore((s) => s.loadExperiments);
  useEffect(() => {
    void loadExperiments();
  }, [loadExperiments]);
  return (
    <WorkHistory
      title="Sweeps"
      noun="sweep"
      items={sweeps}
      view="sweep"
      name={(s) => s.name}
      columns={[
        { header: 'Models', cell: (s) => modelPairText(s.generator, s.evaluator) },
        { header: 'Jobs', num: true, cell: (s) => `${s.progress.jobsDone}/${s.progress.jobsTotal}` },
      ]}
      testId="sweep-history"
      rowTestId="sweep-history-row"
      statusTestId="sweep-status"
    />
  );
}

function SweepDetail({ id }: { id: string }) {
  const navigate = useStore((s) => s.navigate);
  // Read when opened, then kept current by its progress events (connectStore): the jobs' pattern.
  const result = useExperimentResult('sweep', id);
  const live = useStore((s) => s.experimentLive[id]);
  const error = useStore((s) => s.experimentError.sweep);
  const openExperiment = useStore((s) => s.openExperiment);
  const experimentAction = useStore((s) => s.experimentAction);
  const exportExperiment = useStore((s) => s.exportExperiment);
  useEffect(() => {
    void openExperiment('sweep', id);
  }, [id, openExperiment]);
  const [busy, setBusy] = useState(false);
  const [exported, setExported] = useState<{ path: string; url: string | null } | null>(null);
  const act = async (action: 'pause' | 'resume', budget?: Budget) => {
    setBusy(true);
    await experimentAction('sweep', id, action, budget ? { budget } : {});
    setBusy(false);
  };
  const doExport = async (format: 'csv' | 'json') => {
    const out = await exportExperiment('sweep', id, format);
    if (!out) return;
    setExported(out);
    if (out.url) window.location.assign(out.url);
  };
  const rMax = useMemo(() => (result ? Math.max(...result.grid.r) : 0), [result]);
  if (!result) {
    return (
      <div className="page">
        <ErrorBanner message={error} title="Cannot load the sweep" />
        {!error ? <p className="muted">Loading…</p> : null}
      </div>
    );
  }
  const progress = live ? { ...live.progress, status: live.status } : { ...result.progress, status: result.status };
  const status = live?.status ?? result.status;
  const charted = result.points.some((p) => p.accuracy !== null);
  const { generatorCalls: gen, evaluatorCalls: ev } = result.sharing;
  const math = result.taskKind === 'math';
  return (
    <div className="page" data-testid="sweep-detail">
      <div className="page-head">
        <div>
          <h1>{result.name}</h1>
          <p>
            {result.taskId} · {modelPairText(result.generator, result.evaluator)} · {result.rows} rows · <StatusChip status={status} testId="sweep-status" /> <ReproducibleChip deterministic={result.deterministic} subject="sweep" testId="sweep-deterministic" />
          </p>
        </div>
        <div className="row">
          <button className="btn" onClick={() => navigate({ view: 'sweep' })}>
            All sweeps
          </button>
          <WorkActions status={status} actions={['pause', 'resume']} onAction={(a) => void act(a === 'cancel' ? 'pause' : a)} busy={busy} testIdPrefix="sweep" what="sweep" />
          <button className="btn" onClick={() => void doExport('csv')} data-testid="sweep-export-csv">
            Export CSV
          </button>
          <button className="btn" onClick={() => void doExport('json')} data-testid="sweep-export-json">
            Export JSON
          </button>
        </div>
      </div>
      <ErrorBanner message={result.error} title="The sweep failed" />
      <ErrorBanner message={error} />
      {result.stoppedBy === 'budget' && status === 'paused' ? <BudgetStopBanner budget={result.budget} usage={result.usage} noun="job" onResume={(budget) => void act('resume', budget)} testIdPrefix="sweep" /> : null}
      {exported ? (
        <div className="banner info" data-testid="sweep-export-done">
          Exported to <code>{exported.path}</code>
        </div>
      ) : null}
      <WorkProgress
        testId="sweep-progress"
        running={status === 'running'}
        counts={[
          { done: progress.jobsDone, total: progress.jobsTotal, noun: 'job' },
          { done: progress.rowsDone, total: progress.rowsTotal, noun: 'row' },
        ]}
        etaSeconds={progress.etaSeconds}
        etaRange={progress.etaRange ?? null}
        rate={progress.elapsedSeconds >= 1 ? `${duration(progress.elapsedSeconds * 1000)} of work so far` : null}
      />
      <div className="grid-3">
        {/* Said once a job is done: before that the calls made exceed those of the points so far. */}
        <Metric name="Generator calls saved" value={progress.jobsDone > 0 && gen.alone > 0 ? `${Math.max(0, gen.saved)} of ${gen.alone}` : '–'} hint={`made ${gen.made}; alone means every (n, k, r, seed) point run by itself`} />
        <Metric name="Evaluator calls saved" value={progress.jobsDone > 0 && ev.alone > 0 ? `${Math.max(0, ev.saved)} of ${ev.alone}` : '–'} hint={`made ${ev.made}`} />
        <Metric name="Best mean accuracy" value={pct(Math.max(...result.points.map((p) => p.accuracy?.mean ?? -1)) < 0 ? null : Math.max(...result.points.map((p) => p.accuracy?.mean ?? -1)))} />
      </div>
      {charted ? (
        <>
          <div className="grid-3" data-testid="sweep-charts">
            <AccuracyLines points={result.points} x="n" by="k" testId="sweep-chart-n" />
            <AccuracyLines points={result.points} x="k" by="n" testId="sweep-chart-k" />
            <AccuracyLines points={result.points} x="r" by="n" testId="sweep-chart-r" />
          </div>
          <div className="grid-2">
            <KnHeatmap points={result.points} r={rMax} />
            <CostScatter points={result.points} />
          </div>
        </>
      ) : (
        <p className="muted">The charts appear when the first seed of a setting is done.</p>
      )}
      <div className="card">
        <div className="card-head">
          <h2>Points</h2>
          <span className="sub">mean ± std over seeds; calls and tokens are what a setting costs alone; seconds at this sweep's throughput</span>
        </div>
        <TableWrap label="Sweep points">
          <table className="data" data-testid="sweep-points">
            <thead>
              <tr>
                <th className="num">n</th>
                <th className="num">k</th>
                <th className="num">r</th>
                <th className="num">Seeds</th>
                <th className="num">{math ? 'Strict accuracy' : 'Accuracy'}</th>
                <th className="num">{math ? 'Lenient accuracy' : 'Macro-F1'}</th>
                <th className="num">Calls</th>
                <th className="num">Tokens</th>
                <th className="num">Seconds</th>
              </tr>
            </thead>
            <tbody>
              {result.points.map((p) => {
                const second = math ? p.lenientAccuracy : p.macroF1;
                return (
                  <tr key={`${p.n}-${p.k}-${p.r}`} data-testid="sweep-point">
                    <td className="num">{p.n}</td>
                    <td className="num">{p.k}</td>
                    <td className="num">{p.r}</td>
                    <td className="num">{p.seeds.length}</td>
                    <td className="num">{p.accuracy ? `${pct(p.accuracy.mean)} ± ${pct(p.accuracy.std)}` : '–'}</td>
                    <td className="num">{second ? `${pct(second.mean)} ± ${pct(second.std)}` : '–'}</td>
                    <td className="num">{Math.round(p.calls.mean).toLocaleString()}</td>
                    <td className="num">{Math.round(p.tokens.mean).toLocaleString()}</td>
                    <td className="num">{p.seconds.mean.toFixed(1)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableWrap>
      </div>
    </div>
  );
}

export function SweepView() {
  const route = useStore((s) => s.route);
  if (route.id) return <SweepDetail id={route.id} key={route.id} />;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Sweep</h1>
          <p>How accuracy moves with paraphrases n, examples k and runs r, over several seeds (the paper's sensitivity study). One experiment, resumable; work shared across settings is paid once.</p>
        </div>
      </div>
      <Welcome />
      <DataStep />
      <MappingStep />
      <SetupCard />
      <History />
    </div>
  );
}
