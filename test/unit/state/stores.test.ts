// Every small state file goes through the one store (state/json-file.ts): a damaged file is one
// plain line naming it and is left as it was (calibration.json was silently emptied by the next
// calibration; settings.json's bad fields were silently reset to defaults), and writes keep what
// another writer added.
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSettingsStore } from '../../../electron/api/settings-store';
import { readCalibration, writeCalibration } from '../../../electron/jobs/plan';
import { FileVersionCache } from '../../../electron/llama/file-versions';
import { ModelLibrary } from '../../../electron/models/library';
import { RemoteLibrary } from '../../../electron/models/remote-library';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-stores-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The one line a damaged `name` gives, after checking it is one line that names the file. */
async function damagedLine(name: string, text: string, use: () => Promise<unknown>): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  const error = await use().then(
    () => null,
    (e: unknown) => e as Error,
  );
  expect(error?.name).toBe('UserError');
  expect(error!.message).not.toContain('\n');
  expect(error!.message).toContain(path);
  expect(error!.message).toMatch(/fix or delete it/);
  expect(await readFile(path, 'utf8')).toBe(text);
  return error!.message;
}

describe('the small state files', () => {
  it('settings.json: a bad field is one line naming the file, not a silent reset of that field', async () => {
    const settings = createSettingsStore(dir);
    await damagedLine('settings.json', '{"theme": "purple", "generator": "/m/gen.gguf"}', () => settings.read());
    await damagedLine('settings.json', '{"theme": "purple"}', () => settings.write({ theme: 'dark' }));
    await writeFile(join(dir, 'settings.json'), '{"generator": "/m/gen.gguf"}');
    // Two quick sets from the page both stay.
    await Promise.all([settings.write({ theme: 'dark' }), settings.write({ evaluator: '/m/ev.gguf' })]);
    expect(await settings.read()).toMatchObject({ theme: 'dark', generator: '/m/gen.gguf', evaluator: '/m/ev.gguf' });
  });

  it('library.json and remote-models.json: a damaged file is one line naming it', async () => {
    const library = new ModelLibrary(dir, { defaultDir: join(dir, 'models') });
    expect(await damagedLine('library.json', '{"folders": "x"}', () => library.list())).toMatch(/is damaged \(folders: /);
    await damagedLine('library.json', '{"folders": "x"}', () => library.addFolder(dir));
    const remotes = new RemoteLibrary(dir);
    await damagedLine('remote-models.json', 'not json', () => remotes.list());
    await damagedLine('remote-models.json', 'not json', () => remotes.add({ name: 'x', urls: ['http://127.0.0.1:1'], model: 'm' }));
  });

  it('remote-keys.json is created 0600 and forgets a removed model’s key', async () => {
    const remotes = new RemoteLibrary(dir);
    await remotes.add({ name: 'a', urls: ['http://127.0.0.1:1'], model: 'm', key: 'sk-a' });
    await remotes.add({ name: 'b', urls: ['http://127.0.0.1:2'], model: 'm', key: 'sk-b' });
    expect((await stat(join(dir, 'remote-keys.json'))).mode & 0o777).toBe(0o600);
    await remotes.remove('a');
    expect(await remotes.storedKey('a')).toBeUndefined();
    expect(await remotes.storedKey('b')).toBe('sk-b');
    expect((await remotes.list()).map((e) => e.name)).toEqual(['b']);
  });

  it('calibration.json: a damaged file is one line, and a new calibration never empties it', async () => {
    const key = JSON.stringify(['gen', 'ev', 2, 4]);
    // Before, the damaged file read as "no calibration" and the next one replaced it with just itself.
    await damagedLine('calibration.json', '{"other": {"tokensPerSecond": "fast"}}', () => readCalibration(dir, key));
    await damagedLine('calibration.json', '{"other": {"tokensPerSecond": "fast"}}', () => writeCalibration(dir, key, 100, 2));
    await rm(join(dir, 'calibration.json'));
    const other = JSON.stringify(['gen', 'ev', 1, 1]);
    await Promise.all([writeCalibration(dir, key, 100, 2), writeCalibration(dir, other, 30, 3)]);
    expect((await readCalibration(dir, key))?.tokensPerSecond).toBe(50);
    expect((await readCalibration(dir, other))?.tokensPerSecond).toBe(10);
  });

  it('file-version facts: two caches on one file keep each other’s facts; a damaged one is one line', async () => {
    const previous = process.env.TATRA_CACHE_DIR;
    process.env.TATRA_CACHE_DIR = dir;
    try {
      // Two processes' caches of the same file, as two objects: before, each wrote only what it held.
      const one = new FileVersionCache('facts.json', z.number());
      const two = new FileVersionCache('facts.json', z.number());
      await one.set('a', 1);
      await two.set('b', 2);
      expect(await new FileVersionCache('facts.json', z.number()).get('a')).toBe(1);
      expect(JSON.parse(await readFile(join(dir, 'facts.json'), 'utf8'))).toEqual([
        ['a', 1],
        ['b', 2],
      ]);
      const line = await damagedLine('facts.json', '[["a", "one"]]', () => new FileVersionCache('facts.json', z.number()).get('a'));
      expect(line).toMatch(/a cache: what it held is worked out again/);
    } finally {
      if (previous === undefined) delete process.env.TATRA_CACHE_DIR;
      else process.env.TATRA_CACHE_DIR = previous;
    }
  });

  it('file-version facts follow the cache folder: what one folder holds is neither answered from nor written to another', async () => {
    const previous = process.env.TATRA_CACHE_DIR;
    const cache = new FileVersionCache('follow.json', z.number());
    try {
      process.env.TATRA_CACHE_DIR = join(dir, 'first');
      await cache.set('a', 1);
      expect(await cache.get('a')).toBe(1);
      process.env.TATRA_CACHE_DIR = join(dir, 'second');
      // Before, the fact in memory answered for the second folder, and its next write carried it there.
      expect(await cache.get('a')).toBeUndefined();
      await cache.set('b', 2);
      expect(JSON.parse(await readFile(join(dir, 'second', 'follow.json'), 'utf8'))).toEqual([['b', 2]]);
      process.env.TATRA_CACHE_DIR = join(dir, 'first');
      expect(await cache.get('a')).toBe(1);
      expect(await cache.get('b')).toBeUndefined();
    } finally {
      if (previous === undefined) delete process.env.TATRA_CACHE_DIR;
      else process.env.TATRA_CACHE_DIR = previous;
    }
  });
});
