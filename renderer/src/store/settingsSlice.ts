// The stored app settings: theme, last chosen models, TATRA settings to start from.
import type { AppSettings } from '../../../electron/common/contract/settings';
import { getApi, messageOf } from '../api/client';
import type { SliceCreator } from './types';

export interface SettingsSlice {
  settings: AppSettings | null;
  appInfo: { version: string; mode: string; dataDir: string; threads: number } | null;
  loadSettings(): Promise<void>;
  updateSettings(patch: Partial<AppSettings>): Promise<void>;
}

export const createSettingsSlice: SliceCreator<SettingsSlice> = (set, get) => ({
  settings: null,
  appInfo: null,
  async loadSettings() {
    try {
      const [settings, appInfo] = await Promise.all([getApi().call('settings.get', {}), getApi().call('app.info', {})]);
      set({ settings, appInfo, theme: settings.theme });
    } catch (e) {
      get().notify('error', `Could not load settings: ${messageOf(e)}`);
    }
  },
  async updateSettings(patch) {
    const current = get().settings;
    if (current) set({ settings: { ...current, ...patch } });
    try {
      set({ settings: await getApi().call('settings.set', patch) });
    } catch (e) {
      get().notify('error', `Could not save settings: ${messageOf(e)}`);
    }
  },
});
