// Classify: one input, watched live: per run the examples by label, the paraphrases and each
// variant's prediction as it arrives; then the vote breakdown, the verdict, tokens and time.
import { useEffect, useId, useMemo, useState } from 'react';
import { DEFAULT_SETTINGS, type OutputConstraint, type TatraResult, type TatraSettings } from '../../../electron/common/tatra';
import type { ClassifyStartInput } from '../../../electron/common/contract/classify';
import { confidentStopPromise, withEarlyStop } from '../../../electron/common/settings';
import type { AppSettings } from '../../../electron/common/contract/settings';
import { CharCounter, ErrorBanner, LabelChip, ProgressBar, ReproducibleChip } from '../components/Common';
import { RunPlan } from '../components/RunPlan';
import { EarlyStopRule } from '../components/EarlyStopRule';
import { INPUT_MAX_CHARS } from '../../../electron/common/settings';
import { ModelPicker } from '../components/ModelPicker';
import { TaskSelect } from '../components/TaskSelect';
import { RunSettingsFields } from '../components/RunSettingsFields';
import { useSeededField, useSeededFields } from '../components/seededFields';
import { VariantGrid, VoteBars } from '../components/VoteCharts';
import { duration, pct } from '../components/labels';
import { useStore } from '../store';
import { Welcome } from '../components/Welcome';
import { leader, liveCounts, liveStage, liveVotes, type LiveRun } from '../store/classifyLive';
import { taskById } from '../store/tasksSlice';

/** How a role's outputs were held (a remote server may offer only a label choice, or nothing). */
const CONSTRAINED_WORDS: Record<OutputConstraint, string> = {
  grammar: 'were held to the grammar',
  choice: 'were held to the label choice',
  'json-schema': 'were held to a JSON-schema enum',
  none: 'were unconstrained (the server offers no constrained decoding for them; parsed and validated only)',
};

/** A chip for a prediction still to come: "…" while the run goes on, "–" once it has stopped without it. */
function PendingChip({ stopped }: { stopped: boolean }) {
  return stopped ? (
    <span className="chip" title="not evaluated: the run stopped first">
      –
    </span>
  ) : (
    <span className="chip" title="being evaluated">
      …
    </span>
  );
}

function RunDetails({ run, labels, open, stopped }: { run: LiveRun; labels: string[]; open: boolean; stopped: boolean }) {
  const groups = Object.entries(run.examplesByLabel);
  const exampleCount = groups.reduce((a, [, e]) => a + e.length, 0);
  const orig = run.predictions[0];
  return (
    <details className="run" open={open} data-testid={`run-${run.run}`}>
      <summary>
        Run {run.run + 1}
        <span className="chip">seed {run.seed}</span>
        {groups.length > 0 ? <span className="chip">{exampleCount} examples</span> : null}
        {run.paraphrases ? <span className="chip">{run.paraphrases.length} paraphrases</span> : null}
        {run.examplesCached ? <span className="chip run">examples cached</span> : null}
        {run.fallback ? <span className="chip warn">paraphrase fallback: {run.fallback.kind}</span> : null}
      </summary>
      <div className="run-body">
        <div>
          <div className="section-label" style={{ padding: '4px 0' }}>
            Synthetic examples
          </div>
          {groups.length === 0 ? <p className="skeleton">{stopped ? 'none written: the run stopped first' : 'writing examples…'}</p> : null}
          {groups.map(([label, examples]) => (
            <div className="examples-group" key={label}>
              <div>
                <LabelChip label={label || 'examples'} labels={labels} /> <span className="muted xs">{examples.length}</span>
              </div>
              {examples.map((ex, i) => (
                <div className="example" key={i} style={{ borderLeftColor: label ? `var(--l${Math.max(0, labels.indexOf(label)) % 8})` : undefined }}>
                  {ex.text}
                  {label === '' ? <span className="muted"> → {ex.label}</span> : null}
                </div>
              ))}
            </div>
          ))}
        </div>
        <div>
          <div className="section-label" style={{ padding: '4px 0' }}>
            Input and paraphrases
          </div>
          <ol className="paras" start={0}>
            <li>
              <em>original</em>
              <span className="pred">{orig ? <LabelChip label={orig.label} labels={labels} /> : <PendingChip stopped={stopped} />}</span>
            </li>
            {(run.paraphrases ?? []).map((p, i) => {
              const pred = run.predictions[i + 1];
              return (
                <li key={i}>
                  {p}
                  <span className="pred">{pred ? <LabelChip label={pred.label} labels={labels} /> : <PendingChip stopped={stopped} />}</span>
                </li>
              );
            })}
          </ol>
          {run.paraphrases === null ? <p className="skeleton">{stopped ? 'none written: the run stopped first' : 'writing paraphrases…'}</p> : null}
        </div>
      </div>
    </details>
  );
}

interface FormSeed {
  input: string;
  tatra: TatraSettings;
  generator: string;
  evaluator: string;
  sameModel: boolean;
}

function formSeed(request: ClassifyStartInput | null, settings: AppSettings | null): FormSeed {
  if (request) {
    return { input: request.input, tatra: request.settings, generator: request.generator, evaluator: request.evaluator, sameModel: request.generator === request.evaluator };
  }
  return {
    input: '',
    tatra: settings?.tatra ?? DEFAULT_SETTINGS,
    generator: settings?.generator ?? '',
    evaluator: settings?.evaluator ?? settings?.generator ?? '',
    sameModel: !settings?.evaluator || settings.evaluator === settings.generator,
  };
}

export function ClassifyView() {
  const c = useStore((s) => s.classify);
  const tasks = useStore((s) => s.tasks);
  const taskId = useStore((s) => s.currentTaskId);
  // Set once a run starts (or is restored after a reload), which is when results are shown.
  const shown = c.request?.settings ?? DEFAULT_SETTINGS;
  const task = taskById(tasks, c.request?.taskId ?? taskId);
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Classify</h1>
          <p>A generator writes synthetic examples and paraphrases; an evaluator labels the input and every paraphrase; the majority decides.</p>
        </div>
      </div>

      <Welcome />
      <ClassifyForm />

      <ErrorBanner message={c.error?.message} title="Classification failed" />
      {c.status === 'cancelled' ? <div className="banner info">Cancelled. Partial results are shown below.</div> : null}

      {task && (c.status === 'starting' || c.status === 'running' || c.live.runs.length > 0) ? (
        <>
          <div className="grid-2">
            <VoteCard shown={shown} />
            <VariantsCard shown={shown} />
          </div>
          <RunsCard />
        </>
      ) : null}
    </div>
  );
}

/** Labels, votes so far, the stage and the leader of the run on show (shown: its settings). */
function useLiveVote(shown: TatraSettings) {
  const c = useStore((s) => s.classify);
  const tasks = useStore((s) => s.tasks);
  const taskId = useStore((s) => s.currentTaskId);
  const task = taskById(tasks, c.request?.taskId ?? taskId);
  const labels = useMemo(() => task?.labels.map((l) => l.name) ?? [], [task]);
  const votes = liveVotes(c.live, labels);
  const { expected } = liveCounts(c.live, shown.n, shown.r);
  const stage = task ? liveStage(c.live, shown, task) : null;
  const validVotes = Object.values(votes).reduce((a, b) => a + b, 0);
  const result = c.live.result;
  const lead = result ? result.label : leader(votes, labels);
  return { task, labels, votes, expected, stage, validVotes, result, lead };
}

/** Task, models, run settings and input; starts and cancels a run, and says how it is going. */
function ClassifyForm() {
  const taskId = useStore((s) => s.currentTaskId);
  const settings = useStore((s) => s.settings);
  const updateSettings = useStore((s) => s.updateSettings);
  const c = useStore((s) => s.classify);
  const start = useStore((s) => s.startClassify);
  const cancel = useStore((s) => s.cancelClassify);

  // Each field starts from the run on show (after a reload the host gives it back: show what it
  // was asked) or else the saved settings, both of which may arrive after the first render; a
  // field the user has changed keeps the user's value (seededFields.ts).
  const seed = formSeed(c.request, settings);
  const [input, setInput] = useSeededField(seed.input);
  const [tatra, setTatra] = useSeededFields<TatraSettings>(seed.tatra);
  const [generator, setGenerator] = useSeededField(seed.generator);
  const [evaluator, setEvaluator] = useSeededField(seed.evaluator);
  const [sameModel, setSameModel] = useSeededField(seed.sameModel);
  const running = c.status === 'running' || c.status === 'starting';

  const { task, stage } = useLiveVote(c.request?.settings ?? tatra);
  const eval_ = sameModel ? generator : evaluator;
  // Problems are said on submit (or once the field is left), never before anything is typed.
  const [tried, setTried] = useState(false);
  const [inputLeft, setInputLeft] = useState(false);
  const inputProblem = input.trim().length === 0 ? 'Type the text to classify.' : input.length > INPUT_MAX_CHARS ? `Too long for one input: at most ${INPUT_MAX_CHARS.toLocaleString('en-US')} characters. Put long texts in a data file and use Evaluate.` : null;
  const modelProblem = generator.trim() === '' || eval_.trim() === '' ? 'Choose a model.' : null;

  const submit = () => {
    if (running || !task) return;
    setTried(true);
    if (inputProblem || modelProblem) return;
    void updateSettings({ tatra, generator, evaluator: eval_ });
    void start({ taskId, input, generator, evaluator: eval_, settings: withEarlyStop(tatra, 'input') });
  };

  const showInputProblem = inputProblem !== null && (tried || (inputLeft && input.length > 0) || input.length > INPUT_MAX_CHARS);

  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
      aria-label="Classify settings"
      noValidate
    >
      <ModelFields generator={generator} setGenerator={setGenerator} evaluator={evaluator} setEvaluator={setEvaluator} sameModel={sameModel} setSameModel={setSameModel} tried={tried} />
      <RunSettingsFields value={tatra} onChange={setTatra} testIdPrefix="classify">
        <label className="field inline" style={{ alignSelf: 'center' }} title="Stop launching runs once the leader has more votes than the runner-up plus every vote still to come: the same label, fewer calls.">
          <input type="checkbox" checked={withEarlyStop(tatra, 'input').earlyStop} onChange={(e) => setTatra({ ...tatra, earlyStop: e.target.checked })} data-testid="classify-early-stop" /> Stop once decided
        </label>
        <EarlyStopRule value={tatra} onChange={setTatra} disabled={!withEarlyStop(tatra, 'input').earlyStop} testId="classify-early-stop-rule" />
      </RunSettingsFields>
      <InputField label={task?.inputName ?? 'Input'} value={input} onChange={setInput} problem={showInputProblem ? inputProblem : null} onLeave={() => setInputLeft(true)} onRun={submit} />
      <div className="row">
        <button type="submit" className="btn primary" disabled={running || !task} data-testid="classify-start">
          {running ? 'Classifying…' : 'Classify'}
        </button>
        {running ? (
          <button type="button" className="btn danger" onClick={() => void cancel()} data-testid="classify-cancel">
            Cancel
          </button>
        ) : null}
        {!running && task ? (
          <RunPlan
            task={task}
            settings={tatra}
            rows={1}
            request={input.trim() && !inputProblem && !modelProblem ? { method: 'plans.classify', input: { taskId, input, generator, evaluator: eval_, settings: withEarlyStop(tatra, 'input') } } : null}
            testId="classify-plan"
          />
        ) : null}
        <span className="spacer" />
        <ClassifyStatus stage={stage} running={running} />
      </div>
      {running ? <ProgressBar value={stage?.fraction ?? 0} label="Classification progress, in model calls" /> : null}
    </form>
  );
}

/** The task and the models: one for both roles, or a generator and an evaluator. */
function ModelFields(p: { generator: string; setGenerator(v: string): void; evaluator: string; setEvaluator(v: string): void; sameModel: boolean; setSameModel(v: boolean): void; tried: boolean }) {
  const { generator, setGenerator, evaluator, setEvaluator, sameModel, setSameModel, tried } = p;
  const taskId = useStore((s) => s.currentTaskId);
  const setTask = useStore((s) => s.setCurrentTask);
  return (
  <div className="grid-3">
    <TaskSelect value={taskId} onChange={setTask} testId="classify-task" />
    <ModelPicker label={sameModel ? 'Model (generator and evaluator)' : 'Generator'} value={generator} onChange={setGenerator} testId="classify-generator" error={tried && !generator.trim() ? 'Choose a model.' : null} />
    {sameModel ? (
      <label className="field inline" style={{ alignSelf: 'center' }}>
        <input type="checkbox" checked={sameModel} onChange={(e) => setSameModel(e.target.checked)} /> Same model evaluates
      </label>
    ) : (
      <div className="stack" style={{ gap: 4 }}>
        <ModelPicker label="Evaluator" value={evaluator} onChange={setEvaluator} testId="classify-evaluator" error={tried && !evaluator.trim() ? 'Choose a model.' : null} />
        <label className="field inline small">
          <input type="checkbox" checked={sameModel} onChange={(e) => setSameModel(e.target.checked)} /> Same model evaluates
        </label>
      </div>
    )}
  </div>
  );
}

/** The text to classify, its problem once it has one to say, and its length against the limit; Ctrl+Enter runs. */
function InputField(p: { label: string; value: string; onChange(v: string): void; problem: string | null; onLeave(): void; onRun(): void }) {
  const counterId = useId();
  return (
    <label className="field">
      <span>{p.label}</span>
      <textarea
        rows={3}
        value={p.value}
        onChange={(e) => p.onChange(e.target.value)}
        onBlur={p.onLeave}
        placeholder="Type the text to classify. Ctrl+Enter runs it."
        aria-invalid={p.problem !== null}
        aria-describedby={counterId}
        data-testid="classify-input"
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            p.onRun();
          }
        }}
      />
      <span className="row" style={{ gap: 8 }}>
        {p.problem !== null ? (
          <span className="field-error" data-testid="classify-input-error">
            {p.problem}
          </span>
        ) : null}
        <span className="spacer" />
        <CharCounter length={p.value.length} max={INPUT_MAX_CHARS} id={counterId} />
      </span>
    </label>
  );
}

/** The run's stage (announced), its model calls and the time it has taken, ticking while it runs. */
function ClassifyStatus({ stage, running }: { stage: ReturnType<typeof useLiveVote>['stage']; running: boolean }) {
  const c = useStore((s) => s.classify);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(t);
  }, [running]);
  const elapsed = c.startedAt ? (c.finishedAt ?? now) - c.startedAt : null;
  const statusText = c.status === 'starting' ? 'Loading models…' : c.status === 'running' ? (stage?.text ?? '') : c.status === 'done' ? 'Done' : c.status === 'cancelled' ? 'Cancelled' : 'Failed';
  if (c.status === 'idle') return null;
  return (
    <span className="muted small" data-testid="classify-status">
      {/* The stage is announced; the counts beside it are not (they change with every call). */}
      <span role="status">{statusText}</span>
      {c.status === 'running' && stage && stage.calls.total > 0 ? <span data-testid="classify-call-count"> · {stage.calls.done} of {stage.calls.total} model calls</span> : null}
      {elapsed !== null ? ` · ${duration(elapsed)}` : ''}
    </span>
  );
}

/** The verdict (final or leading label, confidence) and a bar per label. */
function VoteCard({ shown }: { shown: TatraSettings }) {
  const { labels, votes, expected, validVotes, result, lead } = useLiveVote(shown);
  return (
    <div className="card" data-testid="vote-breakdown">
      <div className="card-head">
        <h2>Vote breakdown</h2>
        <span className="sub">
          {validVotes} valid votes of {result ? result.votesCast : expected}
        </span>
      </div>
      <div className="verdict" data-testid="verdict">
        <div className="stack" style={{ gap: 2 }}>
          <span className="muted small">{result ? 'Final label' : 'Leading so far'}</span>
          <span className="big" data-testid="final-label" style={{ color: lead ? `var(--l${Math.max(0, labels.indexOf(lead)) % 8})` : undefined }}>
            {lead ?? '—'}
          </span>
        </div>
        <span className="spacer" />
        <div className="stack" style={{ gap: 2, textAlign: 'right' }}>
          <span className="muted small">Confidence</span>
          <strong style={{ fontSize: 20 }} data-testid="confidence">
            {result ? pct(result.confidence) : validVotes > 0 && lead ? pct((votes[lead] ?? 0) / validVotes) : '–'}
          </strong>
          {result && result.tieBreak !== 'none' ? <span className="chip warn">tie broken by {result.tieBreak}</span> : null}
          {result?.decidedEarly ? (
            <span
              className="chip"
              data-testid="decided-early"
              title={
                result.earlyStop?.rule === 'confident'
                  ? `Stopped sure at ${result.earlyStop.p}: ${confidentStopPromise(result.earlyStop.p)}. This input's risk at the stop: ${pct(result.earlyStop.risk ?? 0)}. Confidence is over the votes cast.`
                  : 'The remaining runs could not change the winner, so they were not launched. Confidence is over the votes cast.'
              }
            >
              decided after {result.runs.length} of {result.settings.r} runs · {result.callsSaved} calls saved
            </span>
          ) : null}
          {result ? <ReproducibleChip deterministic={result.deterministic} subject="result" testId="deterministic" /> : null}
        </div>
      </div>
      {labels.length > 0 ? <VoteBars votes={votes} labels={labels} total={validVotes} /> : <VoteBars votes={votes} labels={[]} total={validVotes} />}
    </div>
  );
}

/** Each run's variants as they are labelled, and once done the stages' calls, tokens and time. */
function VariantsCard({ shown }: { shown: TatraSettings }) {
  const c = useStore((s) => s.classify);
  const { labels, result } = useLiveVote(shown);
  return (
    <div className="card">
      <div className="card-head">
        <h2>Runs × variants</h2>
        <span className="sub">original input and each paraphrase, per run</span>
      </div>
      {/* Once decided early, the grid holds the runs that were made, not r. */}
      <VariantGrid runs={c.live.runs} r={result ? result.runs.length : shown.r} n={shown.n} labels={labels} stopped={c.status === 'cancelled' || c.status === 'failed'} />
      {result ? <StagesTable result={result} /> : null}
      {result && (result.constrained.generator !== 'grammar' || result.constrained.evaluator !== 'grammar') ? (
        <p className="muted small" data-testid="constrained">
          Generator outputs {CONSTRAINED_WORDS[result.constrained.generator]}; evaluator outputs {CONSTRAINED_WORDS[result.constrained.evaluator]}.
        </p>
      ) : null}
      {result && (result.filteredExamples > 0 || result.fallbacks > 0) ? (
        <p className="muted small">
          {result.filteredExamples} generated examples were dropped by validation; {result.fallbacks} paraphrase fallbacks.
        </p>
      ) : null}
    </div>
  );
}

function StagesTable({ result }: { result: TatraResult }) {
  return (
    <table className="data" data-testid="stages">
      <thead>
        <tr>
          <th>Stage</th>
          <th className="num">Calls</th>
          <th className="num">Prompt tokens</th>
          <th className="num">Output tokens</th>
          <th className="num">Time</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(result.stages).map(([name, st]) => (
          <tr key={name}>
            <td>{name}</td>
            <td className="num">{st.calls}</td>
            <td className="num">{st.promptTokens.toLocaleString()}</td>
            <td className="num">{st.completionTokens.toLocaleString()}</td>
            <td className="num">{duration(st.ms)}</td>
          </tr>
        ))}
        <tr>
          <td>
            <strong>total</strong>
          </td>
          <td className="num">{Object.values(result.stages).reduce((a, s) => a + s.calls, 0)}</td>
          <td className="num">{Object.values(result.stages).reduce((a, s) => a + s.promptTokens, 0).toLocaleString()}</td>
          <td className="num">{Object.values(result.stages).reduce((a, s) => a + s.completionTokens, 0).toLocaleString()}</td>
          <td className="num">{duration(result.totalMs)}</td>
        </tr>
      </tbody>
    </table>
  );
}

/** Every run: its examples by label, its paraphrases and each one's prediction. */
function RunsCard() {
  const c = useStore((s) => s.classify);
  const { labels } = useLiveVote(c.request?.settings ?? DEFAULT_SETTINGS);
  return (
    <div className="card">
      <div className="card-head">
        <h2>Runs</h2>
        <span className="sub">examples grouped by label; paraphrases with each variant's prediction</span>
      </div>
      <div className="runs">
        {c.live.runs.length === 0 ? <p className="skeleton">{c.status === 'starting' ? 'loading models…' : 'waiting for the first run…'}</p> : null}
        {c.live.runs.map((run, i) => (
          <RunDetails key={run.run} run={run} labels={labels} open={i === c.live.runs.length - 1 || c.live.runs.length <= 3} stopped={c.status === 'cancelled' || c.status === 'failed'} />
        ))}
      </div>
    </div>
  );
}
