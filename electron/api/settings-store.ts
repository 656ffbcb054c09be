// The app's stored settings: one JSON file in the data folder, written atomically (temp file +
// rename) so a crash mid-write never leaves a half file behind. Opened by the composition root
// (services.ts); `settings.get` / `settings.set` serve it.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppSettings } from '../common/contract/settings';
import { UserError } from '../common/errors';

export const SETTINGS_FILE = 'settings.json';

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
