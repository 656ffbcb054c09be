// Sweeps and comparisons: the long experiments, kept the way evaluation jobs are (jobsSlice), over
// the one experiments.* API: the history of both kinds, the full result of those opened, live
// progress from the host's `experiment.progress` events (wired once in connectStore, so every page,
// a reload or a second window sees them), the actions (start, pause, resume, cancel, export) and
// one error per kind. The one experiment page (views/experiment/) reads its kind; the work runs in
// the main process.
import type { ExperimentKind, ExperimentProgressEvent, ExperimentResult, ExperimentStartInput, ExperimentSummary } from '../../../electron/common/contract/experiments';
import type { Budget } from '../../../electron/common/plan';
import { getApi, messageOf } from '../api/client';
import type { SliceCreator } from './types';

export type ExperimentAction = 'pause' | 'resume' | 'cancel';
export type ExperimentOf<K extends ExperimentKind, T extends { kind: ExperimentKind } = ExperimentSummary> = Extract<T, { kind: K }>;

export interface ExperimentsSlice {
  /** Both kinds, newest first; null until loaded. */
  experiments: ExperimentSummary[] | null;
  /** Full results of experiments opened, by id, read again as they progress. */
  experimentResults: Record<string, ExperimentResult>;
  /** The latest progress event of each experiment seen running. */
  experimentLive: Record<string, ExperimentProgressEvent>;
  /** One error per kind, each shown by its kind's view. */
  experimentError: Record<ExperimentKind, string | null>;
  loadExperiments(): Promise<void>;
  openExperiment(kind: ExperimentKind, id: string): Promise<void>;
  startExperiment(input: ExperimentStartInput): Promise<ExperimentSummary | null>;
  /** opts.budget: a resume's new budget for all its jobs together. */
  experimentAction(kind: ExperimentKind, id: string, action: ExperimentAction, opts?: { budget?: Budget }): Promise<void>;
  /** Writes an experiment's export; where it is and, in browser mode, a URL that downloads it. */
  exportExperiment(kind: ExperimentKind, id: string, format: 'csv' | 'json'): Promise<{ path: string; url: string | null } | null>;
  handleExperimentProgress(e: ExperimentProgressEvent): void;
}

/**
 * When an opened result is read again on a progress event: a comparison's pairs with every event
 * (its events come a few a second at most, and its pair table shows the running pair's rows), a
 * sweep's points only when a job ends or the status changes (reading them aggregates every row).
 */
const READ_AGAIN: Record<ExperimentKind, 'every event' | 'a cell ends'> = { compare: 'every event', sweep: 'a cell ends' };

function upsert(list: ExperimentSummary[] | null, s: ExperimentSummary): ExperimentSummary[] {
  return [s, ...(list ?? []).filter((x) => x.id !== s.id)].sort((a, b) => b.createdAt - a.createdAt);
}

export const createExperimentsSlice: SliceCreator<ExperimentsSlice> = (set, get) => {
  const setError = (kind: ExperimentKind, message: string | null) => set({ experimentError: { ...get().experimentError, [kind]: message } });
  /** Reads the result of `id` once. */
  const fetchResult = async (kind: ExperimentKind, id: string): Promise<void> => {
    try {
      const r = await getApi().call('experiments.get', { id });
      set({ experimentResults: { ...get().experimentResults, [id]: r } });
      setError(kind, null);
    } catch (e) {
      setError(kind, messageOf(e));
    }
  };
  /**
   * Results being read, and whether something asked for a fresh read meanwhile: one read at a time
   * for each id, and one more after it when asked during it. Every read goes through here, the
   * first included: an event that lands while the first read is on its way (a comparison pausing
   * as its page opens) is followed by a read after it, not lost with the stale answer.
   */
  const reads = new Map<string, { again: boolean; done: Promise<void> }>();
  const read = (kind: ExperimentKind, id: string): Promise<void> => {
    const inFlight = reads.get(id);
    if (inFlight) {
      inFlight.again = true;
      return inFlight.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    reads.set(id, entry);
    entry.done = (async () => {
      try {
        do {
          entry.again = false;
          await fetchResult(kind, id);
        } while (entry.again);
      } finally {
        reads.delete(id);
      }
    })();
    return entry.done;
  };
  return {
    experiments: null,
    experimentResults: {},
    experimentLive: {},
    experimentError: { sweep: null, compare: null },
    async loadExperiments() {
      try {
        set({ experiments: await getApi().call('experiments.list', {}), experimentError: { sweep: null, compare: null } });
      } catch (e) {
        set({ experimentError: { sweep: messageOf(e), compare: messageOf(e) } });
      }
    },
    openExperiment(kind, id) {
      return read(kind, id);
    },
    async startExperiment(input) {
      setError(input.kind, null);
      try {
        const s = await getApi().call('experiments.start', input);
        set({ experiments: upsert(get().experiments, s) });
        return s;
      } catch (e) {
        setError(input.kind, messageOf(e));
        return null;
      }
    },
    async experimentAction(kind, id, action, opts = {}) {
      setError(kind, null);
      try {
        const s =
          action === 'resume'
            ? await getApi().call('experiments.resume', { id, ...(opts.budget ? { budget: opts.budget } : {}) })
            : await getApi().call(action === 'pause' ? 'experiments.pause' : 'experiments.cancel', { id });
        set({ experiments: upsert(get().experiments, s) });
        await get().openExperiment(kind, id);
      } catch (e) {
        setError(kind, messageOf(e));
      }
    },
    async exportExperiment(kind, id, format) {
      try {
        const out = await getApi().call('experiments.export', { id, format });
        return { path: out.path, url: getApi().downloadUrl(out.path) };
      } catch (e) {
        setError(kind, `Export failed: ${messageOf(e)}`);
        return null;
      }
    },
    handleExperimentProgress(e) {
      const before = get().experimentLive[e.id];
      set({ experimentLive: { ...get().experimentLive, [e.id]: e } });
      const known = get().experiments?.find((s) => s.id === e.id);
      if (known) set({ experiments: upsert(get().experiments, { ...known, status: e.status, progress: e.progress } as ExperimentSummary) });
      else void get().loadExperiments();
      if (!get().experimentResults[e.id] && !reads.has(e.id)) return;
      if (READ_AGAIN[e.kind] === 'every event' || before?.progress.jobsDone !== e.progress.jobsDone || before?.status !== e.status) void read(e.kind, e.id);
    },
  };
};
