// Bad input to `tatra eval` and `tatra jobs`: one clear line on stderr, exit code 2, nothing
// left behind in the data folder. (Spawns the built CLI; no model is loaded.)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tinyModelPath } from '../helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tatra-cli-err-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dataDir = join(dir, 'data');

function tatra(args: string[]) {
  const r = spawnSync(process.execPath, [join(repoRoot, 'bin', 'tatra.js'), ...args, '--data-dir', dataDir], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, TATRA_THREADS: '1' } });
  return { code: r.status, stderr: r.stderr.trim(), stdout: r.stdout.trim() };
}

describe('tatra eval / jobs bad input', () => {
  const csv = join(dir, 'ok.csv');
  writeFileSync(csv, 'text,label\nfine,1\n');
  const notGguf = join(dir, 'notes.gguf');
  writeFileSync(notGguf, 'just some text\n');

  it.each([
    ['a missing data file', () => ['eval', '--task', 'sst2', '--data', join(dir, 'nope.csv'), '--model', notGguf], /^tatra: data file not found: .*nope\.csv$/],
    ['an unknown column', () => ['eval', '--task', 'sst2', '--data', csv, '--text-col', 'review', '--model', '@tiny'], /^tatra: ok\.csv: no column "review" \(columns: text, label\)$/],
    ['a malformed label map', () => ['eval', '--task', 'sst2', '--data', csv, '--label-map', '1', '--model', notGguf], /^tatra: --label-map: "1" is not value=label$/],
    ['a label map onto a non-label', () => ['eval', '--task', 'sst2', '--data', csv, '--label-map', '1=good', '--model', '@tiny'], /^tatra: label map "1=good": "good" is not a label of task sst2/],
    ['a text file named .gguf', () => ['eval', '--task', 'sst2', '--data', csv, '--model', notGguf], /notes\.gguf/],
    ['no model', () => ['eval', '--task', 'sst2', '--data', csv], /^tatra: no model: give --model/],
    ['an unknown task', () => ['eval', '--task', 'nope', '--data', csv, '--model', notGguf], /^tatra: unknown task "nope"/],
    ['a negative -n', () => ['eval', '--task', 'sst2', '--data', csv, '--model', notGguf, '-n', '-1'], /-n must be between 0 and 64/],
    ['an unknown job', () => ['jobs', 'show', 'zzz'], /^tatra: no job "zzz"$/],
    // Checked before the job or sweep starts, not after it ran for hours.
    ['eval --out onto a file', () => ['eval', '--task', 'sst2', '--data', csv, '--model', '@tiny', '--out', csv], /^tatra: --out .*ok\.csv is not a folder \(eval writes <job id>\.csv and <job id>\.json into it\)$/],
    ['sweep --out onto a file', () => ['sweep', '--task', 'sst2', '--data', csv, '--model', '@tiny', '-n', '0', '-k', '1', '-r', '1', '--seeds', '1', '--out', csv], /^tatra: --out .*ok\.csv is not a folder \(a sweep writes <sweep id>\.csv and <sweep id>\.json into it\)$/],
  ])('%s', async (_name, args, message) => {
    const model = await tinyModelPath();
    const r = tatra(args().map((a) => (a === '@tiny' ? model : a)));
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n').filter((l) => l.startsWith('tatra:') || /error/i.test(l))).toHaveLength(1);
    expect(r.stderr.split('\n').find((l) => l.includes('tatra:') || /must be/.test(l))).toMatch(message);
  });

  it.each([
    ['an unknown option', ['jobs', 'list', '--bogus'], /^tatra: unknown option '--bogus'/],
    ['a missing required option', ['eval', '--bogus'], /^tatra: required option '--task <id\|file>' not specified$/],
    ['a missing argument', ['jobs', 'show'], /^tatra: missing required argument 'id'$/],
    ['an unknown command', ['jbos'], /^tatra: unknown command 'jbos' \(Did you mean jobs\?\)$/],
    ['a bad number', ['jobs', 'show', 'x', '--rows', 'many'], /^tatra: --rows must be a whole number, got "many"$/],
  ])("commander's usage errors are one tatra: line too: %s", (_name, args, message) => {
    const r = tatra(args);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')).toEqual([expect.stringMatching(message)]);
  });

  it('leaves no job behind', () => {
    const r = tatra(['jobs', 'list', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    const sweeps = tatra(['sweep', 'list', '--json']);
    expect(sweeps.code, sweeps.stderr).toBe(0);
    expect(JSON.parse(sweeps.stdout)).toEqual([]);
  });
});
