// A comparison on the experiment page: the set-up's task, generators, evaluators and run settings
// (every pair an evaluation job; evaluators of one generator share its examples and paraphrases),
// and its result as a pair table, a generator × evaluator heat map and grouped bars like the
// paper's cross-model table.
import { useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, ErrorBar, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { modelLabel } from '../../../../electron/common/model-spec';
import { COMPARISON_INTERVALS_NOTE, TIED_FOR_BEST_MEANS, comparisonMatrix, tiedPairs, versusBestText } from '../../../../electron/common/contract/comparisons';
import { boundsText, intervalName } from '../../../../electron/common/contract/interval';
import { DEFAULT_SETTINGS, type TatraSettings } from '../../../../electron/common/tatra';
import { ChartFigure } from '../../components/ChartFigure';
import { ErrorBanner, ProgressBar, TableWrap } from '../../components/Common';
import { HeatGrid } from '../../components/HeatGrid';
import { Bounds, errorBar } from '../../components/Intervals';
import { duration, heatCell, pct } from '../../components/labels';
import { useModelOptions } from '../../components/ModelPicker';
import { RowLimitField, StatusChip, TaskField, chosenLabelMap } from '../../components/RunSetup';
import { RunSettingsFields } from '../../components/RunSettingsFields';
import { useSeededField, useSeededFields } from '../../components/seededFields';
import { useResolvedColor } from '../../components/VoteCharts';
import { useStore } from '../../store';
import { baseName } from '../../store/jobsSlice';
import { formatHash } from '../../store/uiSlice';
import type { ExperimentPage, ResultOfKind, SetupParts } from './kinds';

type Comparison = ResultOfKind<'compare'>;

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

/** The task, the generators and evaluators to pair, the run settings. */
function useCompareSetup(): SetupParts<'compare'> {
  const taskId = useStore((s) => s.currentTaskId);
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const saved = useStore((s) => s.settings);
  // Like Evaluate: the saved run settings, the chosen models (the first one a newcomer adds is chosen for every form).
  const [tatra, setTatra] = useSeededFields<TatraSettings>(saved?.tatra ?? DEFAULT_SETTINGS);
  const chosenGenerator = saved?.generator ?? null;
  const chosenEvaluator = saved?.evaluator ?? chosenGenerator;
  const [generators, setGenerators] = useSeededField<string[]>(useMemo(() => (chosenGenerator ? [chosenGenerator] : []), [chosenGenerator]));
  const [evaluators, setEvaluators] = useSeededField<string[]>(useMemo(() => (chosenEvaluator ? [chosenEvaluator] : []), [chosenEvaluator]));
  const pairs = generators.length * evaluators.length;
  return {
    shape: `${generators.length} × ${evaluators.length} = ${pairs} pair${pairs === 1 ? '' : 's'}, each an evaluation job; evaluators of one generator share its examples and paraphrases`,
    fields: (
      <>
        <div className="grid-3">
          <TaskField testId="compare-task" />
          <ModelChecklist title="Generators (write examples and paraphrases)" value={generators} onChange={setGenerators} testId="compare-generators" />
          <ModelChecklist title="Evaluators (classify)" value={evaluators} onChange={setEvaluators} testId="compare-evaluators" />
        </div>
        <RunSettingsFields value={tatra} onChange={setTatra} testIdPrefix="compare">
          <RowLimitField value={draft.limit} onChange={(limit) => setDraft({ limit })} testId="compare-limit" />
        </RunSettingsFields>
      </>
    ),
    spec:
      draft.inputColumn && draft.goldColumn && pairs > 0
        ? {
            taskId,
            dataPath: draft.path,
            generators,
            evaluators,
            settings: tatra,
            inputColumn: draft.inputColumn,
            goldColumn: draft.goldColumn,
            labelMap: chosenLabelMap(draft.labelMap),
            ...(draft.limit !== null ? { limit: draft.limit } : {}),
          }
        : null,
    calls: { settings: tatra, times: pairs },
  };
}

function Heatmap({ result }: { result: Comparison }) {
  const m = comparisonMatrix(result);
  const values = m.flat().filter((v): v is number => v !== null);
  const lo = Math.min(...values, 1);
  const hi = Math.max(...values, 0);
  const { generators, evaluators } = result.spec;
  return (
    <HeatGrid
      testId="compare-heatmap"
      ariaLabel="Accuracy, generators in rows, evaluators in columns"
      columns={{ title: 'Evaluator', minWidth: 80, entries: evaluators.map((e) => ({ key: e, label: modelLabel(e), title: e })) }}
      rows={{ title: 'Generator', minWidth: 120, entries: generators.map((g) => ({ key: g, label: modelLabel(g), title: g })) }}
      cell={(i, j) => {
        const g = generators[i]!;
        const e = evaluators[j]!;
        const v = m[i]?.[j] ?? null;
        const pair = result.pairs.find((p) => p.generator === g && p.evaluator === e);
        const dropped = pair?.dropped ?? null;
        const tied = pair?.tiedForBest === true;
        const interval = pair?.accuracyInterval ? ` ${boundsText(pair.accuracyInterval)}` : '';
        // A dropped pair's accuracy is on the rows it ran: said so, and set apart (hatched, its text
        // muted but still readable: no opacity, which took it under the contrast the page keeps).
        const title = `${modelLabel(g)} → ${modelLabel(e)}: ${pct(v)}${interval}${dropped ? ` on its ${dropped.afterRows} rows; dropped, ${dropped.reason}` : ''}${tied ? ' · tied for best' : ''}${pair && !pair.best && pair.versusBest ? ` · against the best ${versusBestText(pair)}` : ''}`;
        return (
          <div
            key={`${g}-${e}`}
            className={`cell${tied ? ' tied' : ''}${dropped ? ' dropped' : ''}`}
            role="cell"
            data-testid="heat-cell"
            data-dropped={dropped ? 'true' : undefined}
            data-tied={tied ? 'true' : undefined}
            title={title}
            style={dropped ? undefined : heatCell(v === null ? null : hi <= lo ? 0.5 : (v - lo) / (hi - lo))}
          >
            {pct(v)}
            {tied ? <span className="tied-mark" aria-label="tied for best"> ★</span> : null}
            {dropped && <div className="small">dropped at {dropped.afterRows}</div>}
          </div>
        );
      }}
    />
  );
}

/**
 * One bar per pair, grouped by generator, each with its accuracy's 95 % Wilson interval as an error
 * bar (docs/method.md §16): bars a few points apart whose bars overlap are not a ranking. Keys are by
 * the evaluator's place (`a0`, `e0` …), not its label, which may hold dots recharts reads as paths.
 */
function Bars({ result }: { result: Comparison }) {
  const color = useResolvedColor();
  const m = comparisonMatrix(result);
  const { generators, evaluators } = result.spec;
  const pairOf = (g: string, e: string) => result.pairs.find((p) => p.generator === g && p.evaluator === e);
  const data = generators.map((g, i) => {
    const row: Record<string, string | number | [number, number] | null> = { generator: modelLabel(g) };
    evaluators.forEach((e, j) => {
      const v = m[i]?.[j] ?? null;
      const iv = pairOf(g, e)?.accuracyInterval ?? null;
      row[`a${j}`] = v === null ? null : Math.round(v * 1000) / 10;
      row[`e${j}`] = errorBar(v, iv, 100);
    });
    return row;
  });
  const interval = result.pairs.find((p) => p.accuracyInterval)?.accuracyInterval ?? null;
  const caption = `Accuracy by generator, one bar per evaluator${interval ? `; error bars: ${intervalName(interval)}` : ''}`;
  const text = {
    caption,
    columns: ['Generator', ...evaluators.map((e) => `evaluator ${modelLabel(e)}`)],
    rows: generators.map((g, i) =>
      [modelLabel(g), ...evaluators.map((e, j) => {
        const iv = pairOf(g, e)?.accuracyInterval ?? null;
        return `${pct(m[i]?.[j] ?? null)}${iv ? ` ${boundsText(iv)}` : ''}`;
      })],
    ),
  };
  const name = (j: number) => `evaluator ${modelLabel(evaluators[j]!)}`;
  return (
    <ChartFigure data={text} testId="compare-chart" style={{ width: '100%', height: 260 }} title={caption}>
      <ResponsiveContainer width="100%" height={236}>
        <BarChart data={data} margin={{ top: 8, right: 16, bottom: 8, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid vertical={false} stroke={color('var(--border)')} />
          <XAxis dataKey="generator" stroke={color('var(--muted)')} fontSize={12} />
          <YAxis domain={[0, 100]} stroke={color('var(--muted)')} fontSize={12} unit="%" />
          <Tooltip
            formatter={(v, n, item) => {
              const j = Number(String(item.dataKey).slice(1));
              const err = (item.payload as Record<string, [number, number] | null>)[`e${j}`];
              const bounds = err && typeof v === 'number' ? ` [${(v - err[0]).toFixed(1)}, ${(v + err[1]).toFixed(1)}]` : '';
              return [`${String(v)}%${bounds}`, String(n)];
            }}
            contentStyle={{ background: color('var(--panel)'), border: `1px solid ${color('var(--border)')}` }}
          />
          {/* In the bars' order (the evaluators as chosen), not alphabetical (recharts' default). */}
          <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={(item) => Number(String(item.dataKey).slice(1))} />
          {/* minPointSize: recharts draws no bar of height 0, and with it no error bar; a pair at 0 %
              still has an interval worth seeing ([0, 65.8] on 2 rows), on a bar of one pixel at the axis. */}
          {evaluators.map((e, j) => (
            <Bar key={e} dataKey={`a${j}`} name={name(j)} fill={color(SERIES[j % SERIES.length]!)} minPointSize={1} isAnimationActive={false}>
              <ErrorBar dataKey={`e${j}`} width={6} stroke={color('var(--text)')} strokeWidth={1.5} direction="y" />
            </Bar>
          ))}
        </BarChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}

/** Which pairs are tied for best, and what that means: never one winner by a hair (docs/method.md §16). */
function TiedNote({ result }: { result: Comparison }) {
  const tied = tiedPairs(result.pairs);
  if (tied.length === 0) return null;
  // Mid-run, pairs with no score yet are compared with nothing: a lone best is only best so far.
  const scored = result.pairs.filter((p) => p.accuracy !== null).length;
  const lone = scored === 1 ? ' (the only pair scored so far)' : scored < result.pairs.length ? ' (told apart at 95 % from every other pair scored so far)' : ' (told apart from every other pair at 95 %)';
  return (
    <p className="small" data-testid="compare-tied">
      <strong>Tied for best ★:</strong> {tied.map((p) => `${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}`).join(', ')}
      {tied.length > 1 ? ` (${tied.length} pairs ${TIED_FOR_BEST_MEANS})` : lone}. <span className="muted">{sentence(COMPARISON_INTERVALS_NOTE)}.</span>
    </p>
  );
}

/** Where a raced comparison's race stands, and the rows its drops spared (docs/method.md §16, racing). */
function RaceNote({ result }: { result: Comparison }) {
  if (!result.race) return null;
  const { rounds, roundRows, alive, dropped } = result.race;
  const spared = result.pairs.reduce((sum, p) => sum + (p.dropped ? p.rowsTotal - p.rowsDone : 0), 0);
  return (
    <div className="banner" data-testid="compare-race">
      Raced: {rounds} {rounds === 1 ? 'round' : 'rounds'} of {roundRows} rows decided, {alive} {alive === 1 ? 'pair' : 'pairs'} still in, {dropped} dropped
      {spared > 0 ? `: ${spared.toLocaleString('en-US')} rows not run` : ''}.
    </div>
  );
}

/** The pairs, one a row, each leading to its evaluation job; then the matrix as a heat map and as bars. */
function ComparisonResult({ result }: { result: Comparison }) {
  return (
    <div className="card">
      {result.warnings.map((w) => (
        <ErrorBanner key={w} title="Warning" message={w} />
      ))}
      <RaceNote result={result} />
      <TableWrap label="Pairs of the comparison">
        <table className="data" data-testid="compare-table">
          <thead>
            <tr>
              <th>Generator</th>
              <th>Evaluator</th>
              <th>Status</th>
              <th className="num">Accuracy</th>
              <th className="num" title={intervalName({ method: 'wilson', level: 0.95 })}>95 % interval</th>
              <th title="This pair minus the best, in points, on the rows both scored: Tango's paired 95 % interval, exact McNemar p after Holm's correction">Against the best</th>
              <th className="num">Macro-F1</th>
              <th className="num">Rows</th>
              <th className="num">Time</th>
              <th className="num">Tokens</th>
              <th>Job</th>
            </tr>
          </thead>
          <tbody>
            {result.pairs.map((p) => (
              <tr key={`${p.generator}|${p.evaluator}`} data-testid="pair-row" data-status={p.status}>
                <td title={p.generator}>{modelLabel(p.generator)}</td>
                <td title={p.evaluator}>{modelLabel(p.evaluator)}</td>
                <td>
                  <StatusChip status={p.status} testId="pair-status" title={p.error ?? p.dropped?.reason} />
                  {p.dropped && <div className="muted small" data-testid="pair-dropped">{p.dropped.reason}</div>}
                  {p.status === 'running' && p.rowsTotal > 0 && <ProgressBar value={p.rowsDone / p.rowsTotal} label={`Rows done for ${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}`} />}
                </td>
                <td className="num">{pct(p.accuracy)}</td>
                <td className="num">
                  <Bounds interval={p.accuracyInterval} testId="pair-interval" />
                </td>
                <td data-testid="pair-versus-best" title={p.versusBest ? intervalName(p.versusBest.difference) : undefined}>
                  {p.tiedForBest ? (
                    <span className="chip ok" data-testid="pair-tied">
                      tied for best
                    </span>
                  ) : null}{' '}
                  <span className="small">{p.best ? '' : versusBestText(p)}</span>
                </td>
                <td className="num">
                  {pct(p.macroF1)} <Bounds interval={p.macroF1Interval} testId="pair-macro-f1-interval" />
                </td>
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
        <Heatmap result={result} />
        <Bars result={result} />
      </div>
      <TiedNote result={result} />
      <p className="muted small">Evaluators of one generator saw byte-identical examples and paraphrases (cached by generator, task, settings, seed and input), so differences in a row come from the evaluator alone.</p>
    </div>
  );
}

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export const comparePage: ExperimentPage<'compare'> = {
  kind: 'compare',
  noun: 'comparison',
  nouns: 'Comparisons',
  cellNoun: 'pair',
  title: 'Compare models',
  intro: 'Which generator with which evaluator: every pair an evaluation on the same rows, one experiment that survives a restart and resumes where it stopped.',
  setupTitle: 'Task, models and settings',
  start: 'Run comparison',
  budgetPlaceholder: 'Budget for all pairs, e.g. calls=5000',
  useSetup: useCompareSetup,
  historyName: (c) => `${c.taskId} · ${baseName(c.dataPath)}`,
  historyColumns: [
    { header: 'Pairs', cell: (c) => `${c.generators.length} × ${c.evaluators.length}` },
    { header: 'Jobs', num: true, cell: (c) => `${c.progress.jobsDone}/${c.progress.jobsTotal}` },
  ],
  heading: (r) => `${r.spec.taskId} · ${baseName(r.spec.dataPath)}`,
  subtitle: (r) => {
    const s = r.spec.settings;
    return `${plural(r.spec.generators.length, 'generator')} × ${plural(r.spec.evaluators.length, 'evaluator')} · n=${s.n}, k=${s.k}, r=${s.r}, seed ${s.seed}${r.spec.limit ? ` · ${r.spec.limit} rows` : ''}`;
  },
  Result: ComparisonResult,
};
