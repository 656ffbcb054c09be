// A job as every face shows it: the contract's JobSummary, which the API returns and
// `tatra jobs list --json` prints (one shape, so a script and the app read the same fields).
import { accuracyOf, jobStatus, type JobSummary } from '../common/contract/jobs';
import type { JobInfo } from './types';
import { wilson } from '../common/stats';

export function jobSummary(job: JobInfo): JobSummary {
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
    error: job.error,
    deterministic: job.deterministic,
    usage: job.usage,
    budget: job.budget ? { kind: job.budget.kind, limit: job.budget.limit } : null,
    stoppedBy: job.stoppedBy,
  };
}
