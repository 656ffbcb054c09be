// settings.get / settings.set / app.info. Settings are one JSON file in the data folder, written
// atomically (temp file + rename) so a crash mid-write never leaves a half file behind.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppSettings, type settingsMethods } from '../../common/contract/settings';
import { UserError } from '../../common/errors';
import type { HandlerGroup, HostDeps } from '../deps';

export const SETTINGS_FILE = 'settings.json';
const VERSION = '0.1.0';

export interface SettingsStore {
  read(): Promise<AppSettings>;
  write(patch: Partial<AppSettings>): Promise<AppSettings>;
}

export function createSettingsStore(dataDir: string): SettingsStore {
  const file = join(dataDir, SETTINGS_FILE);
  // Serialise writes so two quick settings.set calls cannot interleave read-modify-write.
  let chain: Promise<unknown> = Promise.resolve();
  const read = async (): Promise<AppSettings> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return AppSettings.parse({});
      throw new UserError(`cannot read ${file}: ${(e as Error).message}`, 'settings_unreadable');
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UserError(`${file} is not valid JSON; fix or delete it`, 'settings_invalid');
    }
    const parsed = AppSettings.safeParse(json);
    // A settings file from an older or hand-edited version should not lock the user out: keep
    // the fields that still parse and fall back to defaults for the rest.
    if (parsed.success) return parsed.data;
    const base = AppSettings.parse({});
    const obj = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
    for (const key of Object.keys(base) as (keyof AppSettings)[]) {
      const one = AppSettings.shape[key].safeParse(obj[key]);
      if (one.success) (base as Record<string, unknown>)[key] = one.data;
    }
    return base;
  };
  return {
    read,
    write(patch) {
      const next = chain.then(async () => {
        const merged = AppSettings.parse({ ...(await read()), ...patch });
        await mkdir(dataDir, { recursive: true });
        const tmp = `${file}.${process.pid}.tmp`;
        await writeFile(tmp, `${JSON.stringify(merged, null, 2)}\n`);
        await rename(tmp, file);
        return merged;
      });
      chain = next.catch(() => undefined);
      return next;
    },
  };
}

export function createSettingsHandlers(deps: HostDeps, store: SettingsStore): HandlerGroup<typeof settingsMethods> {
  return {
    handlers: {
      'settings.get': () => store.read(),
      'settings.set': async (patch) => {
        const saved = await store.write(patch);
        deps.emit('settings.changed', saved);
        return saved;
      },
      'app.info': async () => ({ version: VERSION, mode: deps.mode, dataDir: deps.dataDir, threads: deps.threads }),
    },
  };
}
