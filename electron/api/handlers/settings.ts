// settings.get / settings.set / app.info over the settings store (settings-store.ts).
import type { settingsMethods } from '../../common/contract/settings';
import type { HandlerGroup, HostDeps } from '../deps';

const VERSION = '0.1.0';

export function createSettingsHandlers(deps: HostDeps): HandlerGroup<typeof settingsMethods> {
  const store = deps.services.settings;
  return {
    handlers: {
      'settings.get': () => store.read(),
      'settings.set': async (patch) => {
        const saved = await store.write(patch);
        deps.emit('settings.changed', saved);
        return saved;
      },
      'app.info': async () => ({ version: VERSION, mode: deps.mode, dataDir: deps.dataDir, threads: deps.services.threads }),
    },
  };
}
