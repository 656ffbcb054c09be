// API keys on a real data folder: shown once, stored only as hashes in a 0600 file, revocable,
// changed by one process at a time (eight `tatra api keys add` at once keep eight keys), listed
// with real tabs between fields, and a damaged file is one clear line for the operator.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { API_KEY_PREFIX, ApiKeyStore } from '../../../electron/service';
import { tatraCli } from '../../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The real, built `tatra` CLI (the unit project's global set-up builds it when stale), to the end. */
const tatra = tatraCli;

describe('ApiKeyStore', () => {
  it('keeps a hash, never the key, in a file only its owner reads', async () => {
    const store = new ApiKeyStore(join(dir, 'a'));
    const key = await store.add('ci');
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

  it('refuses a second key of the same name and a bad name; revokes by name', async () => {
    const store = new ApiKeyStore(join(dir, 'b'));
    const a = await store.add('one');
    const b = await store.add('two');
    expect(a).not.toBe(b);
    await expect(store.add('one')).rejects.toThrow(/already a key named "one"/);
    await expect(store.add('../x')).rejects.toThrow(UserError);
    await store.revoke('one');
    expect(store.verify(a)).toBeNull();
    expect(store.verify(b)).toBe('two');
    await expect(store.revoke('one')).rejects.toThrow(/no key named "one" \(there are: two\)/);
  });

  it('sees a key added by another process without being told', async () => {
    const path = join(dir, 'c');
    const server = new ApiKeyStore(path);
    expect(server.hasKeys()).toBe(false);
    const key = await new ApiKeyStore(path).add('later');
    expect(server.verify(key)).toBe('later');
  });

  it('says which file is damaged, and leaves it as it was', async () => {
    const store = new ApiKeyStore(join(dir, 'd'));
    await store.add('x');
    const damaged = '{"version":1,"keys":[{"name":"x"}]}';
    writeFileSync(store.path, damaged);
    expect(() => store.verify('tatra-anything')).toThrow(new RegExp(`${store.path.replace(/[/.]/g, '\\$&')} is damaged`));
    await expect(store.add('y')).rejects.toThrow(/is damaged/);
    expect(readFileSync(store.path, 'utf8')).toBe(damaged);
  });
});

describe('tatra api keys', () => {
  it('four processes adding ten keys each lose none of them', { timeout: 180_000 }, async () => {
    const data = join(dir, 'four');
    const tags = ['a', 'b', 'c', 'd'];
    const outputs = await Promise.all(tags.map((tag) => promisify(execFile)(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'keys.child.ts'), data, tag, '10'])));
    const store = new ApiKeyStore(data);
    expect(store.list().map((k) => k.name).sort()).toEqual(tags.flatMap((tag) => Array.from({ length: 10 }, (_, i) => `${tag}-${i}`)).sort());
    outputs.forEach(({ stdout }, t) => stdout.trim().split('\n').forEach((key, i) => expect(store.verify(key)).toBe(`${tags[t]}-${i}`)));
  });

  it('run eight times at once, keeps every key it printed', { timeout: 180_000 }, async () => {
    const data = join(dir, 'eight');
    const names = Array.from({ length: 8 }, (_, i) => `k${i}`);
    const printed = await Promise.all(names.map(async (name) => (await tatra(['api', 'keys', 'add', name, '--data-dir', data])).stdout.trim()));
    const store = new ApiKeyStore(data);
    expect(store.list().map((k) => k.name).sort()).toEqual(names);
    printed.forEach((key, i) => expect(store.verify(key), names[i]).toBe(names[i]));
  });

  it('list prints real tabs between name and creation time (cut -f1 works)', { timeout: 60_000 }, async () => {
    const data = join(dir, 'list');
    await new ApiKeyStore(data).add('first');
    await new ApiKeyStore(data).add('second');
    const { stdout } = await tatra(['api', 'keys', 'list', '--data-dir', data]);
    const rows = stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.map((r) => r[0])).toEqual(['first', 'second']);
    for (const r of rows) {
      expect(r).toHaveLength(2);
      expect(Number.isNaN(Date.parse(r[1]!))).toBe(false);
    }
    expect(stdout).not.toContain('\\u0009');
  });
});
