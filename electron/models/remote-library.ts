// Remote models in the library (`remote:NAME`): entries in <dataDir>/remote-models.json, and keys
// typed into the app in <dataDir>/remote-keys.json (mode 0600). In Electron the keys are encrypted
// with safeStorage (the `protect` hooks); in browser mode they stay on the server, in that file.
// A key never leaves this module except to the backend that sends it to its server: listings say
// only whether one is kept.
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../common/errors';
import { MAX_IN_FLIGHT, MaxInFlight, RemoteModelEntry, normaliseBaseUrl } from '../common/remote';
import type { RemoteLookup } from '../remote';
import { JsonFile } from '../state/json-file';

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
  private readonly entries: JsonFile<z.infer<typeof EntriesFile>>;
  // Created with mode 0600, so a key is never readable by others even for a moment.
  private readonly keys: JsonFile<z.infer<typeof KeysFile>>;

  constructor(
    readonly dataDir: string,
    private readonly protect?: KeyProtection,
  ) {
    this.entries = new JsonFile(join(dataDir, 'remote-models.json'), { schema: EntriesFile, empty: () => ({ remotes: [] }), code: 'library_invalid', mode: 0o644 });
    this.keys = new JsonFile(join(dataDir, 'remote-keys.json'), { schema: KeysFile, empty: () => ({ keys: {}, encrypted: this.protect !== undefined }), code: 'library_invalid', mode: 0o600 });
  }

  async list(): Promise<RemoteModelEntry[]> {
    return (await this.entries.read()).remotes;
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
    const file = await this.keys.read();
    const stored = file.keys[name];
    if (stored === undefined) return undefined;
    if (!file.encrypted) return stored;
    if (!this.protect) throw new UserError(`the key kept for remote:${name} is encrypted for the desktop app; type it again here`, 'remote_key_missing');
    return this.protect.decrypt(stored);
  }

  /** Adds or replaces an entry (and its typed key, if given). */
  async add(input: AddRemoteInput): Promise<RemoteModelEntry> {
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
    await this.entries.update(async (file) => {
      await this.writeKey(name, input.key);
      return { remotes: [...file.remotes.filter((e) => e.name !== name), entry].sort((a, b) => a.name.localeCompare(b.name)) };
    });
    return entry;
  }

  async remove(name: string): Promise<void> {
    await this.entries.update((file) => {
      if (!file.remotes.some((e) => e.name === name)) throw new UserError(`no remote model "${name}" in the library`, 'remote_unknown');
      return { remotes: file.remotes.filter((e) => e.name !== name) };
    });
    await this.writeKey(name, undefined);
  }

  // -------------------------------------------------------------------------------------------

  /** Sets (key given) or forgets (undefined) the typed key of `name`. */
  private async writeKey(name: string, key: string | undefined): Promise<void> {
    if (key === undefined && !(name in (await this.keys.read()).keys)) return;
    await this.keys.update((file) => {
      if (key === undefined) {
        const { [name]: _forgotten, ...keys } = file.keys;
        return { ...file, keys };
      }
      if (file.encrypted !== (this.protect !== undefined) && Object.keys(file.keys).length > 0) {
        throw new UserError('the stored keys were kept by another face of the app (desktop vs browser); remove and add those models again', 'remote_key_store');
      }
      return { encrypted: this.protect !== undefined, keys: { ...file.keys, [name]: this.protect ? this.protect.encrypt(key) : key } };
    });
  }
}
