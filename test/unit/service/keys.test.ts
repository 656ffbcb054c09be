// API keys on a real data folder: shown once, stored only as hashes in a 0600 file, revocable,
// and a damaged file is one clear line.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { API_KEY_PREFIX, ApiKeyStore } from '../../../electron/service';

const dir = mkdtempSync(join(tmpdir(), 'tatra-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ApiKeyStore', () => {
  it('keeps a hash, never the key, in a file only its owner reads', () => {
    const store = new ApiKeyStore(join(dir, 'a'));
    const key = store.add('ci');
    expect(key.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(key.length).toBeGreaterThan(40);
    const text = readFileSync(store.path, 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 12));
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(store.verify(key)).toBe('ci');
    expect(store.verify(`${key}x`)).toBeNull();
    expect(store.list()).toEqual([{ name: 'ci', createdAt: expect.any(String) }]);
  });

  it('refuses a second key of the same name and a bad name; revokes by name', () => {
    const store = new ApiKeyStore(join(dir, 'b'));
    const a = store.add('one');
    const b = store.add('two');
    expect(a).not.toBe(b);
    expect(() => store.add('one')).toThrow(/already a key named "one"/);
    expect(() => store.add('../x')).toThrow(UserError);
    store.revoke('one');
    expect(store.verify(a)).toBeNull();
    expect(store.verify(b)).toBe('two');
    expect(() => store.revoke('one')).toThrow(/no key named "one" \(there are: two\)/);
  });

  it('sees a key added by another process without being told', () => {
    const path = join(dir, 'c');
    const server = new ApiKeyStore(path);
    expect(server.hasKeys()).toBe(false);
    const key = new ApiKeyStore(path).add('later');
    expect(server.verify(key)).toBe('later');
  });

  it('says which file is damaged', () => {
    const store = new ApiKeyStore(join(dir, 'd'));
    store.add('x');
    writeFileSync(store.path, '{"version":1,"keys":[{"name":"x"}]}');
    expect(() => store.verify('tatra-anything')).toThrow(new RegExp(`${store.path.replace(/[/.]/g, '\\$&')} is damaged`));
  });
});
