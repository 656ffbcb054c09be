// A job as every face shows it: the contract's JobSummary, which the API returns and
// `tatra jobs list --json` prints (one shape, so a script and the app read the same fields). Its
// macro-F1 and interval come from the job's metrics (JobManager.summary reads them: the interval is
// kept in the job's database once computed, docs/method.md §16).
import { accuracyOf, jobStatus, type JobSummary } from '../common/contract/jobs';
import type { Interval } from '../common/contract/interval';
import type { JobInfo, JobMetrics } from './types';
import { wilson } from '../common/stats';

/** What the summary reads off the job's metrics: null where they were not read (a job just created). */
export interface SummaryScores {
  macroF1: number | null;
  macroF1Interval: Interval | null;
}

/** The summary's scores from a job's metrics. */
export function summaryScores(m: Pick<JobMetrics, 'macroF1' | 'intervals'>): SummaryScores {
  return { macroF1: m.macroF1, macroF1Interval: m.intervals?.macroF1 ?? null };
}

export function jobSummary(job: JobInfo, scores: SummaryScores | null): JobSummary {
  return {
    id: job.id,
    name: job.name,
    taskId: job.task.id,
    status: jobStatus(job),
    dataPath: job.dataset.path,
    generator: job.generator.path,
    evaluator: job.evaluator.path,
    settings: job.settings,
    createdAt: Date.parse(job.created),
    updatedAt: Date.parse(job.updated),
    rowsDone: job.rowsDone,
    rowsTotal: job.rowsTotal,
    accuracy: accuracyOf(job.rowsCorrect, job.rowsWithGold),
    accuracyInterval: wilson(job.rowsCorrect, job.rowsWithGold),
    macroF1: scores?.macroF1 ?? null,
    macroF1Interval: scores?.macroF1Interval ?? null,
    error: job.error,
    deterministic: job.deterministic,
    usage: job.usage,
    budget: job.budget ? { kind: job.budget.kind, limit: job.budget.limit } : null,
    stoppedBy: job.stoppedBy,
  };
}
