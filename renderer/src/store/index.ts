// The one zustand store, made of slices; event wiring from the API client into the slices.
import { create } from 'zustand';
import { getApi } from '../api/client';
import { modelLabel } from '../../../electron/common/model-spec';
import { createClassifySlice } from './classifySlice';
import { createExperimentsSlice } from './experimentsSlice';
import { createJobsSlice } from './jobsSlice';
import { createModelsSlice } from './modelsSlice';
import { createReviewSlice } from './reviewSlice';
import { createSettingsSlice } from './settingsSlice';
import { createTasksSlice } from './tasksSlice';
import type { Store } from './types';
import { createUiSlice } from './uiSlice';

export type { Store } from './types';

export function createAppStore() {
  return create<Store>()((...a) => ({
    ...createUiSlice(...a),
    ...createSettingsSlice(...a),
    ...createTasksSlice(...a),
    ...createClassifySlice(...a),
    ...createJobsSlice(...a),
    ...createModelsSlice(...a),
    ...createExperimentsSlice(...a),
    ...createReviewSlice(...a),
  }));
}

export const useStore = createAppStore();

/**
 * Routes the API's events into the store and refreshes what a dropped connection may have missed.
 * Returns the function that stops it.
 */
export function connectStore(store: typeof useStore = useStore): () => void {
  const api = getApi();
  let wasConnected = true;
  const offs = [
    api.on('classify.event', (p) => store.getState().handleClassifyEvent(p)),
    api.on('job.progress', (p) => store.getState().handleJobProgress(p)),
    api.on('job.status', (p) => store.getState().handleJobStatus(p)),
    // All long work is followed here, once, whatever view is open: evaluations, sweeps,
    // comparisons and downloads alike (a view never subscribes on its own).
    api.on('experiment.progress', (e) => store.getState().handleExperimentProgress(e)),
    api.on('download.progress', (d) => store.getState().handleDownloadProgress(d)),
    api.on('review.decided', (e) => store.getState().handleReviewDecided(e)),
    api.on('settings.changed', (s) => {
      const before = store.getState().settings;
      store.setState({ settings: s });
      // The first model has arrived and the host chose it for every form: say so once.
      if (before && !before.generator && s.generator) {
        const name = store.getState().library?.models.find((m) => m.path === s.generator)?.name ?? modelLabel(s.generator);
        store.getState().notify('success', `${name} is ready: chosen as generator and evaluator in every form.`);
      }
    }),
    api.onConnection((connected) => {
      store.getState().setConnected(connected);
      if (connected && !wasConnected) {
        void store.getState().loadJobs();
        void store.getState().loadExperiments();
        void store.getState().loadDownloads();
        void store.getState().restoreClassify();
        // Decisions made while the main process was away go now, in order.
        void store.getState().flushReviewOps();
      }
      wasConnected = connected;
    }),
  ];
  return () => offs.forEach((off) => off());
}
