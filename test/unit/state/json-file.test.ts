// The one small-state store (electron/state/json-file.ts): concurrent updates from several
// processes lose nothing, a damaged file is one plain line naming it and is never overwritten,
// what is written is checked, and a FIFO in a state file's place does not block the reader.
import { execFile } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UserError } from '../../../electron/common/errors';
import { JsonFile } from '../../../electron/state/json-file';

const Entries = z.object({ entries: z.array(z.string()) });
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-state-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const entries = (path: string) => new JsonFile(path, { schema: Entries, empty: () => ({ entries: [] }) });

describe('JsonFile', () => {
  it('loses no update when several processes change the file at once', async () => {
    const path = join(dir, 'state.json');
    const children = ['a', 'b', 'c', 'd'];
    const perChild = 15;
    await Promise.all(
      children.map((tag) => promisify(execFile)(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'json-file.child.ts'), path, tag, String(perChild)])),
    );
    const written = (await entries(path).read()).entries;
    expect(written).toHaveLength(children.length * perChild);
    expect(new Set(written)).toEqual(new Set(children.flatMap((tag) => Array.from({ length: perChild }, (_, i) => `${tag}-${i}`))));
    // Each process's own updates kept their order; no temp file or lock is left behind.
    for (const tag of children) expect(written.filter((e) => e.startsWith(`${tag}-`))).toEqual(Array.from({ length: perChild }, (_, i) => `${tag}-${i}`));
    expect(await readdir(dir)).toEqual(['state.json']);
  });

  it('loses no update made at once in one process, through two objects on the same file', async () => {
    const path = join(dir, 'state.json');
    const [one, two] = [entries(path), entries(path)];
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).update((v) => ({ entries: [...v.entries, String(i)] }))));
    expect((await one.read()).entries.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('reads a missing file as empty and creates its folder on the first write', async () => {
    const file = entries(join(dir, 'deeper', 'state.json'));
    expect(await file.read()).toEqual({ entries: [] });
    expect(file.readSync()).toEqual({ entries: [] });
    await file.update((v) => ({ entries: [...v.entries, 'x'] }));
    expect(JSON.parse(await readFile(file.path, 'utf8'))).toEqual({ entries: ['x'] });
  });

  it.each([
    ['not JSON', '{"entries": ["a",', /is not valid JSON/],
    ['the wrong shape', '{"entries": [1]}', /is damaged \(entries\.0: /],
  ])('a file that is %s is one plain line naming it, and is never reset by a write', async (_what, text, reason) => {
    const path = join(dir, 'state.json');
    await writeFile(path, text);
    const file = new JsonFile(path, { schema: Entries, empty: () => ({ entries: [] }), code: 'things_invalid', hint: '(the things are listed again)' });
    for (const attempt of [() => file.read(), () => Promise.resolve().then(() => file.readSync()), () => file.update((v) => v)]) {
      const error = await attempt().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UserError);
      const { message, code } = error as UserError;
      expect(message).not.toContain('\n');
      expect(message.startsWith(`${path} `)).toBe(true);
      expect(message).toMatch(reason);
      expect(message).toMatch(/fix or delete it \(the things are listed again\)$/);
      expect(code).toBe('things_invalid');
    }
    expect(await readFile(path, 'utf8')).toBe(text);
  });

  it('refuses to write what its schema refuses, leaving the file as it was', async () => {
    const file = entries(join(dir, 'state.json'));
    await file.write({ entries: ['kept'] });
    await expect(file.update(() => ({ entries: [3] }) as unknown as z.infer<typeof Entries>)).rejects.toThrow();
    expect(await file.read()).toEqual({ entries: ['kept'] });
    // The queue goes on after a failed update.
    await file.update((v) => ({ entries: [...v.entries, 'next'] }));
    expect(await file.read()).toEqual({ entries: ['kept', 'next'] });
  });

  it('creates a file with its mode and keeps it across writes', async () => {
    const file = new JsonFile(join(dir, 'keys.json'), { schema: Entries, empty: () => ({ entries: [] }), mode: 0o600 });
    await file.write({ entries: ['k'] });
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
    await file.write({ entries: ['k', 'l'] });
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
  });

  it.skipIf(process.platform === 'win32')('a named pipe in its place is refused at once, not waited on', async () => {
    const path = join(dir, 'state.json');
    execFileSync('mkfifo', [path]);
    const file = entries(path);
    await expect(file.read()).rejects.toThrow(/cannot be read: .*named pipe/);
    expect(() => file.readSync()).toThrow(/cannot be read: .*not a regular file/);
  });
});
