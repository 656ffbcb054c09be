// `tatra jobs list|show|resume|export|delete|gc|diff`: the history of evaluation jobs in the data folder.
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { formatBytes } from '../../common/bytes';
import { UserError } from '../../common/errors';
import { parseModelPair } from '../../common/model-spec';
import { answeredAt } from '../../jobs';
import type { Budget } from '../../common/plan';
import { budgetOption, jobBudgetFrom, priceOption } from '../plan';
import { addRuntimeOptions, intOption, minConfidenceOption, viewFrom } from '../options';
import { accuracyOf, jobStatus, listedStatus } from '../../common/contract/jobs';
import { formatMetrics, jobDetail, printJobOutcome, runJobWithProgress } from '../job-output';
import { withCliServices } from '../session';
import { clip, err, interruptSignal, out, outJson, pct, table } from '../ui';
import { exportFinalLabels, registerReview } from './review';
import { diffJobs } from '../../jobs/job-diff';
import { boundsText, intervalName, pairedText } from '../../common/contract/interval';
import { wilson } from '../../common/stats';


export function registerJobs(program: Command): void {
  const jobs = program.command('jobs').description('list, inspect, resume and export evaluation jobs');
  registerList(jobs);
  registerShow(jobs);
  registerResume(jobs);
  registerExport(jobs);
  registerReview(jobs);
  registerDelete(jobs);
  registerGc(jobs);
  registerDiff(jobs);
}

/** `tatra jobs list`: every job in the data folder, newest first. */
function registerList(jobs: Command): void {
  jobs
    .command('list')
    .description('every job in the data folder, newest first')
    .option('--data-dir <dir>', 'data folder (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--json', 'print JSON')
    .action((opts: { dataDir?: string; json?: boolean }) =>
      withCliServices(opts, async (services) => {
        const manager = services.jobs();
        const list = manager.list();
        // What the API's jobs.list returns, so a script reads the fields the app does.
        if (opts.json) return outJson(list.map((j) => manager.summary(j)));
        if (list.length === 0) return out('no jobs yet; start one with `tatra eval`');
        const rows = [
          ['id', 'status', 'task', 'rows', 'accuracy', '95 % interval', 'created', 'name'],
          ...list.map((j) => [
            j.id,
            listedStatus({ status: jobStatus(j), stoppedBy: j.stoppedBy }),
            j.task.id,
            `${j.rowsDone}/${j.rowsTotal}`,
            pct(accuracyOf(j.rowsCorrect, j.rowsWithGold)),
            boundsText(wilson(j.rowsCorrect, j.rowsWithGold)),
            j.created.replace('T', ' ').slice(0, 19),
            j.name,
          ]),
        ];
        out(table(rows, () => false, ''));
      }),
    );
}

/** `tatra jobs show`: a job's settings and metrics, and with --rows its first rows. */
function registerShow(jobs: Command): void {
  jobs
    .command('show')
    .description("a job's settings and metrics (and, with --rows, its first rows)")
    .argument('<id>', 'job id (a unique prefix is enough)')
    .option('--rows <N>', 'also print the first N rows', intOption('--rows', 0, 100_000))
    .option('--wrong', 'with --rows: only rows predicted wrong')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print the job, its metrics and the requested rows as JSON')
    .addOption(minConfidenceOption())
    .action((id: string, opts: { rows?: number; wrong?: boolean; dataDir?: string; json?: boolean; minConfidence?: number }) =>
      withCliServices(opts, async (services) => {
        const jobs = services.jobs();
        const job = jobs.get(id);
        const view = viewFrom(opts);
        const metrics = jobs.metrics(job.id, view);
        const page = opts.rows ? jobs.rows(job.id, { limit: opts.rows, ...(opts.wrong ? { onlyWrong: true } : {}) }) : null;
        const min = view.minConfidence;
        const abstained = (r: { status: string; confidence: number | null }) => min !== undefined && r.status === 'done' && !answeredAt(r.confidence, min);
        // The job as jobs.get answers it, its metrics as jobs.metrics, its rows as jobs.rows.
        if (opts.json) return outJson({ job: jobDetail(job, metrics), metrics, ...(page ? { rows: min === undefined ? page.rows : page.rows.map((r) => ({ ...r, abstained: abstained(r) })) } : {}) });
        out(formatMetrics(job, metrics));
        if (job.interrupted) out(`\n  this job's process died; continue it with: tatra jobs resume ${job.id}`);
        if (!page) return;
        out('');
        for (const r of page.rows) {
          const mark = r.correct === null ? ' ' : r.correct ? '✓' : '✗';
          out(`  ${mark} #${r.index} ${r.status === 'done' ? `${r.prediction ?? '(no vote)'} ${pct(r.confidence ?? 0, { digits: 0 })}${abstained(r) ? ' abstained' : ''}` : r.status}${r.gold !== null ? ` gold ${r.gold}` : ''}  ${clip(r.input.replace(/\s+/g, ' '), 80)}`);
        }
      }),
    );
}

/** `tatra jobs resume`: a stopped or interrupted job continued from its first unfinished row. */
function registerResume(jobs: Command): void {
  addRuntimeOptions(
    jobs
      .command('resume')
      .description('continue a paused, cancelled, failed or interrupted job from its first unfinished row')
      .argument('<id>', 'job id (a unique prefix is enough)'),
  )
    .option('--accept-model-change', 'continue even though a model file changed since the job started (the change is recorded in the job)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print the job and its metrics as JSON')
    .addOption(minConfidenceOption())
    .addOption(budgetOption())
    .addOption(new Option('--price-in <usd>', "with a usd budget: US dollars per million prompt tokens (default: the remote entry's price)").argParser(priceOption('--price-in')))
    .addOption(new Option('--price-out <usd>', 'with a usd budget: US dollars per million completion tokens').argParser(priceOption('--price-out')))
    .action((id: string, opts: { threads?: number; contextSize?: number; acceptModelChange?: boolean; dataDir?: string; json?: boolean; minConfidence?: number; budget?: Budget; priceIn?: number; priceOut?: number }) =>
      // The job's models load with one sequence per row in flight, as when it was created.
      withCliServices(opts, async (services) => {
        const jobs = services.jobs();
        const job = jobs.get(id);
        // A new budget replaces the job's (a resume may raise it); none keeps the job's.
        const budget = await jobBudgetFrom(opts, services.remotes, parseModelPair({ generator: job.generator.path, evaluator: job.evaluator.path }));
        const end = await runJobWithProgress(jobs, job.id, {
          quiet: opts.json === true,
          start: { acceptModelChange: opts.acceptModelChange === true, ...(budget ? { budget } : {}) },
          // Only once it really runs, so a refused resume says one line, not two.
          onStarted: () => err(`resuming job ${job.id} at ${job.rowsDone}/${job.rowsTotal} rows`),
        });
        printJobOutcome(end, jobs.metrics(job.id, viewFrom(opts)), opts.json === true);
      }),
    );
}

/** `tatra jobs export`: a job as CSV or JSON, or with --final the labelled data set. */
function registerExport(jobs: Command): void {
  jobs
    .command('export')
    .description('write a job as CSV (one row per input) or JSON (everything, examples and paraphrases included); --final: the labelled data set')
    .argument('<id>', 'job id (a unique prefix is enough)')
    .addOption(new Option('--format <format>', 'csv or json (--final: csv or jsonl)').choices(['csv', 'json', 'jsonl']).default('csv'))
    .option('--final', "the labelled data set: every row with the file's own columns, the final label (a person's where reviewed, else the file's gold, else TATRA's), its source, TATRA's label, confidence and votes")
    .option('--out <file>', 'output file (default <job id>.<format> here; --final: <job id>-labels.<format>)')
    .option('--data-dir <dir>', 'data folder')
    .addOption(minConfidenceOption())
    .action((id: string, opts: { format: 'csv' | 'json' | 'jsonl'; final?: boolean; out?: string; dataDir?: string; minConfidence?: number }) =>
      withCliServices(opts, async (services) => {
        if (!opts.final && opts.format === 'jsonl') throw new UserError('--format jsonl is for --final (a job export is csv or json)', 'bad_option');
        // Ctrl-C or a kill mid-export: stop writing and remove <file>.partial (the default
        // handlers would exit at once and leave it behind).
        const { signal, off } = interruptSignal(['SIGTERM']);
        try {
          if (opts.final) return out(await exportFinalLabels(services, id, opts.format, opts.out, signal));
          const jobs = services.jobs();
          const job = jobs.get(id);
          const file = resolve(opts.out ?? `${job.id}.${opts.format}`);
          await jobs.export(job.id, opts.format as 'csv' | 'json', file, signal, viewFrom(opts));
          out(file);
        } finally {
          off();
        }
      }),
    );
}

/** `tatra jobs delete`: a job and its stored rows removed. */
function registerDelete(jobs: Command): void {
  jobs
    .command('delete')
    .description('remove a job and its stored rows (the generator cache stays)')
    .argument('<id>', 'job id')
    .option('--data-dir <dir>', 'data folder')
    .action((id: string, opts: { dataDir?: string }) =>
      withCliServices(opts, async (services) => {
        const jobs = services.jobs();
        const job = jobs.get(id);
        if (job.status === 'running' && !job.interrupted) throw new UserError(`job ${job.id} is running in another process`, 'job_state');
        await jobs.delete(job.id);
        out(`deleted ${job.id}`);
      }),
    );
}

/** `tatra jobs gc`: the job database made small. */
function registerGc(jobs: Command): void {
  jobs
    .command('gc')
    .description("make the job database small: text stored before compression compressed, older rows' paraphrases stored once, and the space of deleted jobs given back (VACUUM)")
    .option('--data-dir <dir>', 'data folder')
    .action((opts: { dataDir?: string }) =>
      withCliServices(opts, async (services) => {
        const { before, after, rewritten, referred } = services.jobStore().compact();
        out(`${formatBytes(before)} → ${formatBytes(after)} (${rewritten.toLocaleString('en-US')} values compressed, ${referred.toLocaleString('en-US')} rows' paraphrases stored once)`);
      }),
    );
}

/** `tatra jobs diff`: two jobs compared on the rows both scored. */
function registerDiff(jobs: Command): void {
  jobs
    .command('diff')
    .description('compare two jobs on the same data file, on the rows both scored: the difference in accuracy with its paired 95 % interval and an exact McNemar p-value')
    .argument('<a>', 'first job id (a unique prefix is enough)')
    .argument('<b>', 'second job id')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print {first, second, comparison} as JSON')
    .action((a: string, b: string, opts: { dataDir?: string; json?: boolean }) =>
      withCliServices(opts, async (services) => {
        const manager = services.jobs();
        const { first, second, comparison } = diffJobs(manager.get(a), manager.get(b), (id) => services.jobStore().iterateRows(id));
        if (opts.json) return outJson({ first: manager.summary(first), second: manager.summary(second), comparison });
        const line = (j: typeof first) => [j.id, clip(j.name, 40), pct(accuracyOf(j.rowsCorrect, j.rowsWithGold)), boundsText(wilson(j.rowsCorrect, j.rowsWithGold)), `${j.rowsWithGold} rows scored`];
        out(table([['job', 'name', 'accuracy', '95 % interval', ''], line(first), line(second)], (c) => c === 2));
        out('');
        out(`  ${first.id} − ${second.id}: ${pairedText(comparison)}`);
        out(`  ${comparison.firstBetter} rows only the first got right, ${comparison.secondBetter} only the second; ${comparison.pValue < 0.05 ? 'a real difference at 95 %' : 'not told apart at 95 %'}`);
        out(`  (${intervalName(comparison.difference)}; docs/method.md §16)`);
      }),
    );
}
