// A permission error is not a missing file (common/env-errors.ts ifMissing). Where a stat, lstat
// or realpath failure used to read as "nothing there", an EACCES now comes through, and the faces
// word it as "cannot use PATH: permission denied". Tests run as root here, where chmod cannot deny
// anything, so the file system answers EACCES for paths under DENIED.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { environmentError, ifMissing } from '../../../electron/common/env-errors';

const dir = mkdtempSync(join(tmpdir(), 'tatra-missing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DENIED = join(dir, 'denied');

function errno(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${path}`), { code, path });
}

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof fsPromises>();
  const deny =
    <A extends unknown[], R>(f: (path: string, ...rest: A) => Promise<R>) =>
    (path: string, ...rest: A): Promise<R> =>
      String(path).startsWith(DENIED) ? Promise.reject(errno('EACCES', String(path))) : f(path, ...rest);
  return { ...real, stat: deny(real.stat as never), lstat: deny(real.lstat as never), realpath: deny(real.realpath as never) };
});

const { outputFolder } = await import('../../../electron/cli/options');
const { writeAtomically } = await import('../../../electron/jobs/export');
const { JobManager, openJobStore, plainModelRef } = await import('../../../electron/jobs');

/** The line a face shows for `e` (cli/index.ts, api/errors.ts). */
async function lineOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).not.toBeNull();
  return environmentError(e)?.message ?? (e as Error).message;
}

describe('ifMissing', () => {
  it('reads ENOENT and ENOTDIR as the value given, and throws anything else on', () => {
    expect(ifMissing(null)(errno('ENOENT', '/x'))).toBeNull();
    expect(ifMissing('fallback')(errno('ENOTDIR', '/x/y'))).toBe('fallback');
    expect(() => ifMissing(null)(errno('EACCES', '/x'))).toThrow(/EACCES/);
    expect(() => ifMissing(null)(new Error('not an errno'))).toThrow(/not an errno/);
  });
});

describe('a folder that cannot be read is not a missing one', () => {
  it('tatra eval --out: the folder is said unreadable, not created over', async () => {
    expect(await lineOf(outputFolder(join(DENIED, 'out'), 'eval writes its exports there'))).toBe(`cannot use ${join(DENIED, 'out')}: permission denied`);
    // A missing one is still made.
    expect(await outputFolder(join(dir, 'made'), 'exports')).toBe(join(dir, 'made'));
  });

  it('an export whose target cannot be looked at is refused, not written as if nothing were there', async () => {
    const target = join(DENIED, 'job.csv');
    expect(await lineOf(writeAtomically(target, async (write) => write('a\n')))).toBe(`cannot use ${target}: permission denied`);
  });

  it("jobs export into a folder that cannot be read says so, where it said the folder does not exist", async () => {
    const data = join(dir, 'rows.csv');
    writeFileSync(data, 'text,label\n"a good film",1\n');
    const store = openJobStore(join(dir, 'data'));
    try {
      const manager = new JobManager({ store, backends: { acquire: async () => Promise.reject(new Error('no model in this test')) }, inspectModel: plainModelRef });
      const job = await manager.create({ task: 'sst2', settings: { n: 0, k: 0, r: 1, seed: 1, scope: 'input' }, generatorPath: 'g.gguf', evaluatorPath: 'e.gguf', dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } } });
      const out = join(DENIED, 'job.csv');
      const line = await lineOf(manager.export(job.id, 'csv', out));
      expect(line).not.toMatch(/does not exist/);
      expect(line).toBe(`cannot use ${out}: permission denied`);
      // A folder that is not there is still said so.
      expect(await lineOf(manager.export(job.id, 'csv', join(dir, 'nowhere', 'job.csv')))).toMatch(/the folder .*nowhere does not exist/);
    } finally {
      store.close();
    }
  });
});
