// `tatra models …` and `tatra compare` as a user runs them: listings with unusable files, info
// with a fit estimate, downloads from a local server with a resume, and one-line errors with exit
// code 2 for bad input. The commands run in this process (tatraRunInProcess: no Node start-up,
// node-llama-cpp and the models kept between commands); the stand-in GPU's `models info` runs in
// the built CLI in a child process, as typed.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSyntheticModel } from '../../tools/synthetic-gguf';
import { tinyFullModelPath, tinyModelBPath, tinyModelPath } from '../helpers/models';
import { keepModelsBetweenRuns, releaseInProcessRuns, tatraRunInProcess } from '../helpers/tatra-cli';
import { serveBuffer } from '../unit/models/http-fixture';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let dir: string;
let tiny: string;

/** The built CLI in a child process. */
function spawned(args: string[], timeoutMs = 120_000, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['bin/tatra.js', ...args], {
      cwd: repoRoot,
      env: { ...process.env, TATRA_THREADS: '1', TATRA_DATA_DIR: join(dir, 'data'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tatra ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

/** The CLI in this process, with the child's data folder. */
function tatra(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return tatraRunInProcess(args, { TATRA_DATA_DIR: join(dir, 'data') });
}

beforeAll(keepModelsBetweenRuns);
afterAll(releaseInProcessRuns);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-models-cli-'));
  tiny = await tinyModelPath();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('tatra models', () => {
  it('lists a folder with models and unusable files', async () => {
    const folder = join(dir, 'lib');
    await rm(folder, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(folder));
    await copyFile(tiny, join(folder, 'tiny.gguf'));
    await writeFile(join(folder, 'readme.gguf'), 'hello');
    await writeFile(join(folder, 'half.gguf.partial'), 'in progress');
    const r = await tatra(['models', 'list', folder]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/TATRA synthetic tiny\s+qwen2\s+1\.1M\s+Q8_0/);
    expect(r.stdout).toContain(`1 unusable file:\n  ${join(folder, 'readme.gguf')}: not a GGUF model (the file does not start with "GGUF")`);
    expect(r.stdout).not.toContain('half.gguf');
    const json = JSON.parse((await tatra(['models', 'list', folder, '--json'])).stdout) as { models: unknown[]; invalid: unknown[] };
    expect(json.models).toHaveLength(1);
    expect(json.invalid).toHaveLength(1);
  });

  it('describes a model with a fit estimate, and estimates a 7B header while flagging it as not loadable', async () => {
    const r = await tatra(['models', 'info', tiny, '--context-size', '2048', '--sequences', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/architecture\s+qwen2/);
    expect(r.stdout).toMatch(/memory needed\s+[\d.]+ MiB \([\d.]+ MiB weights \+ [\d.]+ MiB for 2048 tokens × 2 sequences\)/);
    expect(r.stdout).toMatch(/fits\s+yes/);
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const j = await tatra(['models', 'info', p7, '--json']);
    // Header only: described and estimated, but flagged as not loadable (exit 2).
    expect(j.stdout, j.stderr).not.toBe('');
    expect(j.code).toBe(2);
    const info = JSON.parse(j.stdout) as { usable: boolean; problem: string; fit: { modelBytes: number; totalBytes: number } };
    expect(info.usable).toBe(false);
    expect(info.problem).toMatch(/truncated/);
    // The reason is on stderr too, as one `tatra:` line (it was empty).
    expect(j.stderr.split('\n').filter((l) => l.startsWith('tatra:'))).toEqual([`tatra: ${p7} is not usable: ${info.problem}`]);
    expect(info.fit.modelBytes).toBeGreaterThan(6e9);
  });

  it('names the backend, the card and its free VRAM, and says in words that a 7B is offloaded partly (stand-in GPU)', async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const GiB = 1024 ** 3;
    // A card name with an escape sequence in it: shown escaped, never interpreted by the terminal.
    const standIn = JSON.stringify({ backend: 'cuda', cards: [{ name: 'NVIDIA RTX\u001b[31m 3070', vramTotal: 8 * GiB, vramFree: 7 * GiB }] });
    const env = { TATRA_GPU_STANDIN: standIn };
    const r = await spawned(['models', 'info', p7, '--context-size', '4096', '--sequences', '1'], 120_000, env);
    expect(r.code).toBe(2); // header only: described and estimated, flagged as not loadable
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).toContain('backend        CUDA: NVIDIA RTX\\u001b[31m 3070 (stand-in, not this machine)');
    expect(r.stdout).toMatch(/^VRAM {11}NVIDIA RTX\\u001b\[31m 3070: 7\.0 GiB of 8\.0 GiB VRAM free$/m);
    expect(r.stdout).toMatch(/^offload {8}(\d+) of 29 layers on the GPU, NVIDIA RTX\\u001b\[31m 3070 \(CUDA\); the other \d+ on the CPU: the whole model does not fit in 7\.0 GiB free VRAM, so it runs slower, but it runs$/m);
    expect(r.stdout).toMatch(/^plan {11}[\d.]+ GiB RAM \+ [\d.]+ GiB VRAM$/m);
    const j = await spawned(['models', 'info', p7, '--context-size', '4096', '--sequences', '1', '--json'], 120_000, env);
    const info = JSON.parse(j.stdout) as { fit: { plan: string; gpuLayers: number; offload: string; gpu: { backend: string; cards: { name: string; vramFree: number }[]; standIn: boolean } }; hardware: { gpu: unknown } };
    expect(info.fit.plan).toBe('partial');
    expect(info.fit.gpu).toMatchObject({ backend: 'cuda', standIn: true, cards: [{ name: 'NVIDIA RTX\u001b[31m 3070', vramFree: 7 * GiB }] });
    expect(info.fit.offload).toContain(`${info.fit.gpuLayers} of 29 layers on the GPU`);
    expect(info.hardware.gpu).toEqual(info.fit.gpu);
    // The same words as the text output: one plan.
    expect(r.stdout).toContain(`the other ${29 - info.fit.gpuLayers} on the CPU`);
    // This machine as it is: the real backend named.
    const here = await spawned(['models', 'info', tiny, '--json']);
    const hereInfo = JSON.parse(here.stdout) as { fit: { gpu: { backend: string; standIn: boolean }; offload: string } };
    expect(hereInfo.fit.gpu.standIn).toBe(false);
    if (hereInfo.fit.gpu.backend === 'cpu') expect(hereInfo.fit.offload).toMatch(/^all \d+ layers on the CPU: no GPU backend here$/);
    // A bad stand-in is one line, exit 2.
    const bad = await spawned(['models', 'info', tiny], 120_000, { TATRA_GPU_STANDIN: '{"backend":"rocm"}' });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^tatra: the stand-in GPU facts are not valid: backend: /)]);
  });

  it('an architecture this llama.cpp lacks: info says so and is not "usable", classify refuses in one line', async () => {
    // The tiny model with general.architecture "qwen2" rewritten to an unknown "zorp9" (same length).
    const body = Buffer.from(await readFile(tiny));
    const key = body.indexOf('general.architecture');
    const value = key + 'general.architecture'.length + 4 + 8;
    expect(body.toString('latin1', value, value + 5)).toBe('qwen2');
    body.write('zorp9', value, 'latin1');
    const odd = join(dir, 'odd-arch.gguf');
    await writeFile(odd, body);
    const info = await tatra(['models', 'info', odd]);
    expect(info.code).toBe(2);
    expect(info.stdout).toMatch(/architecture\s+zorp9/);
    expect(info.stdout).toMatch(/usable\s+NO: unsupported model architecture "zorp9"/);
    // (llama.cpp's own load messages may surround it until they are shown only with --verbose.)
    const verdict = info.stderr.split('\n').filter((l) => l.startsWith('tatra:'));
    expect(verdict).toEqual([expect.stringMatching(/^tatra: .*odd-arch\.gguf is not usable: unsupported model architecture "zorp9".*cannot run it/)]);
    const run = await tatra(['classify', '--task', 'sst2', '--model', odd, '--threads', '1', 'a fine film']);
    expect(run.code).toBe(2);
    const lines = run.stderr.trim().split('\n').filter((l) => l.startsWith('tatra:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^tatra: unsupported model architecture "zorp9": .*odd-arch\.gguf \(the llama\.cpp built into this TATRA Studio/);
    expect(run.stderr).not.toContain('unexpected error');
  });

  it('one-line errors with exit code 2', async () => {
    await writeFile(join(dir, 'text.gguf'), 'just text');
    const bad = await tatra(['models', 'info', join(dir, 'text.gguf')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([`tatra: not a GGUF model: ${join(dir, 'text.gguf')} (the file does not start with "GGUF")`]);
    const missing = await tatra(['models', 'info', join(dir, 'nope.gguf')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^tatra: model file not found: /);
    const unknown = await tatra(['models', 'download', 'no-such-thing']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe('tatra: "no-such-thing" is not a catalog id, an hf: URI or an https URL (see "tatra models download --help")');
  });

  it('downloads from a local server through a cut connection, resumed with Range in the same run', async () => {
    const body = await readFile(await tinyFullModelPath());
    const server = await serveBuffer({ '/m/tiny.gguf': body }, { cutAfter: 6_000_000, cuts: 1 });
    const out = join(dir, 'downloads');
    try {
      // The first response is cut after 6 MB; the CLI resumes with Range (206) and verifies the result.
      const r = await tatra(['models', 'download', server.url('/m/tiny.gguf'), '--dir', out]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(`${join(out, 'tiny.gguf')} (15.6 MiB) ready`);
      expect(server.requests.map((q) => q.status)).toEqual([200, 206]);
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      expect(sha(await readFile(join(out, 'tiny.gguf')))).toBe(sha(body));
      expect(await readdir(out)).toEqual(['tiny.gguf']);
    } finally {
      await server.close();
    }
  });

  it('fails fast and clearly when the host is unreachable', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const r = await tatra(['models', 'download', `http://127.0.0.1:${port}/x.gguf`, '--dir', join(dir, 'never')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`tatra: cannot reach 127.0.0.1:${port}: connection refused`);
  });
});

describe('tatra compare', () => {
  it('prints the pair table and the matrix for a 2×1 comparison', async () => {
    const b = await tinyModelBPath();
    const csv = join(dir, 'mini.csv');
    await writeFile(csv, 'text,label\n"a fine film",positive\n"a bad film",negative\n');
    const r = await tatra(['compare', '--task', 'sst2', '--data', csv, '--generators', `${tiny},${b}`, '--evaluators', tiny, '-n', '1', '-k', '2', '-r', '1', '--concurrency', '2', '--context-size', '2048']);
    expect(r.stderr).not.toMatch(/tatra: /);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/comparison c[0-9a-z]+-[0-9a-f]{6}\s+\[done\]\s+task sst2\s+n=1 k=2 r=1/);
    // Each pair with its accuracy's 95 % interval, either the best or its difference from it, and its
    // macro-F1 with its interval.
    expect(r.stdout).toMatch(/synthetic-tiny-v2\s+synthetic-tiny-v2\s+\d+\.\d\s+\[\d+\.\d, \d+\.\d\]\s+(best|[-+]?\d+\.\d \[[-+]?\d+\.\d, [-+]?\d+\.\d\] on 2 rows, Holm p = \d\.\d\d)\s+\d\.\d{3}\s+\[\d\.\d{3}, \d\.\d{3}\]\s+2\/2/);
    expect(r.stdout).toMatch(/synthetic-tiny-b-v2\s+synthetic-tiny-v2\s+\d+\.\d\s+\[\d+\.\d, \d+\.\d\]\s+(best|[-+]?\d+\.\d \[[-+]?\d+\.\d, [-+]?\d+\.\d\] on 2 rows, Holm p = \d\.\d\d)\s+\d\.\d{3}\s+\[\d\.\d{3}, \d\.\d{3}\]\s+2\/2/);
    // On two rows nothing can be told apart: both pairs are tied for best, none named the winner.
    expect(r.stdout).toMatch(/tied for best \(\*\): .*synthetic-tiny-v2 → synthetic-tiny-v2/);
    expect(r.stdout).toMatch(/tied for best \(\*\): .*synthetic-tiny-b-v2 → synthetic-tiny-v2/);
    expect(r.stdout).toContain('accuracy % (rows: generator, columns: evaluator; * tied for best)');
    const bad = await tatra(['compare', '--task', 'sst2', '--data', csv, '--generators', join(dir, 'text.gguf'), '--evaluators', tiny]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^tatra: not a GGUF model: /);
  });
});
