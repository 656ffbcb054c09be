// The app's stored settings: one JSON file in the data folder (state/json-file.ts: checked on read,
// written atomically, changes serialised across processes). Opened by the composition root
// (services.ts); `settings.get` / `settings.set` serve it.
import { join } from 'node:path';
import { AppSettings } from '../common/contract/settings';
import { JsonFile } from '../state/json-file';

export const SETTINGS_FILE = 'settings.json';

export interface SettingsStore {
  read(): Promise<AppSettings>;
  write(patch: Partial<AppSettings>): Promise<AppSettings>;
}

export function createSettingsStore(dataDir: string): SettingsStore {
  const file = new JsonFile(join(dataDir, SETTINGS_FILE), {
    schema: AppSettings,
    empty: () => AppSettings.parse({}),
    code: 'settings_invalid',
    hint: '(deleting it restores the default settings)',
  });
  return {
    read: () => file.read(),
    write: (patch) => file.update((current) => AppSettings.parse({ ...current, ...patch })),
  };
}
