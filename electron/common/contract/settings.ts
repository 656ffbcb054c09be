// App settings (stored as JSON in the data folder) and facts about the running host.
import { z } from 'zod';
import { DEFAULT_SETTINGS, TatraSettings } from '../tatra';
import { method } from './define';

export const Theme = z.enum(['system', 'light', 'dark']);

export const AppSettings = z.object({
  theme: Theme.default('system'),
  /** Model last chosen as generator / evaluator (GGUF paths). */
  generator: z.string().nullable().default(null),
  evaluator: z.string().nullable().default(null),
  /** TATRA settings the Classify and Evaluate views start from. */
  tatra: TatraSettings.default(DEFAULT_SETTINGS),
  /** Extra folders the model library scans. */
  modelsDirs: z.array(z.string()).default([]),
});
export type AppSettings = z.infer<typeof AppSettings>;

export const AppInfo = z.object({
  version: z.string(),
  /** Which face serves the API. */
  mode: z.enum(['electron', 'browser', 'test']),
  dataDir: z.string(),
  threads: z.number().int(),
});
export type AppInfo = z.infer<typeof AppInfo>;

export const settingsMethods = {
  'settings.get': method(z.object({}).default({}), AppSettings),
  /** Merges the given fields into the stored settings and returns the result. */
  'settings.set': method(AppSettings.partial(), AppSettings),
  'app.info': method(z.object({}).default({}), AppInfo),
};

export const settingsEvents = {
  'settings.changed': AppSettings,
};
