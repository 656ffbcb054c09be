// Remote models in the library (`remote:NAME`): entries in <dataDir>/remote-models.json, and keys
// typed into the app in <dataDir>/remote-keys.json (mode 0600). In Electron the keys are encrypted
// with safeStorage (the `protect` hooks); in browser mode they stay on the server, in that file.
// A key never leaves this module except to the backend that sends it to its server: listings say
// only whether one is kept.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError, errorMessage } from '../common/errors';
import { MAX_IN_FLIGHT, MaxInFlight, RemoteModelEntry, normaliseBaseUrl } from '../common/remote';
import type { RemoteLookup } from '../remote';

const EntriesFile = z.object({ remotes: z.array(RemoteModelEntry).default([]) });
const KeysFile = z.object({ keys: z.record(z.string(), z.string()).default({}), encrypted: z.boolean().default(false) });

/** How stored keys are protected at rest (Electron: safeStorage). Absent: kept as is in a 0600 file. */
export interface KeyProtection {
  encrypt(plain: string): string;
  decrypt(stored: string): string;
}

export interface AddRemoteInput {
  name: string;
  urls: string[];
  model: string;
  keyEnv?: string;
  /** A key typed into the app; kept server-side. */
  key?: string;
  kind?: RemoteModelEntry['kind'];
  constrained?: RemoteModelEntry['constrained'];
  /** Requests in flight per endpoint at most (default: what the server's kind takes). */
  maxInFlight?: number;
}

export class RemoteLibrary implements RemoteLookup {
  private readonly entriesPath: string;
  private readonly keysPath: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dataDir: string,
    private readonly protect?: KeyProtection,
  ) {
    this.entriesPath = join(dataDir, 'remote-models.json');
    this.keysPath = join(dataDir, 'remote-keys.json');
  }

  async list(): Promise<RemoteModelEntry[]> {
    return (await this.readEntries()).remotes;
  }

  async entry(name: string): Promise<RemoteModelEntry> {
    const entries = await this.list();
    const found = entries.find((e) => e.name === name);
    if (!found) {
      const names = entries.map((e) => `remote:${e.name}`).join(', ');
      throw new UserError(`no remote model "${name}" in the library${names ? ` (there are: ${names})` : ''}; add it with "tatra models add-remote ${name} --url URL --model MODEL"`, 'remote_unknown');
    }
    return found;
  }

  async storedKey(name: string): Promise<string | undefined> {
    const file = await this.readKeys();
    const stored = file.keys[name];
    if (stored === undefined) return undefined;
    if (!file.encrypted) return stored;
    if (!this.protect) throw new UserError(`the key kept for remote:${name} is encrypted for the desktop app; type it again here`, 'remote_key_missing');
    return this.protect.decrypt(stored);
  }

  /** Adds or replaces an entry (and its typed key, if given). */
  add(input: AddRemoteInput): Promise<RemoteModelEntry> {
    return this.serial(async () => {
      const name = input.name.trim();
      if (!RemoteModelEntry.shape.name.safeParse(name).success) throw new UserError(`"${input.name}" is not a valid name (letters, digits, . _ -, up to 64)`, 'remote_bad_name');
      if (input.urls.length === 0) throw new UserError('give at least one --url', 'remote_bad_url');
      const urls = [...new Set(input.urls.map(normaliseBaseUrl))];
      if (input.model.trim() === '') throw new UserError('give the model name with --model', 'remote_bad_spec');
      if (input.keyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(input.keyEnv)) throw new UserError(`--key-env "${input.keyEnv}" is not an environment variable name`, 'remote_bad_spec');
      if (input.key !== undefined && input.keyEnv !== undefined) throw new UserError('give the key either as an environment variable or typed, not both', 'remote_bad_spec');
      if (input.maxInFlight !== undefined && !MaxInFlight.safeParse(input.maxInFlight).success) {
        throw new UserError(`requests in flight must be a whole number from ${MAX_IN_FLIGHT.min} to ${MAX_IN_FLIGHT.max} (got ${input.maxInFlight})`, 'remote_bad_spec');
      }
      const entry: RemoteModelEntry = {
        name,
        urls,
        model: input.model.trim(),
        ...(input.keyEnv ? { keyEnv: input.keyEnv } : {}),
        ...(input.key ? { keyStored: true } : {}),
        ...(input.kind ? { kind: input.kind } : {}),
        ...(input.constrained ? { constrained: input.constrained } : {}),
        ...(input.maxInFlight !== undefined ? { maxInFlight: input.maxInFlight } : {}),
      };
      const file = await this.readEntries();
      file.remotes = [...file.remotes.filter((e) => e.name !== name), entry].sort((a, b) => a.name.localeCompare(b.name));
      await this.writeKey(name, input.key);
      await this.writeJson(this.entriesPath, file, 0o644);
      return entry;
    });
  }

  remove(name: string): Promise<void> {
    return this.serial(async () => {
      const file = await this.readEntries();
      if (!file.remotes.some((e) => e.name === name)) throw new UserError(`no remote model "${name}" in the library`, 'remote_unknown');
      file.remotes = file.remotes.filter((e) => e.name !== name);
      await this.writeJson(this.entriesPath, file, 0o644);
      await this.writeKey(name, undefined);
    });
  }

  // -------------------------------------------------------------------------------------------

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async readEntries(): Promise<z.infer<typeof EntriesFile>> {
    return this.readJson(this.entriesPath, EntriesFile, { remotes: [] });
  }

  private async readKeys(): Promise<z.infer<typeof KeysFile>> {
    return this.readJson(this.keysPath, KeysFile, { keys: {}, encrypted: this.protect !== undefined });
  }

  private async readJson<T>(path: string, schema: z.ZodType<T>, empty: T): Promise<T> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      return empty;
    }
    try {
      return schema.parse(JSON.parse(text));
    } catch (e) {
      throw new UserError(`${path} is damaged (${errorMessage(e).split('\n')[0]}); fix or delete it`, 'library_invalid');
    }
  }

  /** Sets (key given) or forgets (undefined) the typed key of `name`. */
  private async writeKey(name: string, key: string | undefined): Promise<void> {
    const file = await this.readKeys();
    if (key === undefined) {
      if (!(name in file.keys)) return;
      delete file.keys[name];
    } else {
      if (file.encrypted !== (this.protect !== undefined) && Object.keys(file.keys).length > 0) {
        throw new UserError('the stored keys were kept by another face of the app (desktop vs browser); remove and add those models again', 'remote_key_store');
      }
      file.encrypted = this.protect !== undefined;
      file.keys[name] = this.protect ? this.protect.encrypt(key) : key;
    }
    await this.writeJson(this.keysPath, file, 0o600);
  }

  private async writeJson(path: string, value: unknown, mode: number): Promise<void> {
    await mkdir(this.dataDir, { recursive: true });
    const tmp = `${path}.tmp-${process.pid}`;
    // Created with its final mode, so a key is never readable by others even for a moment.
    await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode });
    await chmod(tmp, mode);
    await rename(tmp, path);
  }
}
