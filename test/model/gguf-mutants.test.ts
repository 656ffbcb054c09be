// A mutation test over a real GGUF (stories260K; the tiny synthetic qwen2 model where it is absent):
// about a thousand mutants (the file cut at every field, every count, key and string length,
// array element type and length, value type, tensor name length, dimension count, dimension,
// tensor type and offset set to edge values, general.alignment of every kind, the architecture,
// hyperparameters and the vocabulary changed or removed). Each mutant must be refused with one
// line naming the file in a person's words, or load and answer; none may crash or freeze the
// process that looks at it. The mutants run in a child (gguf-mutants.worker.ts) exactly as every
// face inspects and loads a model; a crash or a hang there is named by the mutant it happened on.
// Time is bounded by progress: a mutant gets a generous cap that only a hang reaches.
// Every mutant is inspected; loading one in a child costs a second or more, so `npm test` loads
// the issue's cases and a seeded quarter of the other mutants the inspection accepts (about a
// dozen; the seed is in the test's name, TATRA_GGUF_MUTANT_SEED picks another), and
// TATRA_GGUF_MUTANTS=all loads every one (about 45 loads, two minutes on two busy cores).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { repoRoot } from '../helpers/tatra-cli';
import { storiesModelPath, tinyModelPath } from '../helpers/models';

const scratch = mkdtempSync(join(tmpdir(), 'tatra-gguf-mutants-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** No mutant may take longer than this without the worker reporting progress (only a hang does). */
const STALL_MS = 240_000;

/** Mutants always loaded: the issue's cases and one harmless edit of each kind. */
/** The base model and its architecture, which names its hyperparameters' keys (llama.block_count, qwen2.block_count). */
const stories = storiesModelPath();
const ARCH = stories ? 'llama' : 'qwen2';
const ALWAYS_LOADED = [`${ARCH}.attention.head_count = 0`, `${ARCH}.block_count = 0`, 'tokenizer.ggml.model "nonexistent"', 'general.name with escapes', 'general.alignment 64', `${ARCH}.context_length = 1`];
const SAMPLE = process.env.TATRA_GGUF_MUTANTS === 'all' ? null : { seed: Number(process.env.TATRA_GGUF_MUTANT_SEED ?? 1), every: 4, always: ALWAYS_LOADED };

interface Line {
  i?: number;
  id?: string;
  outcome?: 'started' | 'refused' | 'loaded' | 'inspected' | 'threw';
  message?: string;
  done?: number;
}

interface Run {
  results: Map<number, Line>;
  crashed: string[];
  froze: string[];
  total: number;
}

/** Runs the worker from `from`, restarting it after the mutant it died or froze on. */
async function runMutants(base: string): Promise<Run> {
  const run: Run = { results: new Map(), crashed: [], froze: [], total: 0 };
  let from = 0;
  for (;;) {
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test', 'model', 'gguf-mutants.worker.ts'), base, String(from), scratch, ...(SAMPLE ? [JSON.stringify(SAMPLE)] : [])], {
      cwd: repoRoot,
      // Trial loads (llama/trial-load.ts) remember their verdicts here, not in the user's cache.
      env: { ...process.env, TATRA_CACHE_DIR: join(scratch, 'cache'), TATRA_THREADS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let current: Line | null = null;
    let finished = false;
    let stalled = false;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    let watchdog = setTimeout(() => ((stalled = true), child.kill('SIGKILL')), STALL_MS);
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = JSON.parse(pending.slice(0, nl)) as Line;
        pending = pending.slice(nl + 1);
        clearTimeout(watchdog);
        watchdog = setTimeout(() => ((stalled = true), child.kill('SIGKILL')), STALL_MS);
        if (line.done !== undefined) {
          finished = true;
          run.total = line.done;
        } else if (line.outcome === 'started') current = line;
        else {
          run.results.set(line.i!, line);
          current = null;
        }
      }
    });
    await new Promise<void>((res) => child.on('close', () => res()));
    clearTimeout(watchdog);
    if (finished) return run;
    const on = current as Line | null;
    if (!on) throw new Error(`the worker stopped outside any mutant: ${stderr}`);
    (stalled ? run.froze : run.crashed).push(`${on.id} (${stderr.trim().split('\n').pop() ?? ''})`);
    from = on.i! + 1;
  }
}

// Engine words that must never be a user's reason (node-llama-cpp's and V8's, the issue's examples).
const ENGINE_WORDS = /BigInt|NaN|Cannot read|undefined|is not a function|Invalid type or block size|RangeError|TypeError|\[llama\]|Failed to load model$/;

it(`every mutant of a real GGUF is refused with one line or loads; none crashes or freezes the process (${SAMPLE ? `loads sampled, seed ${SAMPLE.seed}` : 'every load'})`, async () => {
  const base = stories ?? (await tinyModelPath());
  const run = await runMutants(base);
  expect(run.crashed, 'mutants that crashed the process').toEqual([]);
  expect(run.froze, 'mutants that froze the process').toEqual([]);
  const lines = [...run.results.values()];
  expect(lines.length).toBe(run.total);
  expect(run.total).toBeGreaterThan(800);
  const threw = lines.filter((l) => l.outcome === 'threw').map((l) => `${l.id}: ${l.message}`);
  expect(threw, 'mutants that gave an unexpected error instead of one clear line').toEqual([]);
  for (const l of lines.filter((r) => r.outcome === 'refused')) {
    const m = l.message!;
    expect(m, l.id).not.toContain('\n');
    expect(m, l.id).toContain(join(scratch, 'mutant.gguf'));
    expect(m, l.id).not.toMatch(ENGINE_WORDS);
    expect(m.length, l.id).toBeLessThan(600);
  }
  // Both outcomes happen: harmless edits (a name, a context length) still load and answer.
  const loaded = lines.filter((l) => l.outcome === 'loaded').map((l) => l.id!);
  expect(loaded.length).toBeGreaterThanOrEqual(3);
  expect(loaded).toEqual(expect.arrayContaining(['general.name with escapes', 'general.alignment 64', `${ARCH}.context_length = 1`]));
  // The issue's cases, refused in words.
  const reason = (id: string) => run.results.get(lines.findIndex((l) => l.id === id))?.message ?? `(no mutant ${id})`;
  expect(reason('general.alignment 7')).toMatch(/general\.alignment is 7, not a power of two/);
  expect(reason('general.alignment 0')).toMatch(/general\.alignment is 0, not a power of two/);
  expect(reason(`"tokenizer.ggml.tokens" array length ${1n << 40n}`)).toMatch(/claims 1099511627776 elements, more than any model has/);
  expect(reason(`tensor "token_embd.weight" type 9999`)).toMatch(/tensor type 9999, which this llama\.cpp cannot read/);
  expect(reason(`tensor "token_embd.weight" dimension 0 = ${1n << 62n}`)).toMatch(/claims \d+ values, more than any model holds/);
  expect(reason(`tensor "token_embd.weight" dimension 1 = ${1n << 31n}`)).toMatch(/^corrupt GGUF model: .*starts at \d+ in the data, where \d+ was expected/);
  expect(reason(`${ARCH}.attention.head_count = 0`)).toMatch(/^cannot load .*: llama\.cpp crashes on it \(/);
  expect(reason(`${ARCH}.block_count = 0`)).toMatch(/^cannot load .*: llama\.cpp crashes on it \(GGML_ASSERT\(.*n_layer/);
  expect(reason('tokenizer.ggml.model "nonexistent"')).toMatch(/^cannot load .*: llama\.cpp refused it \(.*unknown tokenizer: 'nonexistent'\)$/);
}, 3_600_000);
