// `tatra eval`: evaluate a task on a CSV/TSV/JSONL file as a persistent job (resumable with
// `tatra jobs resume` after Ctrl-C or a crash), with a progress bar on stderr and a metrics
// table at the end. Thin: the jobs module does the work.
import { join, resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { openDataset } from '../../jobs';
import { shownName } from '../../jobs/dataset';
import { CONCURRENCY, ROW_LIMIT, withEarlyStop } from '../../common/settings';
import { type EarlyStopCliValue, type ModelCliOptions, type TatraSettingsCliOptions, addEarlyStopOptions, earlyStopFrom, addModelOptions, addRuntimeOptions, addTatraSettingsOptions, dataColumnsFrom, intOption, minConfidenceOption, modelsFrom, outputFolder, parseLabelMap, tatraSettingsFrom, viewFrom } from '../options';
import { type PlanCliOptions, addPlanOptions, budgetOption, jobBudgetFrom, priceFrom, withPlan } from '../plan';
import type { Budget } from '../../common/plan';
import { printJobOutcome, runJobWithProgress } from '../job-output';
import { withCliServices } from '../session';
import { err } from '../ui';

interface EvalCliOptions extends TatraSettingsCliOptions, ModelCliOptions, PlanCliOptions {
  task: string;
  data: string;
  textCol?: string;
  labelCol?: string;
  labelMap?: string;
  noLabel?: boolean;
  format?: 'csv' | 'tsv' | 'jsonl';
  allowRagged?: boolean;
  limit?: number;
  baseline?: boolean;
  threads?: number;
  contextSize?: number;
  concurrency?: number;
  earlyStop?: EarlyStopCliValue;
  dataDir?: string;
  out?: string;
  name?: string;
  json?: boolean;
  minConfidence?: number;
  budget?: Budget;
}

/** The value→label pairs a job uses, cut to a line (a file may hold thousands of odd values). */
function labelsLine(map: Record<string, string>): string {
  const pairs = Object.entries(map);
  const shown = pairs.slice(0, 12).map(([a, b]) => (a === b ? shownName(a, 40) : `${shownName(a, 40)}→${b}`));
  return shown.join(', ') + (pairs.length > 12 ? `, … (${pairs.length} values)` : '');
}

export function registerEval(program: Command): void {
  const cmd = program
    .command('eval')
    .description('evaluate a task on a labelled CSV/TSV/JSONL file (a resumable job stored in the data folder)')
    .requiredOption('--task <id|file>', 'task id (see `tatra tasks list`) or a task JSON file')
    .requiredOption('--data <file>', 'CSV, TSV or JSONL file (the paper\'s messages/solution JSONL works as is)')
    .option('--text-col <column>', 'column holding the input (default: guessed, e.g. input/text/sentence)')
    .option('--label-col <column>', 'column holding the gold label (default: guessed, e.g. solution/label)')
    .option('--no-label', 'the file has no gold labels (no accuracy)')
    .option('--label-map <a=b,...>', 'gold value → task label, e.g. 0=negative,1=positive (default: suggested)')
    .addOption(new Option('--format <format>', 'file format (default: from the extension, then the content)').choices(['csv', 'tsv', 'jsonl']))
    .option('--allow-ragged', 'tolerate CSV rows with too few or too many fields (counted)');
  addPlanOptions(addEarlyStopOptions(addRuntimeOptions(addTatraSettingsOptions(addModelOptions(cmd))), 'dataset'))
    .option(ROW_LIMIT.flags, 'evaluate only the first N rows', intOption(ROW_LIMIT.flag, ROW_LIMIT.min, ROW_LIMIT.max))
    .option('--baseline', 'also run the zero-shot baseline (one greedy evaluator call per row)')
    .option(CONCURRENCY.flags, `${CONCURRENCY.help}; default ${CONCURRENCY.default}, or ${CONCURRENCY.defaultRemote} when both models are remote`, intOption(CONCURRENCY.flag, CONCURRENCY.min, CONCURRENCY.maxRemote))
    .option('--data-dir <dir>', 'data folder holding the job database (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--out <dir>', 'also write <job id>.csv and <job id>.json exports into this folder')
    .option('--name <name>', 'a name for the job history')
    .option('--json', 'print the job and its metrics as one JSON object instead of the table')
    .addOption(minConfidenceOption())
    .addOption(budgetOption())
    .action(async (opts: EvalCliOptions & { label?: boolean }) => {
      const { generator, evaluator } = modelsFrom(opts);
      const settings = withEarlyStop({ ...tatraSettingsFrom(opts), ...earlyStopFrom(opts.earlyStop) }, 'dataset');
      const dataPath = resolve(opts.data);
      // Opened once: the columns are guessed from its head, and the job reads it in one more pass.
      const opened = await openDataset(dataPath, { ...(opts.format ? { format: opts.format } : {}), ...(opts.allowRagged ? { allowRagged: true } : {}) });
      // No gold column named and none recognised ({"a":…,"b":…}): refused unless --no-label says so.
      const { textColumn, labelColumn } = dataColumnsFrom(opened, opts, opts.label === false ? 'none' : 'unless-no-label');
      if (opts.dryRun) {
        const price = priceFrom(opts);
        await withPlan(opts, async (services, calibrate) =>
          services.planner().eval({
            task: await services.tasks.resolve(opts.task),
            settings,
            generator,
            evaluator,
            data: { path: dataPath, textColumn, ...(opts.format ? { format: opts.format } : {}), ...(opts.allowRagged ? { allowRagged: true } : {}), ...(opts.limit !== undefined ? { limit: opts.limit } : {}) },
            baseline: opts.baseline === true,
            concurrency: opts.concurrency,
            ...(price ? { price } : {}),
            ...(calibrate ? { calibrate: { pool: services.pool } } : {}),
          }),
        );
        return;
      }
      // An export folder that cannot be one is refused now, not after the whole job ran.
      const outDir = opts.out ? await outputFolder(resolve(opts.out), 'eval writes <job id>.csv and <job id>.json into it') : null;
      await withCliServices(opts, async (services) => {
        const jobs = services.jobs();
        const budget = await jobBudgetFrom(opts, services.remotes, { generator, evaluator });
        const job = await jobs.create({
          task: opts.task,
          settings,
          generatorPath: generator.text,
          evaluatorPath: evaluator.text,
          dataset: {
            path: dataPath,
            mapping: { textColumn, labelColumn, ...(opts.labelMap ? { labelMap: parseLabelMap(opts.labelMap) } : {}) },
            opened,
            ...(opts.format ? { format: opts.format } : {}),
            ...(opts.allowRagged ? { allowRagged: true } : {}),
          },
          ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
          baseline: opts.baseline === true,
          ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
          ...(opts.name ? { name: opts.name } : {}),
          ...(budget ? { budget } : {}),
        });
        const map = job.dataset.mapping.labelMap;
        err(
          `job ${job.id}: ${job.rowsTotal} rows from ${opts.data} (input "${shownName(textColumn)}"${labelColumn ? `, gold "${shownName(labelColumn)}"` : ', no gold'}${map && Object.keys(map).length > 0 ? `; labels ${labelsLine(map)}` : ''})`,
        );
        const end = await runJobWithProgress(jobs, job.id, { quiet: opts.json === true });
        const view = viewFrom(opts);
        const metrics = jobs.metrics(job.id, view);
        if (outDir) {
          const dir = outDir;
          await jobs.export(job.id, 'csv', join(dir, `${job.id}.csv`), undefined, view);
          await jobs.export(job.id, 'json', join(dir, `${job.id}.json`), undefined, view);
          err(`exported ${join(dir, `${job.id}.csv`)} and ${job.id}.json`);
        }
        printJobOutcome(end, metrics, opts.json === true);
      });
    });
}
