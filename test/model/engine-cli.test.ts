// `tatra classify` and `tatra tasks` end to end: real inference through node-llama-cpp on the
// synthetic tiny model and, when it is there, the real stories260K model. The CLI runs in this
// process (tatraRunInProcess: no Node start-up per command) unless what a test checks is the built
// CLI (globalSetup runs the build) in a child process: processes that agree, text from stdin,
// what llama.cpp prints to the process's stderr.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractFinalAnswer, normaliseMathAnswer } from '../../electron/engine';
import { storiesModelPath, tinyModelBPath, tinyModelPath } from '../helpers/models';
import { keepModelsBetweenRuns, releaseInProcessRuns, tatraRunInProcess } from '../helpers/tatra-cli';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let tiny = '';
let scratch = '';

beforeAll(keepModelsBetweenRuns);
afterAll(releaseInProcessRuns);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built CLI in a child process, given `stdin` (empty unless given). */
function spawned(args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['bin/tatra.js', ...args], {
      cwd: repoRoot,
      env: { ...process.env, TATRA_DATA_DIR: scratch, TATRA_THREADS: '1', FORCE_COLOR: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    if (stdin !== undefined) child.stdin.end(stdin);
    else child.stdin.end();
  });
}

/** The CLI in this process, on the same data folder. */
function tatra(args: string[]): Promise<Run> {
  return tatraRunInProcess(args, { TATRA_DATA_DIR: scratch });
}

interface CliPrediction {
  variant: number;
  label: string | null;
  raw: string;
}
interface CliResult {
  label: string | null;
  confidence: number;
  votes: Record<string, number>;
  runs: {
    examples: { text: string; label: string }[];
    paraphrases: string[];
    predictions: CliPrediction[];
    filtered: { wrongLabel: number; duplicate: number; malformed: number; empty: number; overK: number };
  }[];
  stages: Record<string, { ms: number }>;
  totalMs: number;
  deterministic: boolean;
  decidedEarly: boolean;
  votesCast: number;
  callsSaved: number;
}

/** stdout must be exactly one JSON object on one line: nothing else may leak onto it. */
function parseJson(run: Run): CliResult {
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.split('\n').filter((l) => l.trim() !== '');
  expect(lines, `stdout: ${run.stdout.slice(0, 500)}`).toHaveLength(1);
  return JSON.parse(lines[0] as string) as CliResult;
}

/** Keys that hold wall-clock time (ms, totalMs, seconds, elapsed…, eta…, …PerMinute): never compared. */
const TIMING_KEY = /^(ms|seconds|elapsed.*|eta.*)$|(Ms|Seconds|PerMinute|PerSecond)$/;

/** A deep copy without any timing field, at any depth (stages, runs, work items, whatever comes later). */
function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([k]) => !TIMING_KEY.test(k)).map(([k, v]) => [k, withoutTimings(v)]));
}

/**
 * `exact`: 4 examples, 2 per label. Otherwise validation may have dropped some: a random-weight
 * model decoded on parallel sequences sometimes writes the same gibberish twice in one call (a
 * duplicate, rightly dropped), and which requests share a batch changes its samples, so only
 * the accounting is fixed: what was kept plus what was dropped is what was asked for.
 */
function expectSst2Shape(r: CliResult, exact = true): void {
  expect(r.runs).toHaveLength(2);
  const predictions = r.runs.flatMap((run) => run.predictions);
  expect(predictions).toHaveLength(6);
  for (const p of predictions) expect(['negative', 'positive']).toContain(p.label);
  for (const run of r.runs) {
    expect(run.predictions.map((p) => p.variant)).toEqual([0, 1, 2]);
    const perLabel = ['negative', 'positive'].map((l) => run.examples.filter((e) => e.label === l).length);
    if (exact) {
      expect(run.examples).toHaveLength(4);
      expect(perLabel).toEqual([2, 2]);
    } else {
      const f = run.filtered;
      expect(run.examples.length + f.wrongLabel + f.duplicate + f.malformed + f.empty).toBe(4);
      for (const n of perLabel) expect(n).toBeLessThanOrEqual(2);
      expect(run.examples.every((e) => e.label === 'negative' || e.label === 'positive')).toBe(true);
    }
    expect(run.paraphrases).toHaveLength(2);
    for (const p of run.paraphrases) expect(typeof p).toBe('string');
  }
  expect(Object.keys(r.votes).sort()).toEqual(['negative', 'positive']);
  expect((r.votes.negative ?? 0) + (r.votes.positive ?? 0)).toBe(6);
  expect(r.confidence).toBeCloseTo((r.votes[r.label as string] ?? 0) / 6);
}

beforeAll(async () => {
  tiny = await tinyModelPath();
  scratch = await mkdtemp(join(tmpdir(), 'tatra-engine-cli-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('tatra classify on the tiny synthetic model', () => {
  it('sst2 -n 2 -k 4 -r 2 on parallel sequences: 6 predictions in the label set, 4 examples asked per run (2 per label), 2 paraphrases per run', async () => {
    expectSst2Shape(parseJson(await tatra(['classify', '--task', 'sst2', '--model', tiny, '-n', '2', '-k', '4', '-r', '2', '--seed', '3', '--threads', '1', '--json', 'a fine film with a clumsy ending'])), false);
  });

  it('withoutTimings strips every timing field at any depth, and nothing else', () => {
    const r = { totalMs: 5, label: 'x', stages: { examples: { calls: 2, ms: 3 } }, work: [{ a: { ms: 1, elapsedSeconds: 2, n: 1 } }], etaSeconds: 9, rowsPerMinute: 2 };
    expect(withoutTimings(r)).toEqual({ label: 'x', stages: { examples: { calls: 2 } }, work: [{ a: { n: 1 } }] });
  });

  // Default settings (4 parallel sequences): the lockstep schedule makes each request's output a
  // function of the request alone, so three runs agree byte for byte (before, 4 repeats gave 4
  // example sets): two processes, each loading the model afresh, and this process on the model it
  // kept from the commands before (a model answers alike whatever it ran before).
  it('three runs with the same seed at default settings give the same JSON (timings aside)', async () => {
    const args = ['classify', '--task', 'sst2', '--model', tiny, '-n', '2', '-k', '4', '-r', '2', '--seed', '3', '--threads', '1', '--json', 'a fine film with a clumsy ending'];
    const [a, b, c] = await Promise.all([spawned(args), spawned(args), tatra(args)]).then((runs) => runs.map(parseJson));
    expectSst2Shape(a!, false);
    expect(a!.deterministic).toBe(true);
    expect(withoutTimings(b)).toEqual(withoutTimings(a));
    expect(withoutTimings(c)).toEqual(withoutTimings(a));
  });

  it('decides early by default and says what it saved; --no-early-stop runs every run', async () => {
    const args = ['classify', '--task', 'sst2', '--model', tiny, '-n', '2', '-k', '4', '-r', '5', '--seed', '3', '--threads', '1'];
    const [early, full, human] = await Promise.all([tatra([...args, '--json', 'a fine film with a clumsy ending']), tatra([...args, '--no-early-stop', '--json', 'a fine film with a clumsy ending']), tatra([...args, 'a fine film with a clumsy ending'])]);
    const e = parseJson(early);
    const f = parseJson(full);
    // Pinned: this seed decides after the first wave (3 of 5 runs) on the deterministic backend.
    expect(e).toMatchObject({ decidedEarly: true, votesCast: 9, callsSaved: 12, deterministic: true });
    expect(e.runs).toHaveLength(3);
    expect(f).toMatchObject({ decidedEarly: false, votesCast: 15, callsSaved: 0 });
    expect(f.runs).toHaveLength(5);
    expect(e.label).toBe(f.label);
    // Each request's output is its own whatever shares its batch: the runs made are the full pipeline's.
    expect(f.runs.slice(0, 3)).toEqual(e.runs);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/decided early after 3 of 5 runs: 9 votes cast, 12 model calls saved/);
    expect(human.stdout).toMatch(/deterministic: yes/);
  });

  it('gsm8k: the vote is over extracted, normalised final answers', async () => {
    const r = parseJson(await tatra(['classify', '--task', 'gsm8k', '--model', tiny, '-n', '1', '-k', '2', '-r', '2', '--threads', '1', '--json', 'Tom has 3 apples and buys 4 more. How many apples does he have?']));
    const predictions = r.runs.flatMap((run) => run.predictions);
    expect(predictions).toHaveLength(4);
    const counted: Record<string, number> = {};
    for (const p of predictions) {
      const answer = extractFinalAnswer(p.raw);
      expect(p.label).toBe(answer === null ? null : normaliseMathAnswer(answer));
      if (p.label !== null) counted[p.label] = (counted[p.label] ?? 0) + 1;
    }
    // The grammar makes every answer end in a Final Answer line, even from random weights.
    expect(predictions.every((p) => p.label !== null)).toBe(true);
    expect(r.votes).toEqual(counted);
    expect(r.votes[r.label as string]).toBe(Math.max(...Object.values(counted)));
    for (const run of r.runs) expect(run.examples.length).toBeGreaterThan(0);
  });

  it('--generator and --evaluator may be different models', async () => {
    const other = await tinyModelBPath();
    const run = await tatra(['classify', '--task', 'news', '--generator', tiny, '--evaluator', other, '-n', '1', '-k', '4', '-r', '1', '--threads', '1', '--json', 'Stocks rally as the central bank holds rates']);
    const r = parseJson(run) as CliResult & { generator: string; evaluator: string };
    expect([r.generator, r.evaluator]).toEqual([tiny, other]);
    expect(r.runs[0]!.examples.map((e) => e.label).sort()).toEqual(['Business', 'Sports', 'Tech', 'World']);
    for (const p of r.runs[0]!.predictions) expect(['World', 'Sports', 'Business', 'Tech']).toContain(p.label);
  });

  it('human output: the label, its confidence, a bar per label, time per stage; text from stdin', async () => {
    const run = await spawned(['classify', '--task', 'sst2', '--model', tiny, '-n', '1', '-k', '2', '-r', '1', '--threads', '1'], 'piped text about a movie\n');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^(negative|positive)\s+\d+% of 2 votes/);
    expect(run.stdout).toMatch(/^\s+negative\s+[█░]{24}\s+\d+$/m);
    expect(run.stdout).toMatch(/^\s+positive\s+[█░]{24}\s+\d+$/m);
    for (const stage of ['examples', 'paraphrases', 'evaluation', 'total']) expect(run.stdout).toMatch(new RegExp(`^\\s+${stage}\\s.*\\d s$`, 'm'));
  });
});

describe('tatra classify on stories260K (a real model without a chat template)', () => {
  const stories = storiesModelPath();
  const name = stories === null ? 'skipped: ../shared/models/stories260K.gguf is absent' : 'sst2 -n 2 -k 4 -r 2 has the same shape';
  it.skipIf(stories === null)(name, async () => {
    // One sequence, so the sampled examples are reproducible and the exact shape can be pinned.
    expectSst2Shape(parseJson(await tatra(['classify', '--task', 'sst2', '--model', stories as string, '-n', '2', '-k', '4', '-r', '2', '--threads', '1', '--sequences', '1', '--json', 'a fine film'])));
  });

  // llama.cpp warns on loading this model ("load: bad special token …"): printed on every run, it
  // read as something wrong. Shown with --verbose (before or after the command).
  it.skipIf(stories === null)("llama.cpp's load warnings reach stderr only with --verbose", async () => {
    const args = ['classify', '--task', 'sst2', '--model', stories as string, '-n', '1', '-k', '2', '-r', '1', '--threads', '1', '--sequences', '1', 'a fine film'];
    const llamaLines = (r: Run) => r.stderr.split('\n').filter((l) => l.startsWith('[llama]'));
    // Each in its own process, as typed: run in this process after another load, the warnings
    // did not reach the captured stderr (seen once; what this checks is a process's stderr).
    const quiet = await spawned(args);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(llamaLines(quiet)).toEqual([]);
    for (const verbose of [['--verbose', ...args], [...args, '--verbose']]) {
      const loud = await spawned(verbose);
      expect(loud.code, loud.stderr).toBe(0);
      expect(llamaLines(loud)).toContainEqual(expect.stringMatching(/^\[llama\] load: bad special token/));
      // The verdict line (no timings: those differ run to run).
      expect(loud.stdout.split('\n')[0]).toBe(quiet.stdout.split('\n')[0]);
    }
  });

  // Two processes and this one, as above.
  it.skipIf(stories === null)('the issue\'s command three times at default settings: the same JSON (timings aside)', async () => {
    const args = ['classify', '--task', 'sst2', '--model', stories as string, '-n', '2', '-k', '4', '-r', '2', '--seed', '7', '--threads', '1', '--json', 'a gorgeous, witty, seductive movie'];
    const [a, b, c] = await Promise.all([spawned(args), spawned(args), tatra(args)]).then((runs) => runs.map(parseJson));
    expectSst2Shape(a!, false);
    expect(withoutTimings(b)).toEqual(withoutTimings(a));
    expect(withoutTimings(c)).toEqual(withoutTimings(a));
  });
});

describe('bad input: exit code 2 and one clear line on stderr', () => {
  const cases: [string, () => Promise<string[]>, RegExp][] = [
    ['a text file named .gguf', async () => {
      const f = join(scratch, 'text.gguf');
      await writeFile(f, 'this is not a model\n');
      return ['--model', f];
    }, /not a GGUF/i],
    ['an empty file', async () => {
      const f = join(scratch, 'empty.gguf');
      await writeFile(f, '');
      return ['--model', f];
    }, /empty/i],
    ['a truncated GGUF', async () => {
      const f = join(scratch, 'truncated.gguf');
      await writeFile(f, readFileSync(tiny).subarray(0, 200_000));
      return ['--model', f];
    }, /truncated/i],
    ['a missing path', async () => ['--model', join(scratch, 'nowhere.gguf')], /not found/i],
    ['an unknown task', async () => ['--model', tiny, '--task', 'no-such-task'], /unknown task "no-such-task".*sst2/],
    ['a negative -n', async () => ['--model', tiny, '-n', '-1'], /-n must be between 0 and 64, got -1/],
    ['no text at all', async () => ['--model', tiny], /no text/],
  ];
  for (const [name, args, message] of cases) {
    it(name, async () => {
      const line = ['classify', '--task', 'sst2', '--threads', '1', ...(await args())];
      // No text: the built CLI, its stdin empty.
      const run = name === 'no text at all' ? await spawned(line, '') : await tatra([...line, 'some text']);
      expect(run.code, run.stderr).toBe(2);
      const lines = run.stderr.split('\n').filter((l) => l.trim() !== '');
      expect(lines, run.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^tatra: /);
      expect(lines[0]).toMatch(message);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.stdout).toBe('');
    });
  }
});

describe('tatra tasks', () => {
  it('list names all eleven tasks with their labels', async () => {
    const run = await tatra(['tasks', 'list']);
    expect(run.code, run.stderr).toBe(0);
    for (const id of ['sst2', 'cr', 'mr', 'sst5', 'news', 'trec', 'subj', 'medqa', 'gsm8k', 'deepmath', 'math500']) expect(run.stdout).toMatch(new RegExp(`^${id}\\s`, 'm'));
    expect(run.stdout).toMatch(/^sst5\s+classification\s+built-in\s+terrible, bad, okay, good, great$/m);
  });

  it('show prints a task in full, and --json the task itself', async () => {
    const run = await tatra(['tasks', 'show', 'subj']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/abstain label\s+unsure/);
    expect(run.stdout).toMatch(/label subjective\n\s+style/);
    const json = await tatra(['tasks', 'show', 'trec', '--json']);
    expect((JSON.parse(json.stdout) as { defaultLabel: string }).defaultLabel).toBe('Entity');
    const bad = await tatra(['tasks', 'show', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toMatch(/^tatra: unknown task "nope"/);
  });
});
