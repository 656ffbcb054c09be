// PLACEHOLDER written by the app helper so the store compiles; the models helper replaces this
// file. Contract: export `ModelsSlice` (its state and actions) and
// `createModelsSlice: SliceCreator<ModelsSlice>` (see ./types); the combined store spreads it in.
import type { SliceCreator } from './types';

export interface ModelsSlice {
  /** Bumped when the model library changes, so pickers re-read `models.list`. */
  modelsVersion: number;
}

export const createModelsSlice: SliceCreator<ModelsSlice> = () => ({ modelsVersion: 0 });
