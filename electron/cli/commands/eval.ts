// `tatra eval`: evaluate a task on a CSV/TSV/JSONL file as a persistent job (resumable with
// `tatra jobs resume` after Ctrl-C or a crash), with a progress bar on stderr and a metrics
// table at the end. Thin: the jobs module does the work.
import { join, resolve } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { type Command, Option } from 'commander';
import cliProgress from 'cli-progress';
import { UserError } from '../../common/errors';
import { resolveTask } from '../../tasks';
import { JobManager, openJobStore, previewDataset, type StartOptions, type JobInfo, type JobMetrics, type JobProgress, type JobStore } from '../../jobs';
import { ModelPool, disposeLlamaRuntime } from '../../llama';
import { resolveDataDir } from '../../paths';
import { ROW_LIMIT } from '../../common/settings';
import { deterministicLine } from '../../common/reproducible';
import { type ModelCliOptions, type TatraSettingsCliOptions, addEarlyStopOptions, addModelOptions, addRuntimeOptions, addTatraSettingsOptions, intOption, modelPathsFrom, remoteModelsFor, tatraSettingsFrom } from '../options';
import { userTasksDir } from './tasks';
import { terminalSafe } from '../terminal';

/** Parses `a=b,c=d` (values may not contain commas; labels never do). */
export function parseLabelMap(text: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0 || eq === part.length - 1) throw new UserError(`--label-map: "${part}" is not value=label`, 'bad_option');
    map[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  if (Object.keys(map).length === 0) throw new UserError('--label-map is empty; write value=label,value=label', 'bad_option');
  return map;
}

export interface JobSession {
  store: JobStore;
  pool: ModelPool;
  manager: JobManager;
  close(): Promise<void>;
}

/** The store, a model pool and a manager for one CLI command; `close()` disposes all of them. */
export function openJobSession(opts: { dataDir?: string; threads?: number; contextSize?: number; sequences?: number }): JobSession {
  const dataDir = resolveDataDir(opts.dataDir);
  const store = openJobStore(dataDir);
  const pool = new ModelPool({
    remote: remoteModelsFor(opts.dataDir),
    defaults: {
      ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
      ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}),
      ...(opts.sequences !== undefined ? { sequences: opts.sequences } : {}),
    },
  });
  const manager = new JobManager({ store, backends: pool, resolveTask: (id) => resolveTask(id, { userDir: userTasksDir(opts.dataDir) }) });
  return {
    store,
    pool,
    manager,
    async close() {
      await manager.dispose();
      await pool.dispose();
      await disposeLlamaRuntime();
      store.close();
    },
  };
}

function pct(v: number | null): string {
  return v === null ? '—' : `${(v * 100).toFixed(1)}%`;
}

function num(v: number | null, digits = 3): string {
  return v === null ? '—' : v.toFixed(digits);
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

function table(rows: string[][], alignRight: (col: number) => boolean = (c) => c > 0): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => '  ' + r.map((cell, c) => (alignRight(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd()).join('\n');
}

export function statusText(job: JobInfo): string {
  return job.interrupted ? 'interrupted' : job.status;
}

/** The human metrics report printed after `tatra eval`, `tatra jobs resume` and `tatra jobs show`. */
export function formatMetrics(job: JobInfo, m: JobMetrics): string {
  // Names, paths and gold values come from files: no control character reaches the terminal.
  return terminalSafe(metricsReport(job, m));
}

function metricsReport(job: JobInfo, m: JobMetrics): string {
  const s = job.settings;
  const out: string[] = [];
  out.push(`job ${job.id}  ${job.name}  [${statusText(job)}]`);
  out.push(`  task ${job.task.id}  n=${s.n} k=${s.k} r=${s.r} seed=${s.seed} scope=${s.scope}`);
  out.push(`  generator ${job.generator.path}${job.evaluator.path !== job.generator.path ? `\n  evaluator ${job.evaluator.path}` : ''}`);
  for (const role of ['generator', 'evaluator'] as const) {
    const n = job[role].replaced?.length ?? 0;
    if (n > 0) out.push(`  the ${role} file changed ${n === 1 ? 'once' : `${n} times`} during this job (accepted on resume): earlier rows came from another model`);
  }
  out.push(`  rows ${job.rowsDone}/${job.rowsTotal} done${job.rowsFailed > 0 ? `, ${job.rowsFailed} failed` : ''}, ${m.evaluated} with gold  time ${duration(job.elapsedMs)}`);
  if (job.dataset.stats.skippedEmpty > 0) out.push(`  skipped ${job.dataset.stats.skippedEmpty} rows with an empty input`);
  const unmapped = Object.entries(job.dataset.stats.unmappedGold);
  if (unmapped.length > 0) out.push(`  gold values not mapped to a label (rows not scored): ${unmapped.map(([v, c]) => `${v} (${c})`).join(', ')}`);
  if (job.deterministic !== null) out.push(`  ${deterministicLine(job.deterministic, 'job')}`);
  if (job.error) out.push(`  error: ${job.error}`);
  out.push('');
  const head: string[][] = [['metric', 'value']];
  if (m.math) {
    head.push(['strict accuracy (extracted answers)', `${pct(m.math.strictAccuracy)} (${m.correct}/${m.evaluated})`]);
    head.push(['lenient accuracy (gold string in output)', pct(m.math.lenientGoldInOutputAccuracy)]);
  } else {
    head.push(['accuracy', `${pct(m.accuracy)} (${m.correct}/${m.evaluated})`]);
    head.push(['macro-F1', num(m.macroF1)]);
  }
  if (m.baseline) head.push(['zero-shot baseline accuracy', `${pct(m.baseline.accuracy)} (${m.baseline.correct}/${m.baseline.evaluated})`]);
  if (m.baseline && m.baseline.macroF1 !== null) head.push(['zero-shot baseline macro-F1', num(m.baseline.macroF1)]);
  head.push(['accuracy after runs 1..r', m.accuracyAfterRuns.map(pct).join(' ')]);
  head.push(['each run alone', m.perRunAccuracy.map(pct).join(' ')]);
  out.push(table(head, () => false));
  if (m.labels.length > 0) {
    out.push('');
    out.push(table([['label', 'precision', 'recall', 'F1', 'support', 'predicted'], ...m.perLabel.map((l) => [l.label, num(l.precision), num(l.recall), num(l.f1), String(l.support), String(l.predicted)])]));
    out.push('');
    out.push('  confusion (rows: gold, columns: predicted)');
    out.push(table([['', ...m.labels, '(none)'], ...m.labels.map((l, i) => [l, ...m.confusion[i]!.map(String)])]));
  }
  const hist = m.confidenceHistogram.filter((b) => b.count > 0);
  if (hist.length > 0) {
    out.push('');
    out.push(`  winning vote share: ${hist.map((b) => `${b.from.toFixed(1)}–${b.to.toFixed(1)}: ${b.count}`).join('  ')}`);
  }
  return out.join('\n');
}

/**
 * Runs (or resumes) a job to its end with a progress bar on stderr. Ctrl-C pauses the job (its
 * finished rows are kept) and says how to resume it.
 */
export async function runJobWithProgress(
  manager: JobManager,
  jobId: string,
  opts: { quiet?: boolean; start?: StartOptions; onStarted?: (job: JobInfo) => void } = {},
): Promise<JobInfo> {
  const tty = process.stderr.isTTY === true && !opts.quiet;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          format: '{bar} {value}/{total} rows | {rate} rows/min | ETA {etaText} | accuracy {acc}',
          stream: process.stderr,
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let lastPrinted = -1;
  let lastPhase: JobProgress['phase'] | null = null;
  const show = (p: JobProgress) => {
    if (p.jobId !== jobId) return;
    if (p.phase !== lastPhase) {
      lastPhase = p.phase;
      const note = p.phase === 'loading' ? 'loading models…' : p.phase === 'examples' ? 'generating the examples of every run…' : null;
      if (note && !opts.quiet && !bar) process.stderr.write(`${note}\n`);
      if (note && bar) bar.update(p.rowsDone, { rate: '0.0', etaText: note, acc: pct(p.runningAccuracy) });
      if (note) return;
    }
    const payload = {
      rate: p.rowsPerMinute.toFixed(1),
      etaText: p.etaSeconds === null ? '…' : duration(p.etaSeconds * 1000),
      acc: pct(p.runningAccuracy),
    };
    if (bar) {
      bar.setTotal(p.rowsTotal);
      bar.update(p.rowsDone, payload);
    } else if (!opts.quiet) {
      // Without a terminal: a plain line about every 5% (and the last row).
      const step = Math.max(1, Math.ceil(p.rowsTotal / 20));
      if (p.rowsDone !== lastPrinted && (p.rowsDone % step === 0 || p.rowsDone === p.rowsTotal)) {
        lastPrinted = p.rowsDone;
        process.stderr.write(`rows ${p.rowsDone}/${p.rowsTotal}  ${payload.rate} rows/min  ETA ${payload.etaText}  accuracy ${payload.acc}\n`);
      }
    }
  };
  const job = manager.get(jobId);
  bar?.start(job.rowsTotal, job.rowsDone, { rate: '0.0', etaText: '…', acc: '—' });
  const off = manager.on('progress', (e) => show(e.progress));
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    void manager.pause(jobId).catch(() => undefined);
  };
  process.once('SIGINT', onSigint);
  try {
    // Not `onStarted?.(await start())`: an optional call skips evaluating its arguments.
    const started = await manager.start(jobId, opts.start);
    opts.onStarted?.(started);
    const end = await manager.wait(jobId);
    bar?.stop();
    if (interrupted) {
      process.stderr.write(`paused job ${jobId} at ${end.rowsDone}/${end.rowsTotal} rows; continue with: tatra jobs resume ${jobId}\n`);
      process.exitCode = 130;
    }
    return end;
  } finally {
    bar?.stop();
    off();
    process.off('SIGINT', onSigint);
  }
}

interface EvalCliOptions extends TatraSettingsCliOptions, ModelCliOptions {
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
  concurrency: number;
  earlyStop?: boolean;
  dataDir?: string;
  out?: string;
  name?: string;
  json?: boolean;
}

/** A finished (or failed) job's metrics on stdout, as a table or one JSON object; a failure sets exit code 1. */
export function printJobOutcome(end: JobInfo, metrics: JobMetrics, json: boolean): void {
  if (json) process.stdout.write(`${JSON.stringify({ job: end, metrics })}\n`);
  else process.stdout.write(`${formatMetrics(end, metrics)}\n`);
  if (end.status === 'failed') {
    process.stderr.write(`tatra: job ${end.id} failed: ${end.error ?? 'unknown error'}\n`);
    process.exitCode = 1;
  }
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
  addEarlyStopOptions(addRuntimeOptions(addTatraSettingsOptions(addModelOptions(cmd))), false)
    .option(ROW_LIMIT.flags, 'evaluate only the first N rows', intOption(ROW_LIMIT.flag, ROW_LIMIT.min, ROW_LIMIT.max))
    .option('--baseline', 'also run the zero-shot baseline (one greedy evaluator call per row)')
    .option('--concurrency <C>', 'rows classified at once (parallel sequences)', intOption('--concurrency', 1, 64), 4)
    .option('--data-dir <dir>', 'data folder holding the job database (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--out <dir>', 'also write <job id>.csv and <job id>.json exports into this folder')
    .option('--name <name>', 'a name for the job history')
    .option('--json', 'print the job and its metrics as one JSON object instead of the table')
    .action(async (opts: EvalCliOptions & { label?: boolean }) => {
      const { generator: generatorPath, evaluator: evaluatorPath } = modelPathsFrom(opts);
      // Off unless asked: accuracy after 1…r runs needs every run of every row.
      const settings = { ...tatraSettingsFrom(opts), earlyStop: opts.earlyStop ?? false };
      const dataPath = resolve(opts.data);
      const preview = await previewDataset(dataPath, { ...(opts.format ? { format: opts.format } : {}), ...(opts.allowRagged ? { allowRagged: true } : {}) });
      const textColumn = opts.textCol ?? preview.suggestedTextColumn;
      if (!textColumn) throw new UserError(`${opts.data}: say which column holds the input with --text-col (columns: ${preview.columns.join(', ')})`, 'dataset_column');
      const labelColumn = opts.label === false ? null : (opts.labelCol ?? preview.suggestedLabelColumn ?? null);
      const session = openJobSession({ ...opts, sequences: opts.concurrency });
      try {
        const job = await session.manager.create({
          task: opts.task,
          settings,
          generatorPath,
          evaluatorPath,
          dataset: {
            path: dataPath,
            mapping: { textColumn, labelColumn, ...(opts.labelMap ? { labelMap: parseLabelMap(opts.labelMap) } : {}) },
            ...(opts.format ? { format: opts.format } : {}),
            ...(opts.allowRagged ? { allowRagged: true } : {}),
          },
          ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
          baseline: opts.baseline === true,
          concurrency: opts.concurrency,
          ...(opts.name ? { name: opts.name } : {}),
        });
        const map = job.dataset.mapping.labelMap;
        process.stderr.write(
          `job ${job.id}: ${job.rowsTotal} rows from ${opts.data} (input "${textColumn}"${labelColumn ? `, gold "${labelColumn}"` : ', no gold'}${map && Object.keys(map).length > 0 ? `; labels ${Object.entries(map).map(([a, b]) => (a === b ? a : `${a}→${b}`)).join(', ')}` : ''})\n`,
        );
        const end = await runJobWithProgress(session.manager, job.id, { quiet: opts.json === true });
        const metrics = session.manager.metrics(job.id);
        if (opts.out) {
          const dir = resolve(opts.out);
          await mkdir(dir, { recursive: true });
          await session.manager.export(job.id, 'csv', join(dir, `${job.id}.csv`));
          await session.manager.export(job.id, 'json', join(dir, `${job.id}.json`));
          process.stderr.write(`exported ${join(dir, `${job.id}.csv`)} and ${job.id}.json\n`);
        }
        printJobOutcome(end, metrics, opts.json === true);
      } finally {
        await session.close();
      }
    });
}
