// `tatra sweep`: the paper's sensitivity study (docs/method.md §12) as one resumable experiment:
// `tatra sweep --task sst2 --data f.csv --model m.gguf -n 0,1,2,5,10 -k 4,8,16 -r 1,3,5,10,15 --seeds 1,2,3`
// and `tatra sweep resume ID` after Ctrl-C or a kill; `list`, `show ID`, `cancel ID`, `export ID
// --out DIR` as for comparisons (cli/experiment-run.ts). Thin: experiments/sweep.ts does the work.
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { SWEEP_INTERVALS_NOTE, TIED_FOR_BEST_POINT_MEANS, type SweepPoint, type SweepResult } from '../../common/contract/sweeps';
import { boundsText } from '../../common/contract/interval';
import { UserError } from '../../common/errors';
import { INT_SETTINGS, ROW_LIMIT, CONCURRENCY } from '../../common/settings';
import { deterministicLine } from '../../common/reproducible';
import { openDataset } from '../../jobs';
import { type ModelCliOptions, addModelOptions, addRuntimeOptions, dataColumnsFrom, intOption, modelsFrom, outputFolder, parseLabelMap } from '../options';
import { withCliServices } from '../session';
import { type ExperimentCli, RACE_HELP, experimentAction, experimentCommand, exportTo, outWhat, printResult, runExperimentToEnd } from '../experiment-run';
import { err, etaText, pct as percent, table } from '../ui';
import { type PlanCliOptions, addPlanOptions, budgetOption, priceFrom, withPlan } from '../plan';
import type { Budget } from '../../common/plan';

/** Parses `0,1,2,5,10` into whole numbers within [min, max]. */
export function intListOption(name: string, min: number, max: number) {
  const one = intOption(name, min, max);
  return (value: string): number[] => {
    const parts = value.split(',').map((p) => p.trim());
    if (parts.some((p) => p === '')) throw new UserError(`${name} takes comma-separated whole numbers, like 1,3,5; got "${value}"`, 'bad_option');
    return parts.map(one);
  };
}

interface SweepRuntimeOptions {
  threads?: number;
  contextSize?: number;
  concurrency: number;
  dataDir?: string;
  out?: string;
  json?: boolean;
}

interface SweepCliOptions extends ModelCliOptions, SweepRuntimeOptions, PlanCliOptions {
  task?: string;
  data?: string;
  textCol?: string;
  labelCol?: string;
  labelMap?: string;
  format?: 'csv' | 'tsv' | 'jsonl';
  paraphrases: number[];
  examples: number[];
  runs: number[];
  seeds: number[];
  limit?: number;
  name?: string;
  race?: boolean;
  budget?: Budget;
}

/** A mean ± std over seeds as percentages: `81.2 ± 1.5%`. */
function meanStdPct(v: { mean: number; std: number } | null): string {
  return v === null ? '—' : `${percent(v.mean, { unit: '' })} ± ${percent(v.std)}`;
}

/** The human report: one line per point, then what sharing saved. */
export function formatSweep(result: SweepResult): string {
  const math = result.taskKind === 'math';
  const head = ['n', 'k', 'r', 'seeds', math ? 'strict acc' : 'accuracy', '95 % interval', math ? 'lenient acc' : 'macro-F1', ...(math ? [] : ['95 % interval']), 'calls', 'tokens', 'seconds'];
  const line = (p: SweepPoint) => [
    `${p.tiedForBest ? '* ' : ''}${p.n}`,
    String(p.k),
    String(p.r),
    String(p.seeds.length),
    meanStdPct(p.accuracy),
    boundsText(p.accuracyInterval),
    math ? meanStdPct(p.lenientAccuracy) : p.macroF1 ? `${p.macroF1.mean.toFixed(3)} ± ${p.macroF1.std.toFixed(3)}` : '—',
    ...(math ? [] : [boundsText(p.macroF1Interval, 'number')]),
    p.calls.mean.toFixed(0),
    p.tokens.mean.toFixed(0),
    p.seconds.mean.toFixed(1),
  ];
  const { generatorCalls: g, evaluatorCalls: e } = result.sharing;
  return [
    `sweep ${result.id}  ${result.name}  [${result.status}]`,
    `  task ${result.taskId}  data ${result.dataPath}  rows ${result.rows}  jobs ${result.progress.jobsDone}/${result.progress.jobsTotal}`,
    `  generator ${result.generator}${result.evaluator !== result.generator ? `\n  evaluator ${result.evaluator}` : ''}`,
    ...(result.deterministic !== null ? [`  ${deterministicLine(result.deterministic, 'sweep')}`] : []),
    ...(result.error ? [`  error: ${result.error}`] : []),
    '',
    table([head, ...result.points.map(line)], () => true),
    '',
    `  mean ± std over seeds; ${SWEEP_INTERVALS_NOTE}; * tied for best: ${TIED_FOR_BEST_POINT_MEANS} (docs/method.md §16)`,
    '  calls and tokens are what the setting costs alone; seconds: those tokens at the sweep\'s measured throughput',
    `  sharing saved ${g.saved} of ${g.alone} generator calls (made ${g.made}) and ${e.saved} of ${e.alone} evaluator calls (made ${e.made})`,
  ].join('\n');
}

/** How a sweep reads on a terminal: a line per finished job while it runs. */
const SWEEP_CLI: ExperimentCli<'sweep'> = {
  kind: 'sweep',
  noun: 'sweep',
  command: 'sweep',
  format: formatSweep,
  // A setting is dropped with all its seeds: said once.
  dropped: (r) => [...new Map(r.jobs.flatMap((j) => (j.dropped ? [[`n=${j.n} k=${j.k}`, j.dropped] as const] : []))).entries()].map(([name, drop]) => ({ name, drop })),
  listLine: (s) => `${s.id}  [${s.status}]  jobs ${s.progress.jobsDone}/${s.progress.jobsTotal}  ${s.name}`,
  progressLines: (_sweeps, id) => {
    let lastJobs = -1;
    let lastEta = '';
    // A line as each job ends, and once more when the time left becomes known (the cells' prices come after the start).
    return ({ progress: p }) => {
      const left = etaText(p);
      if (p.jobsDone === lastJobs && !(lastEta === '…' && left !== '…')) return;
      lastJobs = p.jobsDone;
      lastEta = left;
      err(`sweep ${id}: jobs ${p.jobsDone}/${p.jobsTotal}, rows ${p.rowsDone}/${p.rowsTotal}, ETA ${left}`);
    };
  },
};

function addSweepRuntimeOptions(cmd: Command): Command {
  return addRuntimeOptions(cmd)
    .option(CONCURRENCY.flags, CONCURRENCY.help, intOption(CONCURRENCY.flag, CONCURRENCY.min, CONCURRENCY.maxRemote), CONCURRENCY.default)
    .option('--data-dir <dir>', 'data folder holding the job database (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--out <dir>', 'also write <sweep id>.csv (one line per point) and <sweep id>.json into this folder')
    .option('--json', 'print the result as one JSON object (with `points`) instead of the table');
}

export function registerSweep(program: Command): void {
  const cmd = experimentCommand(program, SWEEP_CLI, 'sensitivity sweep over n, k, r and seeds on a labelled data file: one resumable experiment, shared work paid once')
    .option('--text-col <column>', 'column holding the input (default: guessed)')
    .option('--label-col <column>', 'column holding the gold label (default: guessed)')
    .option('--label-map <a=b,...>', 'gold value → task label, e.g. 0=negative,1=positive (default: suggested)')
    .addOption(new Option('--format <format>', 'file format (default: from the extension, then the content)').choices(['csv', 'tsv', 'jsonl']));
  addPlanOptions(addSweepRuntimeOptions(addModelOptions(cmd)))
    .option('-n, --paraphrases <list>', 'paraphrases per run, e.g. 0,1,2,5,10', intListOption('-n', INT_SETTINGS.n.min, INT_SETTINGS.n.max), [0, 1, 2, 5, 10])
    .option('-k, --examples <list>', 'examples per run, e.g. 4,8,16', intListOption('-k', INT_SETTINGS.k.min, INT_SETTINGS.k.max), [4, 8, 16])
    .option('-r, --runs <list>', 'runs, e.g. 1,3,5,10,15 (the largest is run once; smaller r read its first runs)', intListOption('-r', INT_SETTINGS.r.min, INT_SETTINGS.r.max), [1, 3, 5, 10, 15])
    .option('--seeds <list>', 'base seeds, e.g. 1,2,3', intListOption('--seeds', INT_SETTINGS.seed.min, INT_SETTINGS.seed.max), [1, 2, 3])
    .option('--limit <N>', 'use only the first N rows', intOption(ROW_LIMIT.flag, ROW_LIMIT.min, ROW_LIMIT.max))
    .option('--name <name>', 'a name for the sweep')
    .addOption(budgetOption())
    .option('--race', RACE_HELP)
    .action(async (action: string | undefined, id: string | undefined, opts: SweepCliOptions) => {
      if (action === undefined) return newSweep(opts);
      await withCliServices(opts, (services) => experimentAction(services, SWEEP_CLI, action, id, opts));
    });
}

async function newSweep(opts: SweepCliOptions): Promise<void> {
  if (!opts.task) throw new UserError('give the task with --task <id|file>', 'bad_option');
  if (!opts.data) throw new UserError('give the data file with --data <file>', 'bad_option');
  const { generator, evaluator } = modelsFrom(opts);
  const dataPath = resolve(opts.data);
  const opened = await openDataset(dataPath, opts.format ? { format: opts.format } : {});
  const { textColumn, labelColumn } = dataColumnsFrom(opened, { ...opts, data: opts.data }, 'required');
  const grid = { n: opts.paraphrases, k: opts.examples, r: opts.runs, seeds: opts.seeds };
  // An export folder that cannot be one is refused now, not after the whole sweep ran.
  if (opts.out && !opts.dryRun) await outputFolder(resolve(opts.out), outWhat(SWEEP_CLI));
  const price = priceFrom(opts);
  const input = {
    taskId: opts.task,
    dataPath,
    inputColumn: textColumn,
    goldColumn: labelColumn,
    labelMap: opts.labelMap ? parseLabelMap(opts.labelMap) : {},
    // The paths the sweep's jobs will name the models by: the cache keys hold them.
    generator: generator.text,
    evaluator: evaluator.text,
    grid,
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    concurrency: opts.concurrency,
    ...(opts.name ? { name: opts.name } : {}),
    ...(opts.race ? { race: true } : {}),
  };
  if (opts.dryRun) {
    return withPlan(opts, async (services, calibrate) =>
      services
        .experiments()
        .of('sweep')
        .plan(input, services.planner(), { ...(price ? { price } : {}), ...(calibrate ? { calibrate: { pool: services.pool } } : {}), ...(opts.format ? { format: opts.format } : {}) }),
    );
  }
  await withCliServices(opts, async (services) => {
    const sweeps = services.experiments().of('sweep');
    const created = await sweeps.create(input, { ...(opts.budget ? { budget: opts.budget } : {}), ...(price ? { price } : {}) });
    err(`sweep ${created.id}: ${created.progress.jobsTotal} jobs of ${created.progress.rowsTotal / Math.max(1, created.progress.jobsTotal)} rows; resume after a stop with: tatra sweep resume ${created.id}`);
    const result = await runExperimentToEnd(SWEEP_CLI, sweeps, created.id, { quiet: opts.json === true });
    await exportTo(SWEEP_CLI, sweeps, created.id, opts.out);
    printResult(SWEEP_CLI, result, opts.json === true);
  });
}
