// The one store's shape and the slice-creator type every `createXSlice(set, get)` uses.
import type { StateCreator } from 'zustand';
import type { ClassifySlice } from './classifySlice';
import type { ExperimentsSlice } from './experimentsSlice';
import type { JobsSlice } from './jobsSlice';
import type { ModelsSlice } from './modelsSlice';
import type { ReviewSlice } from './reviewSlice';
import type { SettingsSlice } from './settingsSlice';
import type { TasksSlice } from './tasksSlice';
import type { UiSlice } from './uiSlice';

export type Store = UiSlice & SettingsSlice & TasksSlice & ClassifySlice & JobsSlice & ModelsSlice & ExperimentsSlice & ReviewSlice;
export type SliceCreator<T> = StateCreator<Store, [], [], T>;
export type SetState = Parameters<SliceCreator<unknown>>[0];
export type GetState = Parameters<SliceCreator<unknown>>[1];
