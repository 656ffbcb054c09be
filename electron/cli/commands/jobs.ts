// `tatra jobs list|show|resume|export|delete`: the history of evaluation jobs in the data folder.
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { UserError } from '../../common/errors';
import { openJobStore, JobManager, type JobInfo } from '../../jobs';
import { resolveDataDir } from '../../paths';
import { THREADS_HELP } from '../../llama/threads';
import { intOption } from '../options';
import { terminalSafe } from '../terminal';
import { formatMetrics, openJobSession, printJobOutcome, runJobWithProgress, statusText } from './eval';

/** Store + manager without models, for commands that only read. */
function readOnlySession(dataDir?: string): { manager: JobManager; close(): void } {
  const store = openJobStore(resolveDataDir(dataDir));
  const manager = new JobManager({
    store,
    backends: {
      acquire: () => Promise.reject(new UserError('this command does not load models', 'internal')),
    },
  });
  return { manager, close: () => store.close() };
}

function accuracy(job: JobInfo): string {
  return job.rowsWithGold === 0 ? '—' : `${((job.rowsCorrect / job.rowsWithGold) * 100).toFixed(1)}%`;
}

export function registerJobs(program: Command): void {
  const jobs = program.command('jobs').description('list, inspect, resume and export evaluation jobs');

  jobs
    .command('list')
    .description('every job in the data folder, newest first')
    .option('--data-dir <dir>', 'data folder (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--json', 'print JSON')
    .action((opts: { dataDir?: string; json?: boolean }) => {
      const s = readOnlySession(opts.dataDir);
      try {
        const list = s.manager.list();
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(list)}\n`);
          return;
        }
        if (list.length === 0) {
          process.stdout.write('no jobs yet; start one with `tatra eval`\n');
          return;
        }
        const rows = [
          ['id', 'status', 'task', 'rows', 'accuracy', 'created', 'name'],
          ...list.map((j) => [j.id, statusText(j), j.task.id, `${j.rowsDone}/${j.rowsTotal}`, accuracy(j), j.created.replace('T', ' ').slice(0, 19), terminalSafe(j.name)]),
        ];
        const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
        process.stdout.write(terminalSafe(rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n')) + '\n');
      } finally {
        s.close();
      }
    });

  jobs
    .command('show')
    .description("a job's settings and metrics (and, with --rows, its first rows)")
    .argument('<id>', 'job id (a unique prefix is enough)')
    .option('--rows <N>', 'also print the first N rows', intOption('--rows', 0, 100_000))
    .option('--wrong', 'with --rows: only rows predicted wrong')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print the job, its metrics and the requested rows as JSON')
    .action((id: string, opts: { rows?: number; wrong?: boolean; dataDir?: string; json?: boolean }) => {
      const s = readOnlySession(opts.dataDir);
      try {
        const job = s.manager.get(id);
        const metrics = s.manager.metrics(job.id);
        const page = opts.rows ? s.manager.rows(job.id, { limit: opts.rows, ...(opts.wrong ? { onlyWrong: true } : {}) }) : null;
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ job, metrics, ...(page ? { rows: page.rows } : {}) })}\n`);
          return;
        }
        process.stdout.write(`${formatMetrics(job, metrics)}\n`);
        if (job.interrupted) process.stdout.write(`\n  this job's process died; continue it with: tatra jobs resume ${job.id}\n`);
        if (page) {
          process.stdout.write('\n');
          for (const r of page.rows) {
            const mark = r.correct === null ? ' ' : r.correct ? '✓' : '✗';
            // Escaped before it is cut, so a cut never splits an escape sequence into a live one.
            const text = terminalSafe(r.input.replace(/\s+/g, ' '));
            process.stdout.write(
              terminalSafe(`  ${mark} #${r.index} ${r.status === 'done' ? `${r.prediction ?? '(no vote)'} ${((r.confidence ?? 0) * 100).toFixed(0)}%` : r.status}${r.gold !== null ? ` gold ${r.gold}` : ''}  `) +
                `${text.length > 80 ? `${text.slice(0, 77)}...` : text}\n`,
            );
          }
        }
      } finally {
        s.close();
      }
    });

  jobs
    .command('resume')
    .description('continue a paused, cancelled, failed or interrupted job from its first unfinished row')
    .argument('<id>', 'job id (a unique prefix is enough)')
    .option('--threads <T>', THREADS_HELP, intOption('--threads', 1, 256))
    .option('--context-size <tokens>', 'context size per sequence', intOption('--context-size', 256, 131072))
    .option('--accept-model-change', 'continue even though a model file changed since the job started (the change is recorded in the job)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print the job and its metrics as JSON')
    .action(async (id: string, opts: { threads?: number; contextSize?: number; acceptModelChange?: boolean; dataDir?: string; json?: boolean }) => {
      const peek = readOnlySession(opts.dataDir);
      let concurrency: number;
      try {
        concurrency = peek.manager.get(id).concurrency;
      } finally {
        peek.close();
      }
      const session = openJobSession({ ...opts, sequences: concurrency });
      try {
        const job = session.manager.get(id);
        const end = await runJobWithProgress(session.manager, job.id, {
          quiet: opts.json === true,
          start: { acceptModelChange: opts.acceptModelChange === true },
          // Only once it really runs, so a refused resume says one line, not two.
          onStarted: () => process.stderr.write(`resuming job ${job.id} at ${job.rowsDone}/${job.rowsTotal} rows\n`),
        });
        const metrics = session.manager.metrics(job.id);
        printJobOutcome(end, metrics, opts.json === true);
      } finally {
        await session.close();
      }
    });

  jobs
    .command('export')
    .description('write a job as CSV (one row per input) or JSON (everything, examples and paraphrases included)')
    .argument('<id>', 'job id (a unique prefix is enough)')
    .addOption(new Option('--format <format>', 'csv or json').choices(['csv', 'json']).default('csv'))
    .option('--out <file>', 'output file (default <job id>.<format> here)')
    .option('--data-dir <dir>', 'data folder')
    .action(async (id: string, opts: { format: 'csv' | 'json'; out?: string; dataDir?: string }) => {
      const s = readOnlySession(opts.dataDir);
      try {
        const job = s.manager.get(id);
        const out = resolve(opts.out ?? `${job.id}.${opts.format}`);
        // Ctrl-C or a kill mid-export: stop writing and remove <out>.partial (the default
        // handlers would exit at once and leave it behind).
        const ac = new AbortController();
        const stop = () => ac.abort();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
        try {
          await s.manager.export(job.id, opts.format, out, ac.signal);
        } finally {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
        }
        process.stdout.write(`${out}\n`);
      } finally {
        s.close();
      }
    });

  jobs
    .command('delete')
    .description('remove a job and its stored rows (the generator cache stays)')
    .argument('<id>', 'job id')
    .option('--data-dir <dir>', 'data folder')
    .action(async (id: string, opts: { dataDir?: string }) => {
      const s = readOnlySession(opts.dataDir);
      try {
        const job = s.manager.get(id);
        if (job.status === 'running' && !job.interrupted) throw new UserError(`job ${job.id} is running in another process`, 'job_state');
        await s.manager.delete(job.id);
        process.stdout.write(`deleted ${job.id}\n`);
      } finally {
        s.close();
      }
    });
}
