// The experiment page: one skeleton for every kind of experiment (sweeps, comparisons), each
// kind's own parts plugged in from kinds.ts. The list: the shared data steps (file, columns,
// label mapping), the kind's set-up with the budget, the plan and Start, and the history. One
// experiment (#/<kind>/ID): its heading, pause, resume, cancel and export, its progress with the
// time left, and the kind's result. Read when opened, then kept current by its progress events
// (connectStore): the status and progress from the latest event, the result read again as the
// experiments slice decides.
import { useEffect, useState } from 'react';
import type { ExperimentKind, ExperimentStartInput } from '../../../../electron/common/contract/experiments';
import type { Budget } from '../../../../electron/common/plan';
import { BudgetField, BudgetStopBanner, useBudget } from '../../components/BudgetField';
import { ErrorBanner } from '../../components/Common';
import { DataStep, MappingStep } from '../../components/DataSteps';
import { RunPlan, type PlanRequest } from '../../components/RunPlan';
import { StatusChip, chosenRows } from '../../components/RunSetup';
import { Welcome } from '../../components/Welcome';
import { WorkActions, WorkHistory, WorkProgress, type WorkAction } from '../../components/WorkProgress';
import { duration } from '../../components/labels';
import { useStore } from '../../store';
import { taskById } from '../../store/tasksSlice';
import { useExperimentList, useExperimentResult } from '../../store/useExperiments';
import { EXPERIMENT_PAGES, type ExperimentPage } from './kinds';

/** What racing does and promises (docs/method.md §16, racing), on hover. */
const RACE_TITLE =
  'Runs the rows in rounds (5 % of them, at least 20) and drops a pairing once it is worse than another at 95 % under a test that may look after every round. The best pairing is dropped in at most 5 % of races.';

/** Step 3 after the shared data steps: the kind's fields, then the budget, the plan and Start. */
function SetupCard<K extends ExperimentKind>({ page }: { page: ExperimentPage<K> }) {
  const kind = page.kind;
  const tasks = useStore((s) => s.tasks);
  const taskId = useStore((s) => s.currentTaskId);
  const draft = useStore((s) => s.draft);
  const startExperiment = useStore((s) => s.startExperiment);
  const error = useStore((s) => s.experimentError[kind]);
  const navigate = useStore((s) => s.navigate);
  const setup = page.useSetup();
  const budget = useBudget();
  const [starting, setStarting] = useState(false);
  const [race, setRace] = useState(false);
  const ready = !!draft.preview && !draft.previewing && !!draft.goldColumn && setup.spec !== null && !starting && budget.problem === null;
  const start = async () => {
    if (!ready || !setup.spec) return;
    setStarting(true);
    const started = await startExperiment({ kind, spec: { ...setup.spec, ...(budget.budget ? { budget: budget.budget } : {}), ...(race ? { race: true } : {}) } } as ExperimentStartInput);
    setStarting(false);
    if (started) navigate({ view: kind, id: started.id });
  };
  // What Start sends, priced by the host's plan of that kind.
  const request = setup.spec && draft.preview ? ({ method: `plans.${kind}`, input: setup.spec } as PlanRequest) : null;
  return (
    <div className="card" data-testid={`${kind}-setup`}>
      <div className="card-head">
        <h2>3 · {page.setupTitle}</h2>
        <span className="sub" data-testid={`${kind}-shape`}>
          {setup.shape}
        </span>
      </div>
      {setup.fields}
      {setup.problem}
      {draft.preview && !draft.goldColumn ? <div className="banner warn">A {page.noun} measures accuracy: choose the gold label column in step 2.</div> : null}
      <ErrorBanner message={error} title={`Cannot start the ${page.noun}`} />
      <div className="row">
        <BudgetField state={budget} testId={`${kind}-budget`} placeholder={page.budgetPlaceholder} />
        <label className="field inline" title={RACE_TITLE}>
          <input type="checkbox" checked={race} onChange={(e) => setRace(e.target.checked)} data-testid={`${kind}-race`} /> Race: drop what has lost
        </label>
        <span className="spacer" />
        <RunPlan task={taskById(tasks, taskId)} rows={chosenRows(draft)} {...setup.calls} request={request} testId={`${kind}-plan`} />
        <button className="btn primary" disabled={!ready} onClick={() => void start()} data-testid={`${kind}-start`}>
          {starting ? 'Starting…' : page.start}
        </button>
      </div>
    </div>
  );
}

function History<K extends ExperimentKind>({ page }: { page: ExperimentPage<K> }) {
  const items = useExperimentList(page.kind);
  return (
    <WorkHistory
      title={page.nouns}
      noun={page.noun}
      items={items}
      view={page.kind}
      name={page.historyName}
      columns={page.historyColumns}
      testId={`${page.kind}-history`}
      rowTestId={`${page.kind}-history-row`}
      statusTestId={`${page.kind}-history-status`}
    />
  );
}

/** One experiment: its heading and actions, its progress, its result. */
function Detail<K extends ExperimentKind>({ page, id }: { page: ExperimentPage<K>; id: string }) {
  const kind = page.kind;
  const navigate = useStore((s) => s.navigate);
  const result = useExperimentResult(kind, id);
  const live = useStore((s) => s.experimentLive[id]);
  const error = useStore((s) => s.experimentError[kind]);
  const openExperiment = useStore((s) => s.openExperiment);
  const experimentAction = useStore((s) => s.experimentAction);
  const exportExperiment = useStore((s) => s.exportExperiment);
  useEffect(() => {
    void openExperiment(kind, id);
  }, [kind, id, openExperiment]);
  const [busy, setBusy] = useState(false);
  const [exported, setExported] = useState<{ path: string; url: string | null } | null>(null);
  const act = async (action: WorkAction, budget?: Budget) => {
    setBusy(true);
    await experimentAction(kind, id, action, budget ? { budget } : {});
    setBusy(false);
  };
  const doExport = async (format: 'csv' | 'json') => {
    const out = await exportExperiment(kind, id, format);
    if (!out) return;
    setExported(out);
    if (out.url) window.location.assign(out.url);
  };
  const back = (
    <div className="row">
      <button className="btn ghost small" onClick={() => navigate({ view: kind })}>
        ← All {page.nouns.toLowerCase()}
      </button>
    </div>
  );
  if (!result) {
    return (
      <div className="page" data-testid={`${kind}-detail`}>
        {back}
        <ErrorBanner message={error} title={`Cannot load the ${page.noun}`} />
        {!error ? <p className="muted">Loading…</p> : null}
      </div>
    );
  }
  // The latest event says the status and progress; the result is read again less often.
  const status = live?.status ?? result.status;
  const progress = live?.progress ?? result.progress;
  return (
    <div className="page" data-testid={`${kind}-detail`} data-status={status}>
      <div className="page-head">
        <div>
          {back}
          <h1>{page.heading(result)}</h1>
          <p>
            {page.subtitle(result)} · <StatusChip status={status} testId={`${kind}-status`} />
          </p>
        </div>
        <div className="row">
          <WorkActions status={status} actions={['pause', 'resume', 'cancel']} onAction={(a) => void act(a)} busy={busy} testIdPrefix={kind} what={page.noun} />
          <button className="btn" onClick={() => void doExport('csv')} data-testid={`${kind}-export-csv`}>
            Export CSV
          </button>
          <button className="btn" onClick={() => void doExport('json')} data-testid={`${kind}-export-json`}>
            Export JSON
          </button>
        </div>
      </div>
      <ErrorBanner message={result.error} title={status === 'failed' ? `The ${page.noun} failed` : 'Stopped'} />
      <ErrorBanner message={error} />
      {result.stoppedBy === 'budget' && status === 'paused' ? <BudgetStopBanner budget={result.budget} usage={result.usage} noun={page.cellNoun} onResume={(budget) => void act('resume', budget)} testIdPrefix={kind} /> : null}
      {exported ? (
        <div className="banner info" data-testid={`${kind}-export-done`}>
          Exported to <code>{exported.path}</code>
        </div>
      ) : null}
      <WorkProgress
        testId={`${kind}-progress`}
        running={status === 'running'}
        counts={[
          { done: progress.jobsDone, total: progress.jobsTotal, noun: page.cellNoun },
          { done: progress.rowsDone, total: progress.rowsTotal, noun: 'row' },
        ]}
        etaSeconds={progress.etaSeconds}
        etaRange={progress.etaRange ?? null}
        rate={progress.elapsedSeconds >= 1 ? `${duration(progress.elapsedSeconds * 1000)} of work so far` : null}
      />
      <page.Result result={result} />
    </div>
  );
}

/** The page of one kind of experiment: the list and set-up, or one experiment (#/<kind>/ID). */
export function ExperimentView({ kind }: { kind: ExperimentKind }) {
  const route = useStore((s) => s.route);
  const loadExperiments = useStore((s) => s.loadExperiments);
  useEffect(() => {
    void loadExperiments();
  }, [loadExperiments]);
  const page: ExperimentPage<ExperimentKind> = EXPERIMENT_PAGES[kind] as ExperimentPage<ExperimentKind>;
  if (route.id) return <Detail page={page} id={route.id} key={`${kind}/${route.id}`} />;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>{page.title}</h1>
          <p>{page.intro}</p>
        </div>
      </div>
      <Welcome />
      <DataStep />
      <MappingStep />
      <SetupCard page={page} key={kind} />
      <History page={page} />
    </div>
  );
}
