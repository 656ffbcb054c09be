// settings.get / settings.set / app.info over the settings store (settings-store.ts).
import type { settingsMethods } from '../../common/contract/settings';
import type { HandlerGroup, HostDeps } from '../deps';

const VERSION = '0.1.0';

/**
 * The first model to arrive (downloaded, added, found in the library, connected) becomes the
 * generator and evaluator when none is chosen yet, and every open page is told: a newcomer's
 * first model is selected everywhere without a trip to each form. A choice already made stands.
 */
export async function adoptFirstModel(deps: HostDeps, model: string): Promise<void> {
  const store = deps.services.settings;
  const current = await store.read();
  if (current.generator) return;
  const saved = await store.write({ generator: model, evaluator: current.evaluator ?? model });
  deps.emit('settings.changed', saved);
}

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
