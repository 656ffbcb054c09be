// `tatra compare`: the paper's cross-model study on your data, as one resumable experiment: every
// (generator, evaluator) pair runs as an evaluation job (kept in the job history); evaluators
// sharing a generator see the same cached examples and paraphrases. `tatra compare resume ID`
// after Ctrl-C or a kill; `list`, `show ID`, `cancel ID`, `export ID --out DIR` as for sweeps
// (cli/experiment-run.ts). Prints the pair table and the generator × evaluator matrix. Thin:
// experiments/compare.ts does the work.
import { resolve } from 'node:path';
import { type Command } from 'commander';
import { UserError } from '../../common/errors';
import { modelLabel } from '../../common/model-spec';
import { COMPARISON_INTERVALS_NOTE, TIED_FOR_BEST_MEANS, comparisonMatrix, tiedPairs, versusBestText, type ComparisonResult } from '../../common/contract/comparisons';
import { boundsText } from '../../common/contract/interval';
import type { ExperimentManagers } from '../../experiments';
import type { ExperimentProgressEvent } from '../../common/contract/experiments';
import type { Budget } from '../../common/plan';
import { CONCURRENCY, ROW_LIMIT } from '../../common/settings';
import { type TatraSettingsCliOptions, addRuntimeOptions, addTatraSettingsOptions, intOption, modelArgument, outputFolder, parseLabelMap, tatraSettingsFrom } from '../options';
import { type CliServices, withCliServices } from '../session';
import { type PlanCliOptions, addPlanOptions, budgetOption, priceFrom, printPlan } from '../plan';
import { type ExperimentCli, RACE_HELP, experimentAction, experimentCommand, exportTo, outWhat, printResult, runExperimentToEnd } from '../experiment-run';
import { duration, err, etaText, pct, table } from '../ui';

interface CompareCliOptions extends TatraSettingsCliOptions, PlanCliOptions {
  task?: string;
  data?: string;
  generators?: string;
  evaluators?: string;
  limit?: number;
  textCol?: string;
  labelCol?: string;
  labelMap?: string;
  threads?: number;
  contextSize?: number;
  concurrency: number;
  dataDir?: string;
  json?: boolean;
  out?: string;
  budget?: Budget;
  race?: boolean;
}

/** Accuracy in a column headed "%". */
function accuracyCell(v: number | null): string {
  return pct(v, { unit: '' });
}

/** Short, unique names for the models (file names; the path's folder when two share a name). */
function names(paths: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const p of paths) {
    const base = modelLabel(p);
    const clash = paths.some((q) => q !== p && modelLabel(q) === base);
    m.set(p, clash ? p : base);
  }
  return m;
}

export function formatComparison(rec: ComparisonResult): string {
  const all = [...new Set([...rec.spec.generators, ...rec.spec.evaluators])];
  const n = names(all);
  const out: string[] = [];
  const s = rec.spec.settings;
  out.push(`comparison ${rec.id}  [${rec.status}]  task ${rec.spec.taskId}  n=${s.n} k=${s.k} r=${s.r} seed=${s.seed} scope=${s.scope}${rec.spec.limit ? `  limit ${rec.spec.limit}` : ''}`);
  if (rec.error) out.push(`  error: ${rec.error}`);
  for (const w of rec.warnings) out.push(`  warning: ${w}`);
  out.push('');
  out.push(
    table(
      [
        ['generator', 'evaluator', 'accuracy %', '95 % interval', 'against the best (points)', 'macro-F1', '95 % interval', 'rows', 'time', 'tokens', 'job'],
        ...rec.pairs.map((p) => [
          `${p.tiedForBest ? '* ' : ''}${n.get(p.generator)!}`,
          n.get(p.evaluator)!,
          accuracyCell(p.accuracy),
          boundsText(p.accuracyInterval),
          versusBestText(p),
          p.macroF1 === null ? '—' : p.macroF1.toFixed(3),
          boundsText(p.macroF1Interval, 'number'),
          `${p.rowsDone}/${p.rowsTotal}`,
          duration(p.elapsedMs),
          p.tokens.toLocaleString('en-US'),
          p.status === 'done' ? (p.jobId?.slice(0, 8) ?? '') : p.dropped ? `dropped after ${p.dropped.afterRows} rows` : `${p.status}${p.error ? `: ${p.error}` : ''}`,
        ]),
      ],
      (c) => c === 2 || (c >= 5 && c <= 9),
    ),
  );
  const tied = tiedPairs(rec.pairs);
  if (tied.length > 0) out.push('', `  tied for best (*): ${tied.map((p) => `${n.get(p.generator)!} → ${n.get(p.evaluator)!}`).join(', ')}: ${TIED_FOR_BEST_MEANS}`);
  out.push('');
  out.push('  accuracy % (rows: generator, columns: evaluator; * tied for best)');
  const m = comparisonMatrix(rec);
  const mark = (g: string, e: string) => (rec.pairs.find((p) => p.generator === g && p.evaluator === e)?.tiedForBest ? '*' : ' ');
  out.push(
    table(
      [['', ...rec.spec.evaluators.map((e) => n.get(e)!)], ...rec.spec.generators.map((g, i) => [n.get(g)!, ...m[i]!.map((v, j) => `${accuracyCell(v)}${mark(g, rec.spec.evaluators[j]!)}`)])],
      (c) => c > 0,
    ),
  );
  out.push('', `  ${COMPARISON_INTERVALS_NOTE} (docs/method.md §16)`);
  return out.join('\n');
}

function splitList(v: string | undefined, flag: string): string[] {
  const items = (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new UserError(`${flag} needs at least one model`, 'bad_option');
  // As the comparison records them (a GGUF's absolute path, a remote spec as written).
  return items.map((item) => modelArgument(item).text);
}

/** A line per pair as its status changes (stderr), with the comparison's time left, until it ends. */
function pairLines(comparisons: ExperimentManagers['compare'], id: string): (event: ExperimentProgressEvent) => void {
  const lastStatus = new Map<number, string>();
  return ({ progress }) => {
    const r = comparisons.get(id);
    r.pairs.forEach((p, i) => {
      if (lastStatus.get(i) === p.status) return;
      lastStatus.set(i, p.status);
      // A raced pair is paused between its rounds: not news.
      if (p.status === 'queued' || (r.race !== null && p.status === 'paused' && r.status === 'running')) return;
      const tail = p.status === 'done' ? `  accuracy ${accuracyCell(p.accuracy)}%  ${duration(p.elapsedMs)}` : p.error ? `  ${p.error}` : '';
      const left = p.status === 'running' || (p.status === 'done' && progress.jobsDone < progress.jobsTotal) ? `  (ETA ${etaText(progress)} in all)` : '';
      err(`[${i + 1}/${r.pairs.length}] ${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}: ${p.status}${tail}${left}`);
    });
  };
}

/** How a comparison reads on a terminal. */
const COMPARE_CLI: ExperimentCli<'compare'> = {
  kind: 'compare',
  noun: 'comparison',
  command: 'compare',
  format: formatComparison,
  dropped: (r) => r.pairs.flatMap((p) => (p.dropped ? [{ name: `${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}`, drop: p.dropped }] : [])),
  listLine: (c) => `${c.id}  [${c.status}]  pairs ${c.progress.jobsDone}/${c.progress.jobsTotal}  ${c.taskId} on ${c.dataPath}`,
  progressLines: pairLines,
};

async function newComparison(services: CliServices, opts: CompareCliOptions): Promise<void> {
  if (!opts.task) throw new UserError('give the task with --task <id|file>', 'bad_option');
  if (!opts.data) throw new UserError('give the data file with --data <file>', 'bad_option');
  const spec = {
    taskId: opts.task,
    dataPath: resolve(opts.data),
    generators: splitList(opts.generators, '--generators'),
    evaluators: splitList(opts.evaluators, '--evaluators'),
    settings: tatraSettingsFrom(opts),
    concurrency: opts.concurrency,
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}),
    ...(opts.textCol ? { inputColumn: opts.textCol } : {}),
    ...(opts.labelCol ? { goldColumn: opts.labelCol } : {}),
    ...(opts.labelMap ? { labelMap: parseLabelMap(opts.labelMap) } : {}),
    ...(opts.race ? { race: true } : {}),
  };
  const price = priceFrom(opts);
  const comparisons = services.experiments().of('compare');
  if (opts.dryRun) return printPlan(await comparisons.plan(spec, services.planner(), price ? { price } : {}), opts.json === true, opts.detect);
  // An export folder that cannot be one is refused now, not after the whole comparison ran.
  if (opts.out) await outputFolder(resolve(opts.out), outWhat(COMPARE_CLI));
  const created = await comparisons.create(spec, { ...(opts.budget ? { budget: opts.budget } : {}), ...(price ? { price } : {}) });
  if (!opts.json) err(`comparison ${created.id}: ${created.progress.jobsTotal} pairs; resume after a stop with: tatra compare resume ${created.id}`);
  const result = await runExperimentToEnd(COMPARE_CLI, comparisons, created.id, { quiet: opts.json === true });
  await exportTo(COMPARE_CLI, comparisons, created.id, opts.out);
  printResult(COMPARE_CLI, result, opts.json === true);
}

export function registerCompare(program: Command): void {
  const cmd = experimentCommand(program, COMPARE_CLI, 'compare generator × evaluator pairs on one task and data set (each pair is an evaluation job; one resumable experiment)')
    .option('--generators <a.gguf,b.gguf>', 'comma-separated generator models (required for a new comparison)')
    .option('--evaluators <a.gguf,b.gguf>', 'comma-separated evaluator models (required for a new comparison)');
  addPlanOptions(addRuntimeOptions(addTatraSettingsOptions(cmd)))
    .option(ROW_LIMIT.flags, 'only the first N rows', intOption(ROW_LIMIT.flag, ROW_LIMIT.min, ROW_LIMIT.max))
    .option('--text-col <column>', 'column holding the input (default: guessed)')
    .option('--label-col <column>', 'column holding the gold label (default: guessed)')
    .option('--label-map <a=b,...>', 'gold value → task label (default: suggested)')
    .option(CONCURRENCY.flags, CONCURRENCY.help, intOption(CONCURRENCY.flag, CONCURRENCY.min, CONCURRENCY.maxRemote), CONCURRENCY.default)
    .option('--data-dir <dir>', 'data folder holding the job database')
    .option('--out <dir>', 'also write <comparison id>.csv (one line per pair) and <comparison id>.json into this folder')
    .option('--json', 'print the comparison as one JSON object (list: an array of summaries)')
    .addOption(budgetOption())
    .option('--race', RACE_HELP)
    .action((action: string | undefined, id: string | undefined, opts: CompareCliOptions) =>
      withCliServices(opts, (services) => (action === undefined ? newComparison(services, opts) : experimentAction(services, COMPARE_CLI, action, id, opts))),
    );
}
