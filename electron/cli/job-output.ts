// What the CLI prints about an evaluation job (`tatra eval`, `tatra jobs`): its progress while it
// runs (a bar on a terminal, a line every 5% otherwise; Ctrl-C pauses it), and its report when it
// ends (settings, counts, metrics, per-label table, confusion matrix).
import { errorMessage } from '../common/errors';
import { jobSummary, summaryScores, type JobInfo, type JobManager, type JobMetrics, type JobProgress, type StartOptions } from '../jobs';
import { jobStatus, type JobSummary } from '../common/contract/jobs';
import { deterministicLine } from '../common/reproducible';
import { duration, err, etaText, num, onInterrupt, out, outJson, pct, plural, progressBar, table } from './ui';
import { formatBudget } from '../common/plan';
import { INTERVALS_FOOTNOTE, boundsText, pairedText, type Interval } from '../common/contract/interval';

/**
 * The human metrics report printed after `tatra eval`, `tatra jobs resume` and `tatra jobs show`
 * (names, paths and gold values come from files: out() shows their control characters escaped).
 */
export function formatMetrics(job: JobInfo, m: JobMetrics): string {
  const s = job.settings;
  const lines: string[] = [];
  lines.push(`job ${job.id}  ${job.name}  [${jobStatus(job)}]`);
  lines.push(`  task ${job.task.id}  n=${s.n} k=${s.k} r=${s.r} seed=${s.seed} scope=${s.scope}`);
  lines.push(`  generator ${job.generator.path}${job.evaluator.path !== job.generator.path ? `\n  evaluator ${job.evaluator.path}` : ''}`);
  for (const role of ['generator', 'evaluator'] as const) {
    const n = job[role].replaced?.length ?? 0;
    if (n > 0) lines.push(`  the ${role} file changed ${n === 1 ? 'once' : `${n} times`} during this job (accepted on resume): earlier rows came from another model`);
  }
  lines.push(`  rows ${job.rowsDone}/${job.rowsTotal} done${job.rowsFailed > 0 ? `, ${job.rowsFailed} failed` : ''}, ${m.evaluated} with gold  time ${duration(job.elapsedMs)}`);
  if (job.dataset.stats.skippedEmpty > 0) lines.push(`  skipped ${job.dataset.stats.skippedEmpty} rows with an empty input`);
  const unmapped = Object.entries(job.dataset.stats.unmappedGold);
  if (unmapped.length > 0) lines.push(`  gold values not mapped to a label (rows not scored): ${unmapped.map(([v, c]) => `${v} (${c})`).join(', ')}`);
  if (job.deterministic !== null) lines.push(`  ${deterministicLine(job.deterministic, 'job')}`);
  const u = job.usage;
  if (u.calls.total > 0) {
    lines.push(
      `  spent ${plural(u.calls.total, 'model call')} (${u.calls.examples} examples, ${u.calls.paraphrases} paraphrases, ${u.calls.evaluations} evaluations), ${u.tokens.prompt} prompt + ${u.tokens.completion} completion tokens${u.usd !== undefined ? `, $${u.usd.toFixed(4)}` : ''}${job.budget ? `; budget ${formatBudget(job.budget)}` : ''}`,
    );
  }
  if (job.stoppedBy === 'budget') lines.push('  stopped by its budget: resume it with a larger --budget');
  if (job.stoppedBy === 'race') lines.push('  dropped by its raced experiment, with the rows it ran (its comparison or sweep says after how many rows and why)');
  if (job.error) lines.push(`  error: ${job.error}`);
  lines.push('');
  const iv = m.intervals;
  const head: string[][] = [['metric', 'value', '95 % interval']];
  if (m.math) {
    head.push(['strict accuracy (extracted answers)', `${pct(m.math.strictAccuracy)} (${m.correct}/${m.evaluated})`, boundsText(iv?.accuracy ?? null)]);
    head.push(['lenient accuracy (gold string in output)', pct(m.math.lenientGoldInOutputAccuracy), boundsText(iv?.lenientAccuracy ?? null)]);
  } else {
    head.push(['accuracy', `${pct(m.accuracy)} (${m.correct}/${m.evaluated})`, boundsText(iv?.accuracy ?? null)]);
    head.push(['macro-F1', num(m.macroF1), boundsText(iv?.macroF1 ?? null, 'number')]);
  }
  if (m.answered) {
    const a = m.answered;
    head.push([`answered (vote share ≥ ${a.minConfidence})`, `${pct(a.coverage)} coverage (${a.answered}/${a.answered + a.abstained}, ${a.abstained} abstained)`, '']);
    head.push(['accuracy on answered rows', `${pct(a.accuracy)} (${a.correct}/${a.answered})`, boundsText(iv?.answeredAccuracy ?? null)]);
  }
  if (m.baseline) head.push(['zero-shot baseline accuracy', `${pct(m.baseline.accuracy)} (${m.baseline.correct}/${m.baseline.evaluated})`, boundsText(iv?.baseline?.accuracy ?? null)]);
  if (m.baseline && m.baseline.macroF1 !== null) head.push(['zero-shot baseline macro-F1', num(m.baseline.macroF1), boundsText(iv?.baseline?.macroF1 ?? null, 'number')]);
  lines.push(table(head, (c) => c === 1));
  const versus = iv?.baseline?.versus;
  if (versus) lines.push(`  TATRA − zero-shot baseline: ${pairedText(versus)}`);
  lines.push('');
  lines.push(
    table([
      ['runs j', 'vote over runs 1..j', '95 % interval', 'run j alone', '95 % interval'],
      ...m.accuracyAfterRuns.map((v, j) => [String(j + 1), pct(v), boundsText(iv?.accuracyAfterRuns[j] ?? null), pct(m.perRunAccuracy[j] ?? null), boundsText(iv?.perRunAccuracy[j] ?? null)]),
    ]),
  );
  if (m.labels.length > 0) {
    lines.push('');
    const cell = (v: number, i: Interval | null | undefined) => `${num(v)} ${boundsText(i ?? null, 'number')}`.trimEnd();
    lines.push(
      table([
        ['label', 'precision', 'recall', 'F1', 'support', 'predicted'],
        ...m.perLabel.map((l, i) => {
          const li = iv?.perLabel[i];
          return [l.label, cell(l.precision, li?.precision), cell(l.recall, li?.recall), cell(l.f1, li?.f1), String(l.support), String(l.predicted)];
        }),
      ]),
    );
    lines.push('');
    lines.push('  confusion (rows: gold, columns: predicted)');
    lines.push(table([['', ...m.predicted], ...m.labels.map((l, i) => [l, ...m.confusion[i]!.map(String)])]));
  }
  const hist = m.confidenceHistogram.filter((b) => b.count > 0);
  if (hist.length > 0) {
    lines.push('');
    lines.push(`  winning vote share: ${hist.map((b) => `${b.from.toFixed(1)}–${b.to.toFixed(1)}: ${b.count}`).join('  ')}`);
  }
  lines.push(...calibrationReport(m));
  if (iv) lines.push('', `  ${INTERVALS_FOOTNOTE}`);
  return lines.join('\n');
}

/** How far the vote share can be trusted: ECE, Brier, the reliability bins and the accuracy–coverage curve. */
function calibrationReport(m: JobMetrics): string[] {
  const c = m.calibration;
  if (c.ece === null) return [];
  const ci = m.intervals?.calibration;
  const lines = ['', `  calibration of the winning vote share: ECE ${num(c.ece)} ${boundsText(ci?.ece ?? null, 'number')}  Brier ${num(c.brier)} ${boundsText(ci?.brier ?? null, 'number')}`];
  const bins = c.bins.flatMap((b, i) => (b.count > 0 ? [[b, ci?.bins[i] ?? null] as const] : []));
  lines.push(table([['vote share', 'rows', 'mean share', 'accuracy', '95 % interval'], ...bins.map(([b, i]) => [`${b.from.toFixed(1)}–${b.to.toFixed(1)}`, String(b.count), num(b.confidence, 2), pct(b.accuracy), boundsText(i)])]));
  if (m.selective.length > 1) {
    lines.push('', '  answer only when the vote share is at least t (accuracy–coverage):');
    lines.push(table([['t', 'coverage', 'accuracy', '95 % interval'], ...m.selective.map((p, i) => [num(p.threshold, 2), pct(p.coverage), pct(p.accuracy), boundsText(ci?.selective[i] ?? null)])]));
  }
  return lines;
}

/**
 * A finished (or failed) job's metrics on stdout, as a table or one JSON object (the job as the
 * API's jobs.get answers it, the contract's JobSummary, and jobs.metrics'); a failure sets exit code 1.
 */
export function printJobOutcome(end: JobInfo, metrics: JobMetrics, json: boolean): void {
  if (json) outJson({ job: jobDetail(end, metrics), metrics });
  else out(formatMetrics(end, metrics));
  if (end.stoppedBy === 'budget') {
    err(`paused job ${end.id} at ${end.rowsDone}/${end.rowsTotal} rows: the next rows would have exceeded its budget (${end.budget ? formatBudget(end.budget) : '?'}); continue with: tatra jobs resume ${end.id} --budget <a larger limit>`);
  }
  if (end.status === 'failed') {
    err(`tatra: job ${end.id} failed: ${end.error ?? 'unknown error'}`);
    process.exitCode = 1;
  }
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
  const bar = progressBar('{bar} {value}/{total} rows | {rate} rows/min | ETA {etaText} | accuracy {acc}', opts.quiet);
  let lastPrinted = -1;
  let lastPhase: JobProgress['phase'] | null = null;
  const show = (p: JobProgress) => {
    if (p.jobId !== jobId) return;
    if (p.phase !== lastPhase) {
      lastPhase = p.phase;
      const note = p.phase === 'loading' ? 'loading models…' : p.phase === 'examples' ? 'generating the examples of every run…' : null;
      if (note && !opts.quiet && !bar) err(note);
      if (note && bar) bar.update(p.rowsDone, { rate: '0.0', etaText: note, acc: pct(p.runningAccuracy) });
      if (note) return;
    }
    const payload = { rate: (p.rowsPerMinute ?? 0).toFixed(1), etaText: etaText(p), acc: pct(p.runningAccuracy) };
    if (bar) {
      bar.setTotal(p.rowsTotal);
      bar.update(p.rowsDone, payload);
    } else if (!opts.quiet) {
      // Without a terminal: a plain line about every 5% (and the last row).
      const step = Math.max(1, Math.ceil(p.rowsTotal / 20));
      if (p.rowsDone !== lastPrinted && (p.rowsDone % step === 0 || p.rowsDone === p.rowsTotal)) {
        lastPrinted = p.rowsDone;
        err(`rows ${p.rowsDone}/${p.rowsTotal}  ${payload.rate} rows/min  ETA ${payload.etaText}  accuracy ${payload.acc}`);
      }
    }
  };
  const job = manager.get(jobId);
  bar?.start(job.rowsTotal, job.rowsDone, { rate: '0.0', etaText: '…', acc: '—' });
  const off = manager.on('progress', (e) => show(e.progress));
  let interrupted = false;
  const offInterrupt = onInterrupt(() => {
    interrupted = true;
    manager.pause(jobId).catch((e: unknown) => err(`cannot pause job ${jobId}: ${errorMessage(e)}`));
  });
  try {
    // Not `onStarted?.(await start())`: an optional call skips evaluating its arguments.
    const started = await manager.start(jobId, opts.start);
    opts.onStarted?.(started);
    const end = await manager.wait(jobId);
    bar?.stop();
    if (interrupted) {
      err(`paused job ${jobId} at ${end.rowsDone}/${end.rowsTotal} rows; continue with: tatra jobs resume ${jobId}`);
      process.exitCode = 130;
    }
    return end;
  } finally {
    bar?.stop();
    off();
    offInterrupt();
  }
}

/** A job as the API's jobs.get answers it; the CLI has no live progress to add. */
export function jobDetail(job: JobInfo, metrics: JobMetrics): JobSummary & { progress: null } {
  return { ...jobSummary(job, summaryScores(metrics)), progress: null };
}
