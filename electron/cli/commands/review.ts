// `tatra jobs review <id> [--import FILE]` and `tatra jobs export <id> --final`: a person's review
// of a job from the command line (the app's review view does the same through the API contract):
// where review stands, what it gives back (the audit estimate, the triage plan, gold corrections),
// decisions made elsewhere brought in, and the labelled data set written out.
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../../common/errors';
import { JobReview, type JobStore, type ReviewSummary } from '../../jobs';
import type { Interval } from '../../common/contract/interval';
import { withCliServices } from '../session';
import { interruptSignal, num, out, outJson, pct, plural, table } from '../ui';

/** "75.0 % (46.8–91.1 %, n 12)": an estimate with its 95 % interval. */
function withInterval(i: Interval | null, n: number): string {
  if (!i) return '–';
  return `${pct(i.estimate)} (95 % CI ${pct(i.low)}–${pct(i.high)}, ${n} rows)`;
}

export function formatReview(jobId: string, s: ReviewSummary, accuracy: { before: number | null; after: number | null } | null): string {
  const p = s.progress;
  const lines = [
    `review of job ${jobId}: ${p.reviewed} of ${plural(p.rowsDone, 'finished row')} labelled by a person (${p.agreed} as TATRA did, ${p.changed} changed), ${p.skipped} skipped`,
  ];
  if (accuracy && s.corrections > 0) lines.push(`  gold corrected on ${plural(s.corrections, 'row')}: accuracy ${pct(accuracy.before)} with the file's gold, ${pct(accuracy.after)} with the corrections`);
  if (s.audit.reviewed > 0) {
    lines.push(`  audit sample: TATRA's accuracy ${withInterval(s.audit.accuracy, s.audit.reviewed)}`);
    for (const l of s.audit.perLabel.filter((x) => x.reviewed > 0)) lines.push(`    when TATRA says ${l.label}: right ${withInterval(l.accuracy, l.reviewed)}`);
  }
  if (s.triage.steps.length > 0) {
    const basis = s.triage.basis === 'gold' ? "from the file's gold" : s.triage.basis === 'audit' ? 'from the audit sample' : 'unknown: review the audit order for an estimate';
    lines.push('', `  triage: accept TATRA where its confidence is at least c, review the rest (expected accuracy ${basis})`);
    lines.push(table([['c', 'accepted', 'to review', 'expected accuracy'], ...s.triage.steps.map((t) => [num(t.threshold, 2), String(t.accepted), String(t.toReview), t.accuracy ? `${pct(t.accuracy.estimate)} (${pct(t.accuracy.low)}–${pct(t.accuracy.high)})` : '–'])]));
  }
  return lines.join('\n');
}

export function registerReview(jobs: Command): void {
  jobs
    .command('review')
    .description("where a person's review of a job stands: rows reviewed, the audit sample's accuracy estimate, gold corrections and the triage plan; --import brings in decisions made elsewhere")
    .argument('<id>', 'job id (a unique prefix is enough)')
    .option('--import <file>', 'a CSV, TSV or JSONL file of decisions: columns "index" (the row, from 0) and "label"; a bad file imports nothing')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print the review summary (and what was imported) as JSON')
    .action((id: string, opts: { import?: string; dataDir?: string; json?: boolean }) =>
      withCliServices(opts, async (services) => {
        const review = new JobReview(services.jobStore());
        const job = review.job(id);
        let imported: { recorded: number; unchanged: number } | null = null;
        if (opts.import) {
          const { signal, off } = interruptSignal();
          try {
            imported = await review.importFile(job.id, resolve(opts.import), signal);
          } finally {
            off();
          }
        }
        const summary = review.summary(job.id);
        const metrics = summary.corrections > 0 ? review.metrics(job.id) : null;
        const accuracy = metrics ? { before: metrics.before.accuracy, after: metrics.after.accuracy } : null;
        if (opts.json) return outJson({ jobId: job.id, ...(imported ? { imported: { recorded: imported.recorded, unchanged: imported.unchanged } } : {}), summary, ...(accuracy ? { accuracy } : {}) });
        if (imported) out(`imported ${plural(imported.recorded, 'decision')} into job ${job.id}${imported.unchanged > 0 ? ` (${imported.unchanged} already so)` : ''}`);
        out(formatReview(job.id, summary, accuracy));
      }),
    );
}

/** `tatra jobs export --final`: the labelled data set, CSV or JSONL; returns the file written. */
export async function exportFinalLabels(services: { jobStore(): JobStore }, id: string, format: string, outFile: string | undefined, signal: AbortSignal): Promise<string> {
  if (format !== 'csv' && format !== 'jsonl') throw new UserError(`--final writes csv or jsonl, not ${format}`, 'bad_option');
  const review = new JobReview(services.jobStore());
  const job = review.job(id);
  return review.exportFinal(job.id, format, resolve(outFile ?? `${job.id}-labels.${format}`), signal);
}
