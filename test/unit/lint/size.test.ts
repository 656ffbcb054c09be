// Small modules (eslint.config.js MAX_LINES, MAX_FUNCTION_LINES): a file or a function one line past
// the limit, written anywhere in electron/ or renderer/src, is reported; one at the limit is not.
// The files the config still lets past are over the limit in fact, so the lists only shrink: a
// file split under the limit fails here until it leaves its list.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

// eslint.config.js is plain JavaScript: its limits and lists, read as what they are.
const { LONG_FILES, LONG_FUNCTION_FILES, MAX_FUNCTION_LINES, MAX_LINES } = (await import('../../../eslint.config.js' as string)) as {
  LONG_FILES: string[];
  LONG_FUNCTION_FILES: string[];
  MAX_FUNCTION_LINES: number;
  MAX_LINES: number;
};

const root = resolve(import.meta.dirname, '../../..');
const eslint = new ESLint({ cwd: root });

async function sizeRules(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === null || m.ruleId?.startsWith('max-lines')).map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

/** A module of `lines` lines. */
const fileOf = (lines: number) => Array.from({ length: lines }, (_, i) => `export const a${i} = ${i};`).join('\n') + '\n';

/** A module holding one function of `lines` lines, its signature and closing brace included. */
const functionOf = (lines: number) =>
  ['export function long(): number {', '  let x = 0;', ...Array.from({ length: lines - 4 }, (_, i) => `  x += ${i};`), '  return x;', '}'].join('\n') + '\n';

describe('no file over MAX_LINES, no function over MAX_FUNCTION_LINES', () => {
  it.each(['electron/jobs/x.ts', 'electron/cli/commands/x.ts', 'renderer/src/views/x.tsx'])('%s: one line past either limit is reported, at the limit passes', async (file) => {
    expect(await sizeRules(file, fileOf(MAX_LINES + 1))).toEqual(['max-lines']);
    expect(await sizeRules(file, fileOf(MAX_LINES))).toEqual([]);
    expect(await sizeRules(file, functionOf(MAX_FUNCTION_LINES + 1))).toEqual(['max-lines-per-function']);
    expect(await sizeRules(file, functionOf(MAX_FUNCTION_LINES))).toEqual([]);
  });
});

describe('the files still let past the limits', () => {
  // One test for each list, so that an empty list (every file split) is a passing case, not an empty suite.
  it('each file on LONG_FILES is over MAX_LINES (split it under, then take it off LONG_FILES)', () => {
    for (const file of LONG_FILES) {
      const text = readFileSync(resolve(root, file), 'utf8');
      expect(text.replace(/\n$/, '').split('\n').length, file).toBeGreaterThan(MAX_LINES);
    }
  });

  // Only the one rule, on the file as it is: what the config turns off for it.
  const functionsOnly = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts', '**/*.tsx'],
        languageOptions: { parser: tseslint.parser, parserOptions: { ecmaFeatures: { jsx: true } } },
        rules: { 'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: false, skipComments: false, IIFEs: true }] },
      },
    ],
  });
  it('each file on LONG_FUNCTION_FILES has a function over MAX_FUNCTION_LINES (make it steps, then take it off)', async () => {
    for (const file of LONG_FUNCTION_FILES) {
      const path = resolve(root, file);
      const [result] = await functionsOnly.lintText(readFileSync(path, 'utf8'), { filePath: path });
      expect(result?.messages.filter((m) => m.ruleId === 'max-lines-per-function').length, file).toBeGreaterThan(0);
    }
  });
});
