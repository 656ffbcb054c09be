// A person's review of an evaluation job over the jobs layer's JobReview (jobs/review.ts): the
// queue, decisions and undo (each told to every window as `review.decided`), history, where
// review stands and what it gives back, the labelled data set out and decisions in.
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { reviewMethods } from '../../common/contract/review';
import { JobReview } from '../../jobs';
import type { HandlerGroup, HostDeps } from '../deps';
import { metricsPayload } from './jobs';

export function createReviewHandlers(deps: HostDeps): HandlerGroup<typeof reviewMethods> {
  let review: JobReview | null = null;
  // Opened on first use, on the services' one job database.
  const open = (): JobReview => (review ??= new JobReview(deps.services.jobStore()));

  return {
    handlers: {
      'review.queue': async ({ jobId, ...q }) => open().queue(jobId, q),
      'review.decide': async ({ jobId, index, label, queue, clientId }) => {
        const r = open();
        const out = r.decide(jobId, { index, label, queue, ...(clientId !== undefined ? { clientId } : {}) });
        deps.emit('review.decided', { jobId: r.job(jobId).id, index, decision: out.decision, progress: out.progress });
        return out;
      },
      'review.undo': async ({ jobId, logId }) => {
        const r = open();
        const out = r.undo(jobId, logId);
        deps.emit('review.decided', { jobId: r.job(jobId).id, index: out.index, decision: out.decision, progress: out.progress });
        return out;
      },
      'review.history': async ({ jobId, index }) => open().history(jobId, index),
      'review.summary': async ({ jobId }) => open().summary(jobId),
      'review.metrics': async ({ jobId }) => {
        const r = open();
        const id = r.job(jobId).id;
        const m = r.metrics(id);
        return { before: metricsPayload(id, m.before), after: metricsPayload(id, m.after), corrections: m.corrections };
      },
      'review.import': async ({ jobId, path }) => open().importFile(jobId, path, deps.signal),
      'review.export': async ({ jobId, format }) => {
        const r = open();
        const job = r.job(jobId);
        const folder = join(deps.dataDir, 'exports');
        await mkdir(folder, { recursive: true });
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const filename = `${job.task.id}-${job.id.slice(0, 8)}-labels-${stamp}.${format}`;
        const path = await r.exportFinal(job.id, format, join(folder, filename), deps.signal);
        return { path, filename, bytes: (await stat(path)).size };
      },
    },
  };
}
