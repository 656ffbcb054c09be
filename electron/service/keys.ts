// API keys of `tatra api`: <dataDir>/api-keys.json (mode 0600) holds a name, a creation time and
// the SHA-256 of each key, never the key itself; `tatra api keys add` shows a new key once. A key is
// 32 random bytes, so a fast hash is enough: there is no password to guess, and a slow one would
// cost every request. The running service notices a key added or revoked by the next request (the
// file's size and mtime are checked on each), so no restart is needed to revoke one. The file is
// one small-state file (state/json-file.ts): a change waits for every other writer, in any
// process, and is written atomically, so eight `tatra api keys add` at once keep eight keys.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../common/errors';
import { JsonFile } from '../state/json-file';

export const API_KEYS_FILE = 'api-keys.json';
/** What every key starts with, so one found in a file or a log is recognisable (and revocable). */
export const API_KEY_PREFIX = 'tatra-';

const KeyName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/);

const StoredKey = z.object({
  name: KeyName,
  /** Hex SHA-256 of the whole key. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: z.string(),
});
const KeysFile = z.object({ version: z.literal(1), keys: z.array(StoredKey) });
type KeysFile = z.infer<typeof KeysFile>;

export interface ApiKeyInfo {
  name: string;
  createdAt: string;
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export class ApiKeyStore {
  readonly path: string;
  private readonly file: JsonFile<KeysFile>;
  private loaded: { stamp: string; keys: { name: string; sha256: Buffer }[] } | null = null;

  constructor(readonly dataDir: string) {
    this.path = join(dataDir, API_KEYS_FILE);
    this.file = new JsonFile(this.path, {
      schema: KeysFile,
      empty: () => ({ version: 1, keys: [] }),
      code: 'keys_invalid',
      hint: '(and add the keys again)',
      // The hashes are not secrets, but the names and times are nobody else's.
      mode: 0o600,
    });
  }

  /** Creates a key named `name` and returns it: the only time it is ever shown. */
  async add(name: string): Promise<string> {
    if (!KeyName.safeParse(name).success) throw new UserError(`"${name}" is not a key name (letters, digits, . _ -, up to 64)`, 'key_bad_name');
    const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    await this.file.update((file) => {
      if (file.keys.some((k) => k.name === name)) throw new UserError(`there is already a key named "${name}"; revoke it first or pick another name`, 'key_exists');
      return { ...file, keys: [...file.keys, { name, sha256: digest(key).toString('hex'), createdAt: new Date().toISOString() }] };
    });
    this.loaded = null;
    return key;
  }

  list(): ApiKeyInfo[] {
    return this.file.readSync().keys.map(({ name, createdAt }) => ({ name, createdAt }));
  }

  async revoke(name: string): Promise<void> {
    await this.file.update((file) => {
      if (!file.keys.some((k) => k.name === name)) {
        const names = file.keys.map((k) => k.name).join(', ');
        throw new UserError(`no key named "${name}"${names ? ` (there are: ${names})` : ' (there are none)'}`, 'key_unknown');
      }
      return { ...file, keys: file.keys.filter((k) => k.name !== name) };
    });
    this.loaded = null;
  }

  /**
   * The name of the key `presented` is, or null. Every stored hash is compared in constant time.
   * A damaged or unreadable file throws its one line (UserError `keys_invalid` / `state_unreadable`).
   */
  verify(presented: string): string | null {
    const keys = this.current();
    const given = digest(presented);
    let match: string | null = null;
    for (const k of keys) if (timingSafeEqual(k.sha256, given)) match ??= k.name;
    return match;
  }

  /** Whether any key exists (a service without one answers every /v1 request 401). */
  hasKeys(): boolean {
    return this.current().length > 0;
  }

  private current(): { name: string; sha256: Buffer }[] {
    let stamp = 'absent';
    try {
      const st = statSync(this.path);
      stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {
      // no file: no keys
    }
    if (this.loaded?.stamp !== stamp) {
      const keys = stamp === 'absent' ? [] : this.file.readSync().keys.map((k) => ({ name: k.name, sha256: Buffer.from(k.sha256, 'hex') }));
      this.loaded = { stamp, keys };
    }
    return this.loaded.keys;
  }
}
