// A sweep on the experiment page (the paper's sensitivity study, docs/method.md §12): the set-up's
// task, models and grid of n, k, r and seeds; its result as accuracy against n, k and r with std
// bands, a k × n heat map, cost against accuracy, what sharing saved and the points table.
import { useMemo, useState } from 'react';
import { SweepGrid } from '../../../../electron/common/contract/sweeps';
import { describeZodError } from '../../../../electron/common/contract';
import { ErrorBanner, Metric, ReproducibleChip, TableWrap } from '../../components/Common';
import { RowLimitField, TaskAndModels, draftData, modelPairText, useModelPair } from '../../components/RunSetup';
import { AccuracyLines, CostScatter, KnHeatmap } from '../../components/SweepCharts';
import { pct } from '../../components/labels';
import { Bounds } from '../../components/Intervals';
import { pairedText } from '../../../../electron/common/contract/interval';
import type { SweepPoint } from '../../../../electron/common/contract/sweeps';
import { useStore } from '../../store';
import type { ExperimentPage, ResultOfKind, SetupParts } from './kinds';

type Sweep = ResultOfKind<'sweep'>;

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

/** The task, the two models and the grid. */
function useSweepSetup(): SetupParts<'sweep'> {
  const taskId = useStore((s) => s.currentTaskId);
  const draft = useStore((s) => s.draft);
  const setDraft = useStore((s) => s.setDraft);
  const models = useModelPair();
  const [lists, setLists] = useState<Record<(typeof GRID_FIELDS)[number]['key'], string>>({ n: '0,2,5', k: '4,8', r: '1,3,5', seeds: '1,2,3' });
  const parsed = SweepGrid.safeParse({ n: parseList(lists.n), k: parseList(lists.k), r: parseList(lists.r), seeds: parseList(lists.seeds) });
  const grid = parsed.success ? parsed.data : null;
  const jobs = grid ? grid.n.length * grid.k.length * grid.seeds.length : 0;
  // Every job runs at the largest r; a sweep pays less than this plan once work is shared.
  const cells = grid ? grid.n.flatMap((n) => grid.k.flatMap((k) => grid.seeds.map(() => ({ n, k, r: Math.max(...grid.r), scope: 'run' as const })))) : [];
  return {
    shape: grid
      ? `${grid.n.length} n × ${grid.k.length} k × ${grid.r.length} r × ${grid.seeds.length} seeds: ${jobs} jobs at r=${Math.max(...grid.r)}; smaller r read their first runs`
      : 'comma-separated whole numbers in every grid field',
    fields: (
      <>
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
      </>
    ),
    problem: !parsed.success && parsed.error.issues.some((i) => i.code !== 'invalid_type') ? <ErrorBanner message={describeZodError(parsed.error)} title="Grid" /> : null,
    spec:
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
        : null,
    calls: { settings: cells[0] ?? { n: 0, k: 0, r: 1, scope: 'run' }, cells },
  };
}

/** A raced sweep's settings dropped from the race (they have no point in the charts: no seed of theirs ran every row). */
function DroppedSettings({ result }: { result: Sweep }) {
  const dropped = [...new Map(result.jobs.flatMap((j) => (j.dropped ? [[`n=${j.n} k=${j.k}`, j.dropped] as const] : []))).entries()];
  if (!result.race) return null;
  return (
    <div className="banner" data-testid="sweep-race">
      Raced: {result.race.rounds} rounds of {result.race.roundRows} rows decided, {result.race.alive} settings still in.
      {dropped.map(([name, drop]) => (
        <div key={name} data-testid="sweep-dropped">
          Dropped {name}: {drop.reason}.
        </div>
      ))}
    </div>
  );
}

/** A point against the best, in words. */
const versusText = (p: SweepPoint) => (p.versusBest ? `against the best ${pairedText(p.versusBest)}` : '');

/** What sharing saved and the best point; the charts once a seed of a setting is done; the points. */
function SweepResultView({ result }: { result: Sweep }) {
  const rMax = useMemo(() => Math.max(...result.grid.r), [result]);
  const charted = result.points.some((p) => p.accuracy !== null);
  const { generatorCalls: gen, evaluatorCalls: ev } = result.sharing;
  const math = result.taskKind === 'math';
  const best = Math.max(...result.points.map((p) => p.accuracy?.mean ?? -1));
  const tied = result.points.filter((p) => p.tiedForBest);
  const jobsDone = result.progress.jobsDone;
  return (
    <>
      <div className="grid-3">
        {/* Said once a job is done: before that the calls made exceed those of the points so far. */}
        <Metric name="Generator calls saved" value={jobsDone > 0 && gen.alone > 0 ? `${Math.max(0, gen.saved)} of ${gen.alone}` : '–'} hint={`made ${gen.made}; alone means every (n, k, r, seed) point run by itself`} />
        <Metric name="Evaluator calls saved" value={jobsDone > 0 && ev.alone > 0 ? `${Math.max(0, ev.saved)} of ${ev.alone}` : '–'} hint={`made ${ev.made}`} />
        <Metric
          name="Best mean accuracy"
          value={pct(best < 0 ? null : best)}
          hint={tied.length > 0 ? `tied for best (not told apart at 95 %, Holm): ${tied.map((p) => `n=${p.n} k=${p.k} r=${p.r}`).join('; ')}` : undefined}
        />
      </div>
      <DroppedSettings result={result} />
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
          <span className="sub">mean ± std over seeds, [95 % interval over rows and seeds]; ★ tied for best (not told apart from the best at 95 % after Holm's correction); calls and tokens are what a setting costs alone; seconds at this sweep's throughput</span>
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
                    <td className="num">
                      {p.accuracy ? `${pct(p.accuracy.mean)} ± ${pct(p.accuracy.std)}` : '–'} <Bounds interval={p.accuracyInterval} testId="sweep-point-interval" />
                      {p.tiedForBest ? (
                        <span className="tied-mark" data-testid="sweep-point-tied" title={p.best ? 'the best point' : `tied for best: ${versusText(p)}`}>
                          {' '}
                          ★
                        </span>
                      ) : null}
                    </td>
                    <td className="num">
                      {second ? `${pct(second.mean)} ± ${pct(second.std)}` : '–'} {math ? null : <Bounds interval={p.macroF1Interval} testId="sweep-point-macro-f1-interval" />}
                    </td>
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
    </>
  );
}

export const sweepPage: ExperimentPage<'sweep'> = {
  kind: 'sweep',
  noun: 'sweep',
  nouns: 'Sweeps',
  cellNoun: 'job',
  title: 'Sweep',
  intro: "How accuracy moves with paraphrases n, examples k and runs r, over several seeds (the paper's sensitivity study). One experiment, resumable; work shared across settings is paid once.",
  setupTitle: 'Task, models and grid',
  start: 'Start sweep',
  budgetPlaceholder: 'Budget for all jobs, e.g. calls=5000',
  useSetup: useSweepSetup,
  historyName: (s) => s.name,
  historyColumns: [
    { header: 'Models', cell: (s) => modelPairText(s.generator, s.evaluator) },
    { header: 'Jobs', num: true, cell: (s) => `${s.progress.jobsDone}/${s.progress.jobsTotal}` },
  ],
  heading: (r) => r.name,
  subtitle: (r) => (
    <>
      {r.taskId} · {modelPairText(r.generator, r.evaluator)} · {r.rows} rows <ReproducibleChip deterministic={r.deterministic} subject="sweep" testId="sweep-deterministic" />
    </>
  ),
  Result: SweepResultView,
};
