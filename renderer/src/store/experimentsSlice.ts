// Sweeps and comparisons: the long experiments, kept the way evaluation jobs are (jobsSlice): the
// history, the full record of those opened, live progress from the host's events (wired once in
// connectStore, so every page, a reload or a second window sees them), the actions (start,
// pause, resume, cancel) and one error per kind. Views only read and call; the work runs in the
// main process.
import type { ComparisonRecord, ComparisonSpecInput, ComparisonSummary } from '../../../electron/common/contract/models';
import type { SweepProgress, SweepResult, SweepStatus, SweepSummary } from '../../../electron/common/contract/sweeps';
import type { MethodInput } from '../../../electron/common/contract';
import type { Budget } from '../../../electron/common/plan';
import { getApi, messageOf } from '../api/client';
import type { SliceCreator } from './types';

export type ExperimentAction = 'pause' | 'resume' | 'cancel';
export type LiveSweep = SweepProgress & { status: SweepStatus };

export interface ExperimentsSlice {
  /** Null until loaded. */
  sweeps: SweepSummary[] | null;
  /** Full results of sweeps opened, by id, refetched as their jobs finish. */
  sweepResults: Record<string, SweepResult>;
  /** The latest progress event of each sweep seen running. */
  sweepLive: Record<string, LiveSweep>;
  sweepError: string | null;
  loadSweeps(): Promise<void>;
  openSweep(id: string): Promise<void>;
  startSweep(input: MethodInput<'sweeps.start'>): Promise<SweepSummary | null>;
  /** opts.budget: a resume's new budget for all its jobs together. */
  sweepAction(id: string, action: Exclude<ExperimentAction, 'cancel'>, opts?: { budget?: Budget }): Promise<void>;
  handleSweepProgress(p: LiveSweep): void;
  /** Writes a sweep's export; where it is and, in browser mode, a URL that downloads it. */
  exportSweep(id: string, format: 'csv' | 'json'): Promise<{ path: string; url: string | null } | null>;

  comparisons: ComparisonSummary[];
  /** Full records of comparisons opened or running, by id. */
  comparisonRecords: Record<string, ComparisonRecord>;
  compareError: string | null;
  loadComparisons(): Promise<void>;
  openComparison(id: string): Promise<void>;
  startComparison(spec: ComparisonSpecInput): Promise<ComparisonRecord | null>;
  /** opts.budget: a resume's new budget for all its jobs together. */
  comparisonAction(id: string, action: ExperimentAction, opts?: { budget?: Budget }): Promise<void>;
  handleCompareProgress(r: ComparisonRecord): void;
}

const summaryOf = (r: ComparisonRecord): ComparisonSummary => ({
  id: r.id,
  createdAt: r.createdAt,
  finishedAt: r.finishedAt,
  status: r.status,
  error: r.error,
  ...(r.progress ? { progress: r.progress } : {}),
  task: r.spec.task,
  dataset: r.spec.dataset,
  generators: r.spec.generators,
  evaluators: r.spec.evaluators,
});

function upsertSweep(list: SweepSummary[] | null, s: SweepSummary): SweepSummary[] {
  return [s, ...(list ?? []).filter((x) => x.id !== s.id)].sort((a, b) => b.createdAt - a.createdAt);
}

export const createExperimentsSlice: SliceCreator<ExperimentsSlice> = (set, get) => ({
  sweeps: null,
  sweepResults: {},
  sweepLive: {},
  sweepError: null,
  async loadSweeps() {
    try {
      set({ sweeps: await getApi().call('sweeps.list', {}), sweepError: null });
    } catch (e) {
      set({ sweepError: messageOf(e) });
    }
  },
  async openSweep(id) {
    try {
      const r = await getApi().call('sweeps.get', { sweepId: id });
      set({ sweepResults: { ...get().sweepResults, [id]: r }, sweepError: null });
    } catch (e) {
      set({ sweepError: messageOf(e) });
    }
  },
  async startSweep(input) {
    set({ sweepError: null });
    try {
      const s = await getApi().call('sweeps.start', input);
      set({ sweeps: upsertSweep(get().sweeps, s) });
      return s;
    } catch (e) {
      set({ sweepError: messageOf(e) });
      return null;
    }
  },
  async sweepAction(id, action, opts = {}) {
    set({ sweepError: null });
    try {
      const s = action === 'pause' ? await getApi().call('sweeps.pause', { sweepId: id }) : await getApi().call('sweeps.resume', { sweepId: id, ...(opts.budget ? { budget: opts.budget } : {}) });
      set({ sweeps: upsertSweep(get().sweeps, s) });
      await get().openSweep(id);
    } catch (e) {
      set({ sweepError: messageOf(e) });
    }
  },
  async exportSweep(id, format) {
    try {
      const out = await getApi().call('sweeps.export', { sweepId: id, format });
      return { path: out.path, url: getApi().downloadUrl(out.path) };
    } catch (e) {
      set({ sweepError: `Export failed: ${messageOf(e)}` });
      return null;
    }
  },
  handleSweepProgress(p) {
    const before = get().sweepLive[p.sweepId];
    set({ sweepLive: { ...get().sweepLive, [p.sweepId]: p } });
    const known = get().sweeps?.find((s) => s.id === p.sweepId);
    if (known) {
      const { status, sweepId: _id, ...progress } = p;
      set({ sweeps: upsertSweep(get().sweeps, { ...known, status, progress: { sweepId: p.sweepId, ...progress } }) });
    }
    // The points change when a job finishes or the status does: read the result again then.
    if (get().sweepResults[p.sweepId] && (before?.jobsDone !== p.jobsDone || before?.status !== p.status)) void get().openSweep(p.sweepId);
  },

  comparisons: [],
  comparisonRecords: {},
  compareError: null,
  async loadComparisons() {
    try {
      set({ comparisons: await getApi().call('compare.list', {}) });
    } catch (e) {
      set({ compareError: messageOf(e) });
    }
  },
  async openComparison(id) {
    try {
      const rec = await getApi().call('compare.get', { id });
      set({ comparisonRecords: { ...get().comparisonRecords, [id]: rec }, compareError: null });
    } catch (e) {
      set({ compareError: messageOf(e) });
    }
  },
  async startComparison(spec) {
    set({ compareError: null });
    try {
      const rec = await getApi().call('compare.start', spec);
      // A progress event may already have arrived: never go back to an older record.
      const known = get().comparisonRecords[rec.id];
      set({
        comparisonRecords: { ...get().comparisonRecords, [rec.id]: known ?? rec },
        comparisons: [summaryOf(known ?? rec), ...get().comparisons.filter((c) => c.id !== rec.id)],
      });
      return rec;
    } catch (e) {
      set({ compareError: messageOf(e) });
      return null;
    }
  },
  async comparisonAction(id, action, opts = {}) {
    set({ compareError: null });
    try {
      if (action === 'cancel') await getApi().call('compare.cancel', { id });
      else if (action === 'pause') get().handleCompareProgress(await getApi().call('compare.pause', { id }));
      else get().handleCompareProgress(await getApi().call('compare.resume', { id, ...(opts.budget ? { budget: opts.budget } : {}) }));
    } catch (e) {
      set({ compareError: messageOf(e) });
    }
  },
  handleCompareProgress(r) {
    set({
      comparisonRecords: { ...get().comparisonRecords, [r.id]: r },
      comparisons: [summaryOf(r), ...get().comparisons.filter((c) => c.id !== r.id)].sort((a, b) => b.createdAt - a.createdAt),
    });
  },
});
