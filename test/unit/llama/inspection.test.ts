// A GGUF file is inspected once per version: what a job records, what its resume compares and
// what the load reads are one inspection, until the file changes; node-llama-cpp's description
// of its header (what a fit estimate reads) alike.
import { copyFile, rm, utimes } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as gguf from '../../../electron/llama/gguf';
import { ownedTempDir } from '../../../electron/processes';
import { tinyModelPath } from '../../helpers/models';

const parsed = vi.hoisted(() => ({ paths: [] as string[], infos: [] as string[] }));
vi.mock('../../../electron/llama/gguf', async (importOriginal) => {
  const real = await importOriginal<typeof gguf>();
  return {
    ...real,
    inspectGguf: (path: string, opts?: Parameters<typeof real.inspectGguf>[1]) => {
      parsed.paths.push(path);
      return real.inspectGguf(path, opts);
    },
    readGgufInfo: (path: string) => {
      parsed.infos.push(path);
      return real.readGgufInfo(path);
    },
  };
});
const { inspectGgufOnce, readGgufInfoOnce } = await import('../../../electron/llama/inspection');

let dir: string;
let model: string;

beforeAll(async () => {
  dir = ownedTempDir('tatra-inspection-');
  model = join(dir, 'model.gguf');
  await copyFile(await tinyModelPath(), model);
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('inspectGgufOnce', () => {
  it('parses a file once however often and by whatever path it is asked for, and again once it changes', async () => {
    const first = await inspectGgufOnce(model);
    // A job's create, its resume's check and the load: the same inspection, parsed once.
    expect(await inspectGgufOnce(model)).toBe(first);
    const viaRelative = await inspectGgufOnce(relative(process.cwd(), model));
    expect(viaRelative).toEqual({ ...first, path: relative(process.cwd(), model) });
    expect(parsed.paths).toEqual([model]);

    // A new version of the file (here: a new modification time) is inspected afresh.
    const later = new Date(Date.now() + 60_000);
    await utimes(model, later, later);
    const again = await inspectGgufOnce(model);
    expect(again).not.toBe(first);
    expect(again.headerHash).toBe(first.headerHash);
    expect(parsed.paths).toEqual([model, model]);
  });

  it('keeps no refusal: a missing file is asked for again', async () => {
    const missing = join(dir, 'missing.gguf');
    await expect(inspectGgufOnce(missing)).rejects.toMatchObject({ code: 'gguf_missing' });
    await expect(inspectGgufOnce(missing)).rejects.toMatchObject({ code: 'gguf_missing' });
    expect(parsed.paths.filter((p) => p === missing)).toHaveLength(2);
  });

  it("reads node-llama-cpp's description of a header once per version too", async () => {
    const copy = join(dir, 'info.gguf');
    await copyFile(model, copy);
    const first = await readGgufInfoOnce(copy);
    // A picker asks for the fit of every model it shows, and again as the settings change.
    expect(await readGgufInfoOnce(copy)).toBe(first);
    expect(parsed.infos).toEqual([copy]);
    const later = new Date(Date.now() + 120_000);
    await utimes(copy, later, later);
    expect(await readGgufInfoOnce(copy)).not.toBe(first);
    expect(parsed.infos).toEqual([copy, copy]);
  });
});
