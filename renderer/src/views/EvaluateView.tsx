// Evaluate: load a CSV/TSV/JSONL file, map its columns and labels, start a job; watch it run;
// read its results; export; browse the history and resume an interrupted job.
import { Suspense, useEffect, useId, useMemo, useState } from 'react';
import { splitView } from '../components/splitView';
import { listedStatus, type JobMetrics, type JobSummary } from '../../../electron/common/contract/jobs';
import { DEFAULT_SETTINGS, type TatraSettings } from '../../../electron/common/tatra';
import { ErrorBanner, JobMissing, LabelChip, Metric, ReproducibleChip } from '../components/Common';
import { WorkActions, WorkHistory, WorkProgress } from '../components/WorkProgress';
import { ConfidenceHistogram, ConfusionMatrix, RunsCurve } from '../components/EvalCharts';
import { DataStep, MappingStep } from '../components/DataSteps';
import { RunSettingsFields } from '../components/RunSettingsFields';
import { useSeededFields } from '../components/seededFields';
import { RowsTable } from '../components/RowsTable';
import { useAfterFirstPaint } from '../components/afterPaint';
import { RunPlan } from '../components/RunPlan';
import { EarlyStopRule } from '../components/EarlyStopRule';
import { BudgetField, BudgetStopBanner, useBudget } from '../components/BudgetField';
import { CoverageCurve, ReliabilityDiagram, answeredAt } from '../components/CalibrationCharts';
import { RowLimitField, StatusChip, chosenRows, TaskAndModels, draftData, modelPairText, useModelPair } from '../components/RunSetup';
import { pct } from '../components/labels';
import { Bounds, IntervalsNote, PairedLine } from '../components/Intervals';
import { useStore } from '../store';
import { Welcome } from '../components/Welcome';
import { taskById } from '../store/tasksSlice';

// The review queue is its own script, fetched when first opened.
// The review queue's script comes apart; the app fetches it with this view's (App.tsx), and a job's
// page asks again, so opening the queue renders at once.
const reviewView = splitView(() => import('./ReviewView').then((m) => m.ReviewView));
const ReviewView = reviewView.View;

/** Fetches the scripts this view opens later (the review queue). */
export function prefetchEvaluateParts(): Promise<unknown> {
  return reviewView.fetch();
}

function SettingsStep() {
  const taskId = useStore((s) => s.currentTaskId);
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const settings = useStore((s) => s.settings);
  const startJob = useStore((s) => s.startJob);
  const navigate = useStore((s) => s.navigate);
  // From the saved settings, which may arrive after the first render; a field the user changed keeps the user's value.
  const [tatra, setTatra] = useSeededFields<TatraSettings>(settings?.tatra ?? DEFAULT_SETTINGS);
  const models = useModelPair();
  const [starting, setStarting] = useState(false);
  // Off by default for evaluations: accuracy after 1…r runs needs every run of every row.
  const [earlyStop, setEarlyStop] = useState(false);
  const budget = useBudget();
  const tasks = useStore((s) => s.tasks);
  const task = taskById(tasks, taskId);
  const ready = !!draft.preview && !draft.previewing && !!draft.inputColumn && models.chosen && !starting && budget.problem === null;
  const rows = chosenRows(draft);
  // What Start sends, and what the plan beside it prices.
  const request =
    draft.preview && draft.inputColumn && models.chosen
      ? {
          taskId,
          ...draftData({ ...draft, inputColumn: draft.inputColumn }),
          generator: models.generator,
          evaluator: models.evaluator,
          settings: { ...tatra, earlyStop },
          limit: draft.limit ?? undefined,
          baseline: draft.baseline,
        }
      : null;
  const start = async () => {
    if (!ready || !request) return;
    setStarting(true);
    const job = await startJob({ ...request, name: draft.name || undefined, ...(budget.budget ? { budget: budget.budget } : {}) });
    setStarting(false);
    if (job) navigate({ view: 'evaluate', id: job.id });
  };
  return (
    <div className="card">
      <div className="card-head">
        <h2>3 · Task, models and settings</h2>
      </div>
      <TaskAndModels models={models} testIdPrefix="eval" />
      <RunSettingsFields value={tatra} onChange={setTatra} testIdPrefix="eval">
        <RowLimitField value={draft.limit} onChange={(limit) => setDraft({ limit })} testId="eval-limit" />
      </RunSettingsFields>
      <div className="row">
        <label className="field inline">
          <input type="checkbox" checked={draft.baseline} onChange={(e) => setDraft({ baseline: e.target.checked })} /> Also run the zero-shot baseline
        </label>
        <label className="field inline" title="Each row stops launching runs once its vote cannot change: the same labels for fewer calls, but accuracy after 1…r runs then lacks the runs not made.">
          <input type="checkbox" checked={earlyStop} onChange={(e) => setEarlyStop(e.target.checked)} data-testid="eval-early-stop" /> Stop each vote once decided
        </label>
        <EarlyStopRule value={tatra} onChange={setTatra} disabled={!earlyStop} testId="eval-early-stop-rule" />
        <BudgetField state={budget} testId="eval-budget" />
        <label className="field" style={{ flex: '1 1 200px', minWidth: 200, maxWidth: 360 }}>
          <span className="sr-only">Name</span>
          <input type="text" value={draft.name} onChange={(e) => setDraft({ name: e.target.value })} placeholder="Name (optional)" />
        </label>
        <span className="spacer" />
        <RunPlan task={task} settings={tatra} rows={rows} baseline={draft.baseline} request={request ? { method: 'plans.job', input: request } : null} testId="eval-plan" />
        <button className="btn primary" disabled={!ready} onClick={() => void start()} data-testid="eval-start">
          {starting ? 'Starting…' : 'Start evaluation'}
        </button>
      </div>
      {draft.preview && !draft.goldColumn ? (
        <div className="banner warn" data-testid="eval-no-gold">
          No gold label column: the evaluation will label every row but cannot measure accuracy. Choose the column with the right answers in step 2 if the file has one.
        </div>
      ) : null}
    </div>
  );
}

function History() {
  const jobs = useStore((s) => s.jobs);
  const jobAction = useStore((s) => s.jobAction);
  return (
    <WorkHistory
      title="History"
      noun="evaluation"
      items={jobs.map((j) => ({ ...j, status: listedStatus(j) }))}
      view="evaluate"
      name={(j) => j.name || j.id}
      columns={[
        { header: 'Task', cell: (j) => j.taskId },
        { header: 'Models', cell: (j) => modelPairText(j.generator, j.evaluator) },
        { header: 'Rows', num: true, cell: (j) => `${j.rowsDone}/${j.rowsTotal}` },
        { header: 'Accuracy', num: true, cell: (j) => pct(j.accuracy) },
      ]}
      actions={(j) =>
        j.status === 'interrupted' || j.status === 'paused' ? (
          <button className="btn small" onClick={() => void jobAction(j.id, 'resume')}>
            Resume
          </button>
        ) : null
      }
      testId="history"
      rowTestId="history-row"
      statusTestId="job-status"
    />
  );
}

/**
 * Every scored row got the same label while the gold has several: the model is most likely not
 * following the instruction (a base or very small model does this), and the accuracy is the
 * share of that label in the data, not a measure of TATRA. Said from 8 scored rows on (fewer can
 * agree by chance); rows with no valid vote count as an answer of their own.
 */
export function oneAnswerForEveryRow(metrics: Pick<JobMetrics, 'scored' | 'confusion'> | undefined): { label: string; goldLabels: number } | null {
  if (!metrics || metrics.scored < 8) return null;
  const { predicted, matrix, labels } = metrics.confusion;
  const columns = predicted.map((p, j) => ({ p, n: matrix.reduce((a, row) => a + (row[j] ?? 0), 0) })).filter((c) => c.n > 0);
  const goldLabels = matrix.filter((row) => row.some((v) => v > 0)).length;
  if (columns.length !== 1 || goldLabels < 2 || labels.length < 2) return null;
  return { label: columns[0]!.p, goldLabels };
}

function OneLabelWarning({ metrics }: { metrics: JobMetrics | undefined }) {
  const one = oneAnswerForEveryRow(metrics);
  if (!one) return null;
  return (
    <div className="banner warn" data-testid="one-label-warning">
      Every scored row got the same answer, “{one.label}”, though the file has {one.goldLabels} labels. The model is probably not following the instruction (a base model or a very small one does this), so this accuracy is just the share of “{one.label}” in the data. Try an instruction-tuned model.
    </div>
  );
}

/** A job's heading (name, status, task, models, settings), its actions, and where an export went. */
function JobHead({ job, taskName, minConfidence }: { job: JobSummary; taskName: string; minConfidence: number }) {
  const jobId = job.id;
  const jobAction = useStore((s) => s.jobAction);
  const exportJob = useStore((s) => s.exportJob);
  const navigate = useStore((s) => s.navigate);
  const [exported, setExported] = useState<{ path: string; url: string | null } | null>(null);
  const doExport = async (format: 'csv' | 'json') => {
    const out = await exportJob(jobId, format, minConfidence > 0 ? minConfidence : undefined);
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
    <>
      <div className="page-head">
        <div>
          <div className="row">
            <button className="btn ghost small" onClick={() => navigate({ view: 'evaluate' })}>
              ← All evaluations
            </button>
          </div>
          <h1>
            {job.name || job.id} <StatusChip status={job.status} testId="job-status" /> <ReproducibleChip deterministic={job.deterministic} subject="job" testId="job-deterministic" />
          </h1>
          <p>
            {taskName} · {modelPairText(job.generator, job.evaluator)} · n={job.settings.n}, k={job.settings.k}, r={job.settings.r}, seed {job.settings.seed}, examples per {job.settings.scope}
          </p>
        </div>
        <div className="row">
          <WorkActions status={job.status} actions={['pause', 'resume', 'cancel']} onAction={(a) => void jobAction(jobId, a)} testIdPrefix="job" what="evaluation" />
          <button className="btn primary" onClick={() => navigate({ view: 'evaluate', id: jobId, sub: 'review' })} data-testid="job-review" title="Go through the rows TATRA is least sure of, from the keyboard">
            Review rows
          </button>
          <button className="btn" onClick={() => void doExport('csv')} data-testid="export-csv">
            Export CSV
          </button>
          <button className="btn" onClick={() => void doExport('json')} data-testid="export-json">
            Export JSON
          </button>
        </div>
      </div>
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
    </>
  );
}

function JobView({ jobId }: { jobId: string }) {
  const job = useStore((s) => s.jobs.find((j) => j.id === jobId));
  const progress = useStore((s) => s.progress[jobId]);
  const metrics = useStore((s) => s.metrics[jobId]);
  const tasks = useStore((s) => s.tasks);
  const refreshJob = useStore((s) => s.refreshJob);
  const missing = useStore((s) => s.missingJobs[jobId] === true);
  const loadMetrics = useStore((s) => s.loadMetrics);
  const jobAction = useStore((s) => s.jobAction);
  // Rows whose vote share is below this are "abstained": in the coverage figures, the rows table and exports.
  const [minConfidence, setMinConfidence] = useState(0);
  // The rows table mounts once the metrics are on screen (or could not be read), so they show
  // first (afterPaint.ts).
  const [metricsAsked, setMetricsAsked] = useState(false);
  const rowsShown = useAfterFirstPaint(metrics !== undefined || metricsAsked);

  useEffect(() => {
    void refreshJob(jobId);
  }, [jobId, refreshJob]);
  useEffect(() => {
    // Only a head start: a script that fails to come here is fetched again when the queue opens.
    void prefetchEvaluateParts().catch(() => undefined);
  }, []);

  // The metrics load with the page (this effect runs on mount too) and, while it runs, refresh
  // about twenty times over the job (every row of a small one) and on every status change, driven
  // by progress events rather than a timer.
  const done = progress?.rowsDone ?? job?.rowsDone ?? 0;
  const totalRows = progress?.rowsTotal ?? job?.rowsTotal ?? 0;
  const step = Math.max(1, Math.ceil(totalRows / 20));
  const refreshKey = `${job?.status ?? ''}:${Math.floor(done / step)}`;
  useEffect(() => {
    void loadMetrics(jobId).finally(() => setMetricsAsked(true));
  }, [refreshKey, jobId, loadMetrics]);

  const task = job ? taskById(tasks, job.taskId) : undefined;
  const iv = metrics?.intervals ?? null;
  const labels = useMemo(() => task?.labels.map((l) => l.name) ?? [], [task]);
  if (missing) return <JobMissing jobId={jobId} />;
  if (!job) {
    return (
      <div className="page">
        <p className="muted">Loading evaluation {jobId}…</p>
      </div>
    );
  }
  const total = progress?.rowsTotal ?? job.rowsTotal;
  const running = job.status === 'running' || job.status === 'queued';
  return (
    <div className="page" data-testid="job-view">
      <JobHead job={job} taskName={task?.name ?? job.taskId} minConfidence={minConfidence} />
      {job.error ? <ErrorBanner message={job.error} title="The evaluation stopped" /> : null}
      {job.stoppedBy === 'budget' && job.status === 'paused' ? <BudgetStopBanner budget={job.budget} usage={job.usage} noun="rows" onResume={(budget) => void jobAction(job.id, 'resume', { budget })} testIdPrefix="job" /> : null}
      {job.status === 'interrupted' ? <div className="banner warn">This evaluation was interrupted (the app stopped while it ran). Resume continues from the first unfinished row with the same examples and seeds.</div> : null}

      <WorkProgress
        testId="job-progress"
        running={running}
        counts={[{ done, total, noun: 'row' }]}
        calls={progress ? { done: progress.callsDone, total: progress.callsTotal } : null}
        phase={progress?.phase ?? null}
        etaSeconds={progress?.etaSeconds ?? null}
        etaRange={progress?.etaRange ?? null}
        rate={running && progress?.rowsPerMinute ? `${progress.rowsPerMinute.toFixed(1)} rows/min` : null}
      >
        <span className="small">
          running accuracy <strong data-testid="running-accuracy">{pct(progress?.runningAccuracy ?? job.accuracy)}</strong>
        </span>
      </WorkProgress>

      <OneLabelWarning metrics={metrics} />

      <div className="metrics">
        <Metric name="Accuracy" value={pct(metrics?.accuracy ?? null)} hint="Final vote against gold, over finished rows with gold" detail={<Bounds interval={iv?.accuracy} testId="accuracy-interval" />} />
        <Metric name="Macro-F1" value={pct(metrics?.macroF1 ?? null)} detail={<Bounds interval={iv?.macroF1} testId="macro-f1-interval" />} />
        <Metric name="Rows scored" value={(metrics?.scored ?? 0).toLocaleString()} />
        {metrics?.baselineAccuracy != null ? <Metric name="Zero-shot baseline" value={pct(metrics.baselineAccuracy)} detail={<Bounds interval={iv?.baseline?.accuracy} testId="baseline-interval" />} /> : null}
        {metrics?.baselineMacroF1 != null ? <Metric name="Baseline macro-F1" value={pct(metrics.baselineMacroF1)} detail={<Bounds interval={iv?.baseline?.macroF1} testId="baseline-macro-f1-interval" />} /> : null}
        {metrics?.lenientAccuracy != null ? <Metric name="Lenient (gold in output)" value={pct(metrics.lenientAccuracy)} hint="The reference code's score: the gold string appears anywhere in an output" detail={<Bounds interval={iv?.lenientAccuracy} />} /> : null}
      </div>
      {iv?.baseline?.versus ? <PairedLine label="TATRA − zero-shot baseline:" comparison={iv.baseline.versus} testId="baseline-versus" /> : null}

      {metrics ? <JobMetricsCards metrics={metrics} labels={labels} /> : null}

      {metrics ? <TrustCard metrics={metrics} minConfidence={minConfidence} onMinConfidence={setMinConfidence} /> : null}
      {iv ? <IntervalsNote /> : null}

      <div className="card">
        <div className="card-head">
          <h2>Rows</h2>
          <span className="sub">click a row for its examples, paraphrases and votes</span>
        </div>
        {rowsShown ? <RowsTable jobId={jobId} labels={labels} refreshKey={refreshKey} minConfidence={minConfidence} /> : <p className="muted small">Loading rows…</p>}
      </div>
    </div>
  );
}

/** A job's figures as cards: the confusion matrix and confidence histogram, accuracy by runs and per label. */
function JobMetricsCards({ metrics, labels }: { metrics: JobMetrics; labels: string[] }) {
  return (
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
          <span className="sub">the vote over the first j runs with its 95 % band; dashed: run j alone</span>
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
              {metrics.perLabel.map((l, i) => {
                const li = metrics.intervals?.perLabel[i];
                return (
                  <tr key={l.label}>
                    <td>
                      <LabelChip label={l.label} labels={labels} />
                    </td>
                    <td className="num">
                      {pct(l.precision)} <Bounds interval={li?.precision} />
                    </td>
                    <td className="num">
                      {pct(l.recall)} <Bounds interval={li?.recall} />
                    </td>
                    <td className="num">
                      {pct(l.f1)} <Bounds interval={li?.f1} />
                    </td>
                    <td className="num">{l.support}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        ) : null}
      </div>
    </div>
  );
}

/** How far the labels can be trusted: the reliability diagram, the accuracy–coverage curve and the minimum vote share to answer. */
function TrustCard({ metrics, minConfidence, onMinConfidence }: { metrics: JobMetrics; minConfidence: number; onMinConfidence: (t: number) => void }) {
  const at = answeredAt(metrics.selective, minConfidence);
  const sliderId = useId();
  return (
    <div className="grid-2" data-testid="trust">
      <div className="card">
        <div className="card-head">
          <h2>Reliability</h2>
          <span className="sub">
            accuracy against vote share · ECE {metrics.calibration.ece?.toFixed(3) ?? '–'} <Bounds interval={metrics.intervals?.calibration.ece} unit="number" /> · Brier{' '}
            {metrics.calibration.brier?.toFixed(3) ?? '–'} <Bounds interval={metrics.intervals?.calibration.brier} unit="number" />
          </span>
        </div>
        <ReliabilityDiagram calibration={metrics.calibration} intervals={metrics.intervals?.calibration.bins ?? null} />
        <p className="muted small">Line: accuracy of each bin’s rows, with its 95 % interval; dots: their mean vote share; bars: how many rows; dashed: a perfectly calibrated vote.</p>
      </div>
      <div className="card">
        <div className="card-head">
          <h2>Answer only when sure</h2>
          <span className="sub">accuracy on the rows answered, against how many are answered</span>
        </div>
        <CoverageCurve selective={metrics.selective} intervals={metrics.intervals?.calibration.selective ?? null} minConfidence={minConfidence} />
        <div className="row">
          <label htmlFor={sliderId} className="small">
            Minimum vote share <strong>{pct(minConfidence, 0)}</strong>
          </label>
          <input id={sliderId} type="range" min={0} max={1} step={0.05} value={minConfidence} onChange={(e) => onMinConfidence(Number(e.target.value))} data-testid="min-confidence" style={{ flex: 1 }} />
        </div>
        <p className="small" data-testid="answered" aria-live="polite">
          {at
            ? `Answers ${pct(at.coverage)} of the scored rows, ${pct(at.accuracy)} of them right (all rows: ${pct(metrics.accuracy)}); the rest are abstained in the rows below and in exports.`
            : `No row reaches ${pct(minConfidence, 0)}: every row would be abstained.`}
        </p>
      </div>
    </div>
  );
}

export function EvaluateView() {
  const route = useStore((s) => s.route);
  if (route.id && route.sub === 'review') {
    return (
      <Suspense fallback={<p className="muted">Loading…</p>}>
        <ReviewView jobId={route.id} key={route.id} />
      </Suspense>
    );
  }
  if (route.id) return <JobView jobId={route.id} key={route.id} />;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Evaluate</h1>
          <p>Run TATRA over a labelled file and see where it goes wrong. Jobs run in the background and survive a reload or a restart.</p>
        </div>
      </div>
      <Welcome />
      <DataStep />
      <MappingStep />
      <SettingsStep />
      <History />
    </div>
  );
}

