// A person's review of a job, for every face (the app's review view through the API contract's
// review.* methods, `tatra jobs review`, `tatra jobs export --final`): the queue, decisions and
// their undo, a row's history, where review stands, what it gives back (review-report.ts), the
// labelled data set out (review-export.ts) and decisions made elsewhere in (review-import.ts).
// Works on any evaluation job, running or finished, labelled or not; it reads and writes the job
// database only (review-store.ts), never the job's runner.
import { UserError } from '../common/errors';
import { answerLabels } from '../common/task';
import { metricsFromCounts } from './metrics';
import { queuePage, type QueuePage, type QueueQuery } from './review-queue';
import { auditEstimate, correctedCounts, goldCorrections, triagePlan, type AuditEstimate, type TriagePlan } from './review-report';
import { exportFinal, type FinalFormat } from './review-export';
import { readDecisionFile } from './review-import';
import type { NewDecision, ReviewDecision, ReviewHistoryEntry, ReviewProgress } from './review-store';
import type { JobStore } from './store';
import type { JobInfo, JobMetrics } from './types';

export interface ReviewSummary {
  progress: ReviewProgress;
  audit: AuditEstimate;
  triage: TriagePlan;
  /** Rows whose label the person gave differs from the file's gold. */
  corrections: number;
}

export class JobReview {
  constructor(private readonly store: JobStore) {}

  /** A job by id or unique prefix; UserError when there is none. */
  job(id: string): JobInfo {
    const full = this.store.findJobId(id);
    const job = full ? this.store.getJob(full) : null;
    if (!job) throw new UserError(`no job "${id}"`, 'job_unknown');
    return job;
  }

  queue(jobId: string, q: QueueQuery): QueuePage & { progress: ReviewProgress } {
    const job = this.job(jobId);
    const page = queuePage(this.store.db, this.store.reviews, job, q);
    return { ...page, progress: this.store.reviews.progress(job.id) };
  }

  /** A label must be one of the task's (its abstain label too); a math answer any short text. */
  private checkLabel(job: JobInfo, label: string | null): void {
    if (label === null) return;
    if (job.task.kind === 'math' ? label.length === 0 || label.length > 1000 : !answerLabels(job.task).includes(label)) {
      throw new UserError(`"${label.slice(0, 40)}" is not a label of task ${job.task.id}${job.task.kind === 'math' ? '' : ` (${answerLabels(job.task).join(', ')})`}`, 'bad_option');
    }
  }

  decide(jobId: string, d: NewDecision): { decision: ReviewDecision; progress: ReviewProgress } {
    const job = this.job(jobId);
    this.checkLabel(job, d.label);
    const decision = this.store.reviews.decide(job.id, d);
    return { decision, progress: this.store.reviews.progress(job.id) };
  }

  undo(jobId: string, logId: number): { index: number; decision: ReviewDecision | null; progress: ReviewProgress } {
    const job = this.job(jobId);
    const undone = this.store.reviews.undo(job.id, logId);
    return { ...undone, progress: this.store.reviews.progress(job.id) };
  }

  history(jobId: string, index: number): ReviewHistoryEntry[] {
    return this.store.reviews.history(this.job(jobId).id, index);
  }

  summary(jobId: string): ReviewSummary {
    const job = this.job(jobId);
    const counts = this.store.metricCounts.counts(job.id, () => this.store.iterateRows(job.id));
    return {
      progress: this.store.reviews.progress(job.id),
      audit: auditEstimate(this.store.db, job),
      triage: triagePlan(this.store.db, job, counts),
      corrections: goldCorrections(this.store.db, job.id).length,
    };
  }

  /** The metrics with the file's gold, and with the person's corrections of it. */
  metrics(jobId: string, minConfidence?: number): { before: JobMetrics; after: JobMetrics; corrections: number } {
    const job = this.job(jobId);
    const counts = this.store.metricCounts.counts(job.id, () => this.store.iterateRows(job.id));
    const corrections = goldCorrections(this.store.db, job.id).map(({ index, label }) => ({ label, row: this.store.row(job.id, index)! }));
    return {
      before: metricsFromCounts(job.task, job.rowsTotal, counts, minConfidence),
      after: metricsFromCounts(job.task, job.rowsTotal, correctedCounts(job.task, counts, corrections), minConfidence),
      corrections: corrections.length,
    };
  }

  /** Imports a file of (index, label) decisions: all of them or, for a bad file, none. */
  async importFile(jobId: string, path: string, signal?: AbortSignal): Promise<{ recorded: number; unchanged: number; progress: ReviewProgress }> {
    const job = this.job(jobId);
    const decisions = await readDecisionFile(job, path, signal);
    const done = this.store.reviews.decideAll(job.id, decisions);
    return { ...done, progress: this.store.reviews.progress(job.id) };
  }

  async exportFinal(jobId: string, format: FinalFormat, outPath: string, signal?: AbortSignal): Promise<string> {
    const job = this.job(jobId);
    await exportFinal(this.store.db, job, format, outPath, signal);
    return outPath;
  }
}
