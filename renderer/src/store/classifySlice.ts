// One interactive classify run at a time: start, follow its events live, cancel. The run id is
// kept in sessionStorage so a reloaded page picks the run up again (replaying its stored events).
import type { ApiError, ClassifyEventPayload, ClassifyStartInput } from '../../../electron/common/contract/classify';
import { getApi, messageOf, ApiCallError } from '../api/client';
import { applyEvent, emptyLive, type LiveState } from './classifyLive';
import type { SliceCreator } from './types';

export type ClassifyStatus = 'idle' | 'starting' | 'running' | 'done' | 'failed' | 'cancelled';

export interface ClassifyState {
  runId: string | null;
  request: ClassifyStartInput | null;
  status: ClassifyStatus;
  live: LiveState;
  error: ApiError | null;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface ClassifySlice {
  classify: ClassifyState;
  startClassify(request: ClassifyStartInput): Promise<void>;
  cancelClassify(): Promise<void>;
  /** Routes a `classify.event` payload (called by the store's event wiring). */
  handleClassifyEvent(payload: ClassifyEventPayload): void;
  /** After a reload or reconnect: fetch the run's state and replay what was missed. */
  restoreClassify(runId?: string): Promise<void>;
  clearClassify(): void;
}

const RUN_KEY = 'tatra.classify.runId';
const idle = (): ClassifyState => ({ runId: null, request: null, status: 'idle', live: emptyLive(), error: null, startedAt: null, finishedAt: null });

// Events that arrive before classify.start has answered with the run id (the event stream and
// the reply travel separately); applied once the id is known.
let early: ClassifyEventPayload[] = [];
// Events that arrive while classify.get is in flight after a reload: re-applied on top of the
// snapshot. Applying an event twice is harmless (each replaces by run, label or variant).
let restoring: { runId: string; events: ClassifyEventPayload[] } | null = null;

function remember(runId: string | null): void {
  try {
    if (runId) sessionStorage.setItem(RUN_KEY, runId);
    else sessionStorage.removeItem(RUN_KEY);
  } catch {
    // Storage may be unavailable (privacy mode); a reload then simply starts fresh.
  }
}

/** The newest classification running in this app (started by any page), or null. */
async function runningElsewhere(): Promise<string | null> {
  try {
    const runs = await getApi().call('classify.list', {});
    return runs.find((r) => r.status === 'running')?.runId ?? null;
  } catch {
    return null;
  }
}

export function rememberedRunId(): string | null {
  try {
    return sessionStorage.getItem(RUN_KEY);
  } catch {
    return null;
  }
}

export const createClassifySlice: SliceCreator<ClassifySlice> = (set, get) => ({
  classify: idle(),
  async startClassify(request) {
    early = [];
    set({ classify: { ...idle(), request, status: 'starting', startedAt: Date.now() } });
    try {
      const { runId } = await getApi().call('classify.start', request);
      set({ classify: { ...get().classify, runId, status: 'running' } });
      remember(runId);
      const pending = early.filter((p) => p.runId === runId);
      early = [];
      for (const p of pending) get().handleClassifyEvent(p);
    } catch (e) {
      const error = e instanceof ApiCallError ? { code: e.code, message: e.message } : { code: 'internal', message: messageOf(e) };
      set({ classify: { ...get().classify, status: 'failed', error, finishedAt: Date.now() } });
    }
  },
  async cancelClassify() {
    const { runId, status } = get().classify;
    if (!runId || status !== 'running') return;
    try {
      await getApi().call('classify.cancel', { runId });
    } catch (e) {
      get().notify('error', `Could not cancel: ${messageOf(e)}`);
    }
  },
  handleClassifyEvent(payload) {
    if (restoring && restoring.runId === payload.runId) {
      restoring.events.push(payload);
      return;
    }
    const c = get().classify;
    if (c.status === 'starting' && c.runId === null) {
      early.push(payload);
      return;
    }
    if (payload.runId !== c.runId) {
      // A run started elsewhere (another tab or window of the same app): follow it, unless this
      // page is running its own.
      if (c.status !== 'running' && c.status !== 'starting' && 'event' in payload) void get().restoreClassify(payload.runId);
      return;
    }
    if ('error' in payload) {
      const cancelled = payload.error.code === 'cancelled';
      set({ classify: { ...c, status: cancelled ? 'cancelled' : 'failed', error: cancelled ? null : payload.error, finishedAt: Date.now() } });
      return;
    }
    const live = applyEvent(c.live, payload.event);
    const done = payload.event.type === 'done';
    set({ classify: { ...c, live, status: done ? 'done' : c.status, finishedAt: done ? Date.now() : c.finishedAt } });
  },
  async restoreClassify(runId) {
    // Without a run of its own, a page shows the one running now, if another page started it.
    const id = runId ?? get().classify.runId ?? rememberedRunId() ?? (await runningElsewhere());
    if (!id || restoring?.runId === id) return;
    restoring = { runId: id, events: [] };
    try {
      const state = await getApi().call('classify.get', { runId: id });
      let live = emptyLive();
      for (const ev of state.events) live = applyEvent(live, ev);
      set({
        classify: {
          runId: id,
          request: state.request,
          status: state.status,
          live,
          error: state.status === 'failed' ? state.error : null,
          startedAt: state.startedAt,
          finishedAt: state.status === 'running' ? null : Date.now(),
        },
      });
      remember(id);
      const missed = restoring.events;
      restoring = null;
      for (const p of missed) get().handleClassifyEvent(p);
    } catch {
      // The host restarted and forgot the run: nothing to restore.
      restoring = null;
      remember(null);
    }
  },
  clearClassify() {
    remember(null);
    set({ classify: idle() });
  },
});
