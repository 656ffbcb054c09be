// Where TATRA Studio keeps its state. One data folder holds the job database, user tasks and
// settings; the CLI, `tatra serve` and the desktop app share it unless told otherwise.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Data folder: explicit option, else $TATRA_DATA_DIR, else ~/.tatra-studio. Electron passes app.getPath('userData'). */
export function resolveDataDir(explicit?: string): string {
  if (explicit) return resolve(explicit);
  if (process.env.TATRA_DATA_DIR) return resolve(process.env.TATRA_DATA_DIR);
  return join(homedir(), '.tatra-studio');
}

/** The project (or packaged app) root: the folder holding tasks/ and models/. */
export function appRoot(): string {
  if (process.env.TATRA_APP_ROOT) return resolve(process.env.TATRA_APP_ROOT);
  // Bundled files live in dist/ or dist/electron/; sources in electron/. Walk up to package.json's folder.
  const here = fileURLToPath(new URL('.', import.meta.url));
  for (const up of ['..', '../..', '.']) {
    const candidate = resolve(here, up);
    if (candidate.endsWith('dist') || candidate.endsWith('electron')) continue;
    return candidate;
  }
  return resolve(here, '..');
}

/** Per-user cache (what can be worked out again): $TATRA_CACHE_DIR, else $XDG_CACHE_HOME/tatra-studio, else ~/.cache/tatra-studio. */
export function userCacheDir(): string {
  if (process.env.TATRA_CACHE_DIR) return resolve(process.env.TATRA_CACHE_DIR);
  return join(process.env.XDG_CACHE_HOME ? resolve(process.env.XDG_CACHE_HOME) : join(homedir(), '.cache'), 'tatra-studio');
}

/**
 * Default folder for GGUF files. $TATRA_MODELS_DIR wins: a packaged app sets it to a writable
 * folder under userData, because models/ inside app.asar is read-only.
 */
export function defaultModelsDir(): string {
  if (process.env.TATRA_MODELS_DIR) return resolve(process.env.TATRA_MODELS_DIR);
  return join(appRoot(), 'models');
}
