// Rules that used to be tests reading source text, now lint rules (eslint.config.js): each bad
// line below is linted as if written in that file and must be reported; the good ones must not.
import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const eslint = new ESLint({ cwd: root });

async function messages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-syntax' || m.ruleId === null).map((m) => m.message);
}

const BYTES = /formatBytes \(electron\/common\/bytes\.ts\)/;

describe('one byte formatter', () => {
  it.each([
    ['electron/cli/commands/x.ts', 'export const x = (n: number) => `${(n / 1024 ** 3).toFixed(1)} GB`;'],
    ['electron/models/x.ts', "export const x = (n: number) => (n / 1e9).toFixed(1) + ' GB';"],
    ['electron/llama/x.ts', 'export const x = (n: number) => `past ${n / 1024 / 1024} MiB`;'],
    ['renderer/src/views/x.tsx', "export const x = (n: number) => [n / 1024 ** 2, 'MB'];"],
  ])('%s: its own size arithmetic or unit is reported', async (file, code) => {
    expect(await messages(file, code)).toEqual(expect.arrayContaining([expect.stringMatching(BYTES)]));
  });

  it.each([
    ['electron/cli/commands/x.ts', "import { formatBytes } from '../../common/bytes';\nexport const x = (n: number) => formatBytes(n);"],
    ['electron/common/plan.ts', 'export const x = (tokens: number, perMillion: number) => (tokens / 1e6) * perMillion;'],
    ['electron/common/bytes.ts', "export const UNITS = ['B', 'KiB', 'MiB', 'GiB'];\nexport const x = 1024 ** 2;"],
  ])('%s: passes', async (file, code) => {
    expect(await messages(file, code)).toEqual([]);
  });
});

const INTERNALS = /electron\/llama\/internals\.ts only/;

describe("one module reaches node-llama-cpp's private members", () => {
  it.each([
    ['electron/llama/x.ts', "export const x = (m: object) => (m as { _model?: object })._model;"],
    ['electron/llama/deep/x.ts', "export const x = (c: object) => (c as { _queuedDecodes?: unknown[] })._queuedDecodes;"],
    ['electron/cli/commands/x.ts', "export const x = (l: object) => (l as { _bindings?: object })._bindings;"],
  ])('%s: a `_member` is reported', async (file, code) => {
    expect(await messages(file, code)).toEqual(expect.arrayContaining([expect.stringMatching(INTERNALS)]));
  });

  it('electron/llama/internals.ts may', async () => {
    expect(await messages('electron/llama/internals.ts', "export const x = (m: object) => (m as { _model?: object })._model;")).toEqual([]);
  });
});
