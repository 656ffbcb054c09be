// Evaluation jobs: the set-up draft (file, preview, mapping), the history, live progress and the
// results of the job on screen. Jobs run in the main process; the page only watches, so a reload
// or a second window sees the same job carry on.
import type { DataPreview, JobMetrics, JobProgress, JobStartInput, JobStatus, JobSummary } from '../../../electron/common/contract/jobs';
import { getApi, messageOf } from '../api/client';
import type { SliceCreator } from './types';

export interface EvalDraft {
  path: string;
  preview: DataPreview | null;
  previewError: string | null;
  previewing: boolean;
  inputColumn: string | null;
  goldColumn: string | null;
  /** Gold value → task label ('' = leave unmapped). */
  labelMap: Record<string, string>;
  limit: number | null;
  baseline: boolean;
  name: string;
}

export interface JobsSlice {
  jobs: JobSummary[];
  jobsLoaded: boolean;
  progress: Record<string, JobProgress>;
  metrics: Record<string, JobMetrics>;
  draft: EvalDraft;
  setDraft(patch: Partial<EvalDraft>): void;
  /** Reads the head of the file at `draft.path` (or `path`) and guesses the mapping. */
  previewData(path?: string): Promise<void>;
  uploadData(file: File): Promise<void>;
  loadJobs(): Promise<void>;
  startJob(input: JobStartInput): Promise<JobSummary | null>;
  jobAction(jobId: string, action: 'pause' | 'resume' | 'cancel'): Promise<void>;
  loadMetrics(jobId: string): Promise<void>;
  refreshJob(jobId: string): Promise<void>;
  exportJob(jobId: string, format: 'csv' | 'json'): Promise<{ path: string; url: string | null } | null>;
  handleJobProgress(p: JobProgress): void;
  handleJobStatus(p: { jobId: string; status: JobStatus; error: string | null }): void;
}

export const emptyDraft = (): EvalDraft => ({
  path: '',
  preview: null,
  previewError: null,
  previewing: false,
  inputColumn: null,
  goldColumn: null,
  labelMap: {},
  limit: null,
  baseline: false,
  name: '',
});

/** Suggested label map from a preview: each gold value to its suggestion, '' when none. */
export function suggestedMap(preview: DataPreview): Record<string, string> {
  return Object.fromEntries(preview.goldValues.map((g) => [g.value, g.suggested ?? '']));
}

function upsert(jobs: JobSummary[], job: JobSummary): JobSummary[] {
  const rest = jobs.filter((j) => j.id !== job.id);
  return [job, ...rest].sort((a, b) => b.createdAt - a.createdAt);
}

export const createJobsSlice: SliceCreator<JobsSlice> = (set, get) => ({
  jobs: [],
  jobsLoaded: false,
  progress: {},
  metrics: {},
  draft: emptyDraft(),
  setDraft(patch) {
    set({ draft: { ...get().draft, ...patch } });
  },
  async previewData(path) {
    const d = get().draft;
    const target = (path ?? d.path).trim();
    if (!target) return;
    set({ draft: { ...d, path: target, previewing: true, previewError: null } });
    try {
      const preview = await getApi().call('jobs.preview', {
        path: target,
        taskId: get().currentTaskId,
        inputColumn: d.path === target && d.inputColumn ? d.inputColumn : undefined,
        goldColumn: d.path === target ? d.goldColumn : undefined,
      });
      set({
        draft: {
          ...get().draft,
          preview,
          previewing: false,
          inputColumn: preview.inputColumn,
          goldColumn: preview.goldColumn,
          labelMap: suggestedMap(preview),
        },
      });
    } catch (e) {
      set({ draft: { ...get().draft, preview: null, previewing: false, previewError: messageOf(e) } });
    }
  },
  async uploadData(file) {
    set({ draft: { ...get().draft, previewing: true, previewError: null } });
    try {
      const { path } = await getApi().upload(file);
      set({ draft: { ...emptyDraft(), path, name: file.name.replace(/\.[^.]+$/, '') } });
      await get().previewData(path);
    } catch (e) {
      set({ draft: { ...get().draft, previewing: false, previewError: `Upload failed: ${messageOf(e)}` } });
    }
  },
  async loadJobs() {
    try {
      const jobs = await getApi().call('jobs.list', {});
      set({ jobs, jobsLoaded: true });
    } catch (e) {
      set({ jobsLoaded: true });
      get().notify('error', `Could not load the evaluation history: ${messageOf(e)}`);
    }
  },
  async startJob(input) {
    try {
      const job = await getApi().call('jobs.start', input);
      set({ jobs: upsert(get().jobs, job) });
      return job;
    } catch (e) {
      get().notify('error', messageOf(e));
      return null;
    }
  },
  async jobAction(jobId, action) {
    try {
      const job = await getApi().call(`jobs.${action}`, { jobId });
      set({ jobs: upsert(get().jobs, job) });
    } catch (e) {
      get().notify('error', messageOf(e));
    }
  },
  async loadMetrics(jobId) {
    try {
      const m = await getApi().call('jobs.metrics', { jobId });
      set({ metrics: { ...get().metrics, [jobId]: m } });
    } catch (e) {
      get().notify('error', `Could not load metrics: ${messageOf(e)}`);
    }
  },
  async refreshJob(jobId) {
    try {
      const { progress, ...job } = await getApi().call('jobs.get', { jobId });
      set({ jobs: upsert(get().jobs, job), progress: progress ? { ...get().progress, [jobId]: progress } : get().progress });
    } catch (e) {
      get().notify('error', messageOf(e));
    }
  },
  async exportJob(jobId, format) {
    try {
      const out = await getApi().call('jobs.export', { jobId, format });
      return { path: out.path, url: getApi().downloadUrl(out.path) };
    } catch (e) {
      get().notify('error', `Export failed: ${messageOf(e)}`);
      return null;
    }
  },
  handleJobProgress(p) {
    set({ progress: { ...get().progress, [p.jobId]: p } });
    const job = get().jobs.find((j) => j.id === p.jobId);
    if (job) set({ jobs: upsert(get().jobs, { ...job, done: p.done, total: p.total, accuracy: p.runningAccuracy, deterministic: p.deterministic ?? job.deterministic }) });
  },
  handleJobStatus({ jobId, status, error }) {
    const job = get().jobs.find((j) => j.id === jobId);
    if (job) set({ jobs: upsert(get().jobs, { ...job, status, error }) });
    else void get().refreshJob(jobId);
    if (status !== 'running' && status !== 'queued') void get().loadMetrics(jobId);
    if (status === 'failed' && error) get().notify('error', `Evaluation failed: ${error}`);
  },
});
