// `tatra compare --race` end to end on a real GGUF (../shared's stories260K and a copy of it at another path,
// so two evaluators that score alike): the pairs run the rows in rounds of 20 (each pair's job is
// started once a round), nothing is dropped between equals, every row ends scored, and the result
// says where the race stands (docs/method.md §16, racing).
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ComparisonResult } from '../../electron/common/contract/comparisons';
import { lastJson, repoRoot, tatraCli as cli } from '../helpers/tatra-cli';

const data = resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl');
const model = resolve(repoRoot, '..', 'shared', 'models', 'stories260K.gguf');
const dir = mkdtempSync(join(tmpdir(), 'tatra-race-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.skipIf(!existsSync(data) || !existsSync(model))('races two pairs in rounds to the end and says so (skipped without ../shared)', { timeout: 600_000 }, async () => {
  const copy = join(dir, 'copy.gguf');
  copyFileSync(model, copy);
  const { stdout, stderr } = await cli(['compare', '--race', '--json', '--task', 'sst2', '--data', data, '--generators', model, '--evaluators', `${model},${copy}`, '-n', '0', '-k', '2', '-r', '1', '--limit', '40', '--data-dir', join(dir, 'data')]);
  const result = lastJson<ComparisonResult>(stdout);
  expect(result.status).toBe('done');
  expect(result.spec.race).toBe(true);
  expect(result.race).toEqual({ roundRows: 20, rounds: 2, rowsDecided: 40, alive: 2, dropped: 0 });
  for (const p of result.pairs) expect(p).toMatchObject({ status: 'done', rowsDone: 40, rowsTotal: 40, dropped: null });
  // --json is quiet on stderr; the text report says the race.
  expect(stderr).not.toMatch(/running/);
  const shown = await cli(['compare', 'show', result.id, '--data-dir', join(dir, 'data')]);
  expect(shown.stdout).toContain('raced: 2 rounds of 20 rows decided (40 rows), 2 still in, 0 dropped');
});
