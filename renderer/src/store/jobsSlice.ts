// Evaluation jobs: the set-up draft (file, preview, mapping), the history, live progress and the
// results of the job on screen. Jobs run in the main process; the page only watches, so a reload
// or a second window sees the same job carry on.
import type { DataPreview, JobMetrics, JobProgress, JobStartInput, JobStatus, JobSummary } from '../../../electron/common/contract/jobs';
import type { Budget } from '../../../electron/common/plan';
import { ApiCallError, getApi, messageOf } from '../api/client';
import type { GetState, SetState, SliceCreator } from './types';

export interface EvalDraft {
  path: string;
  /** What to call the file: its own name for an upload (the path is a copy in the data folder). */
  fileName: string;
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
  /** Jobs the host says do not exist (deleted, or a stale link): their pages say so instead of loading forever. */
  missingJobs: Record<string, true>;
  progress: Record<string, JobProgress>;
  metrics: Record<string, JobMetrics>;
  draft: EvalDraft;
  setDraft(patch: Partial<EvalDraft>): void;
  /**
   * Reads the file at `draft.path` (or `path`). A file not previewed yet gets the host's guesses
   * for both columns; the file on show keeps its columns unless `columns` says otherwise (a gold
   * column of null is the user's "none", which the host honours, so it is only ever sent when
   * chosen: an empty draft sending null is how a guessed gold column used to be lost).
   */
  previewData(path?: string, columns?: { inputColumn?: string; goldColumn?: string | null }): Promise<void>;
  /** After a reload: the set-up the page had (file, columns, mapping, limit), read again. */
  restoreDraft(): Promise<void>;
  uploadData(file: File): Promise<void>;
  loadJobs(): Promise<void>;
  startJob(input: JobStartInput): Promise<JobSummary | null>;
  /** `budget`: with resume, a new (raised) budget for a job its budget stopped. */
  jobAction(jobId: string, action: 'pause' | 'resume' | 'cancel', opts?: { budget?: Budget }): Promise<void>;
  loadMetrics(jobId: string): Promise<void>;
  refreshJob(jobId: string): Promise<void>;
  /** `minConfidence`: rows below it are marked abstained in the export. */
  exportJob(jobId: string, format: 'csv' | 'json', minConfidence?: number): Promise<{ path: string; url: string | null } | null>;
  handleJobProgress(p: JobProgress): void;
  handleJobStatus(p: { jobId: string; status: JobStatus; error: string | null }): void;
}

/**
 * True when `e` says the host has no job `jobId` (deleted, or a link from another data folder):
 * the job is marked missing, and its pages say so in their place (JobMissing) instead of a notice.
 */
export function markIfMissing(set: SetState, get: GetState, jobId: string, e: unknown): boolean {
  if (!(e instanceof ApiCallError && e.code === 'job_unknown')) return false;
  set({ missingJobs: { ...get().missingJobs, [jobId]: true }, jobs: get().jobs.filter((j) => j.id !== jobId) });
  return true;
}

export const emptyDraft = (): EvalDraft => ({
  path: '',
  fileName: '',
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

/** What survives a reload of the page (the preview itself is read again: the file may have changed). */
type SavedDraft = Pick<EvalDraft, 'path' | 'fileName' | 'inputColumn' | 'goldColumn' | 'labelMap' | 'limit' | 'baseline' | 'name'>;
const DRAFT_KEY = 'tatra.evaluate.draft';

function saveDraft(d: EvalDraft): void {
  const saved: SavedDraft = { path: d.path, fileName: d.fileName, inputColumn: d.inputColumn, goldColumn: d.goldColumn, labelMap: d.labelMap, limit: d.limit, baseline: d.baseline, name: d.name };
  try {
    localStorage.setItem(DRAFT_KEY, JSON.stringify(saved));
  } catch {
    // Storage may be unavailable (privacy mode): the set-up then lasts as long as the page.
  }
}

function loadDraft(): SavedDraft | null {
  try {
    const raw = localStorage.getItem(DRAFT_KEY);
    if (!raw) return null;
    const v = JSON.parse(raw) as Partial<SavedDraft>;
    if (typeof v.path !== 'string') return null;
    return {
      path: v.path,
      fileName: typeof v.fileName === 'string' ? v.fileName : baseName(v.path),
      inputColumn: typeof v.inputColumn === 'string' ? v.inputColumn : null,
      goldColumn: typeof v.goldColumn === 'string' ? v.goldColumn : null,
      labelMap: v.labelMap && typeof v.labelMap === 'object' ? Object.fromEntries(Object.entries(v.labelMap).filter(([, l]) => typeof l === 'string')) : {},
      limit: typeof v.limit === 'number' ? v.limit : null,
      baseline: v.baseline === true,
      name: typeof v.name === 'string' ? v.name : '',
    };
  } catch {
    return null;
  }
}

/** The last part of a path, for naming a data file. */
export function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

function upsert(jobs: JobSummary[], job: JobSummary): JobSummary[] {
  const rest = jobs.filter((j) => j.id !== job.id);
  return [job, ...rest].sort((a, b) => b.createdAt - a.createdAt);
}

/** The set-up's actions: the draft edited, its file read (previewed), uploaded, and restored after a reload. */
type DraftActions = Pick<JobsSlice, 'setDraft' | 'previewData' | 'uploadData' | 'restoreDraft'>;

function draftActions(set: SetState, get: GetState): DraftActions {
  /** The latest read of the file: an answer to an earlier one (a column picked again before it came) is dropped. */
  let latestPreview = 0;
  return {
    setDraft(patch) {
      set({ draft: { ...get().draft, ...patch } });
      saveDraft(get().draft);
    },
    async previewData(path, columns) {
      const d = get().draft;
      const target = (path ?? d.path).trim();
      if (!target) return;
      const same = d.preview?.path === target;
      const inputColumn = columns?.inputColumn ?? (same ? d.inputColumn : null);
      const goldColumn = columns && 'goldColumn' in columns ? columns.goldColumn : same ? d.goldColumn : undefined;
      const fileName = target === d.path && d.fileName ? d.fileName : baseName(target);
      // Another file: a name given for the last one does not carry over (the history names a job after its file).
      // A column the user picks shows as picked at once, not when the file has been read again.
      const picked = { ...(columns?.inputColumn ? { inputColumn: columns.inputColumn } : {}), ...(columns && 'goldColumn' in columns ? { goldColumn: columns.goldColumn ?? null } : {}) };
      set({ draft: { ...d, ...picked, path: target, fileName, ...(same ? {} : { name: '' }), previewing: true, previewError: null } });
      const read = ++latestPreview;
      try {
        const preview = await getApi().call('jobs.preview', {
          path: target,
          taskId: get().currentTaskId,
          ...(inputColumn ? { inputColumn } : {}),
          ...(goldColumn !== undefined ? { goldColumn } : {}),
        });
        if (read !== latestPreview) return;
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
        if (read !== latestPreview) return;
        set({ draft: { ...get().draft, preview: null, previewing: false, previewError: messageOf(e) } });
      }
      saveDraft(get().draft);
    },
    async uploadData(file) {
      set({ draft: { ...get().draft, previewing: true, previewError: null } });
      try {
        const { path } = await getApi().upload(file);
        set({ draft: { ...emptyDraft(), path, fileName: file.name } });
        await get().previewData(path);
      } catch (e) {
        set({ draft: { ...get().draft, previewing: false, previewError: `Upload failed: ${messageOf(e)}` } });
      }
    },
    async restoreDraft() {
      const saved = loadDraft();
      if (!saved?.path || get().draft.preview) return;
      set({ draft: { ...get().draft, ...saved, preview: null, previewing: false, previewError: null } });
      await get().previewData(saved.path, { ...(saved.inputColumn ? { inputColumn: saved.inputColumn } : {}), goldColumn: saved.goldColumn });
      const d = get().draft;
      // The user's own mapping wins over the suggestions, for the values the file still has.
      if (d.preview) {
        const known = new Set(d.preview.goldValues.map((g) => g.value));
        const mine = Object.fromEntries(Object.entries(saved.labelMap).filter(([v]) => known.has(v)));
        set({ draft: { ...d, name: saved.name, labelMap: { ...d.labelMap, ...mine } } });
        saveDraft(get().draft);
      }
    },
  };
}

export const createJobsSlice: SliceCreator<JobsSlice> = (set, get) => ({
  jobs: [],
  jobsLoaded: false,
  missingJobs: {},
  progress: {},
  metrics: {},
  draft: emptyDraft(),
  ...draftActions(set, get),
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
  async jobAction(jobId, action, opts = {}) {
    try {
      const job = action === 'resume' && opts.budget ? await getApi().call('jobs.resume', { jobId, budget: opts.budget }) : await getApi().call(`jobs.${action}`, { jobId });
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
      if (!markIfMissing(set, get, jobId, e)) get().notify('error', `Could not load metrics: ${messageOf(e)}`);
    }
  },
  async refreshJob(jobId) {
    try {
      const { progress, ...job } = await getApi().call('jobs.get', { jobId });
      set({ jobs: upsert(get().jobs, job), progress: progress ? { ...get().progress, [jobId]: progress } : get().progress });
    } catch (e) {
      if (!markIfMissing(set, get, jobId, e)) get().notify('error', messageOf(e));
    }
  },
  async exportJob(jobId, format, minConfidence) {
    try {
      const out = await getApi().call('jobs.export', { jobId, format, ...(minConfidence !== undefined ? { minConfidence } : {}) });
      return { path: out.path, url: getApi().downloadUrl(out.path) };
    } catch (e) {
      get().notify('error', `Export failed: ${messageOf(e)}`);
      return null;
    }
  },
  handleJobProgress(p) {
    set({ progress: { ...get().progress, [p.jobId]: p } });
    const job = get().jobs.find((j) => j.id === p.jobId);
    if (job) set({ jobs: upsert(get().jobs, { ...job, rowsDone: p.rowsDone, rowsTotal: p.rowsTotal, accuracy: p.runningAccuracy, deterministic: p.deterministic ?? job.deterministic }) });
  },
  handleJobStatus({ jobId, status, error }) {
    const job = get().jobs.find((j) => j.id === jobId);
    if (job) set({ jobs: upsert(get().jobs, { ...job, status, error }) });
    else void get().refreshJob(jobId);
    if (status !== 'running' && status !== 'queued') {
      void get().loadMetrics(jobId);
      // What the session spent and why it stopped (its budget) come with the job, not the event.
      if (job) void get().refreshJob(jobId);
    }
    if (status === 'failed' && error) get().notify('error', `Evaluation failed: ${error}`);
  },
});
