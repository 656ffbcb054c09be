// Ctrl-C while `tatra eval` loads its models: a terminal sends SIGINT to the whole process
// group (the CLI and the child that tries a new model first, llama/trial-load.ts). The job is
// paused with one line, the load is stopped rather than finished (no verdict is recorded for a
// trial that was cut short: the next run tries the file again), no child is left behind, and
// the child's own death is never reported as the model crashing.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { repoRoot, TATRA, queryJobDb } from '../helpers/tatra-cli';
import { tinyModelPath } from '../helpers/models';
import { vouchForModel } from '../../electron/llama/trial-load';

const dir = mkdtempSync(join(tmpdir(), 'tatra-interrupt-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `tatra eval` on the tiny model in its own process group (as a terminal's foreground job)
 * and sends SIGINT (to the group, or to the CLI alone) once it says it is loading the models.
 */
async function evalInterruptedWhileLoading(cache: string, dataDir: string, group: boolean): Promise<{ code: number | null; stderr: string; model: string }> {
  const model = await tinyModelPath();
  const data = join(dir, 'd.csv');
  writeFileSync(data, 'text,label\ngreat film,positive\ndull film,negative\n');
  const child = spawn(process.execPath, [TATRA, 'eval', '--task', 'sst2', '--data', data, '--model', model, '-r', '1', '-n', '1', '-k', '2', '--data-dir', dataDir], {
    cwd: repoRoot,
    detached: true,
    env: { ...process.env, TATRA_THREADS: '1', TATRA_CACHE_DIR: cache },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let sent = false;
  child.stdout.resume();
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (!sent && stderr.includes('loading models')) {
      sent = true;
      process.kill(group ? -child.pid! : child.pid!, 'SIGINT');
    }
  });
  const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  expect(sent, stderr).toBe(true);
  return { code, stderr, model };
}

it.each([
  ['the process group (Ctrl-C in a terminal)', true],
  ['the CLI alone (kill -INT)', false],
])('SIGINT to %s while the models load pauses the job and stops the load', async (name, group) => {
  const cache = join(dir, `cache-${group}`);
  const dataDir = join(dir, `data-${group}`);
  const { code, stderr, model } = await evalInterruptedWhileLoading(cache, dataDir, group);
  expect(code, `${name}: ${stderr}`).toBe(130);
  const lines = stderr.trim().split('\n');
  expect(lines.at(-1)).toMatch(/^paused job \S+ at 0\/2 rows; continue with: tatra jobs resume \S+$/);
  expect(stderr).not.toMatch(/cannot load|crashes on it|refused it|tatra: /);
  const [job] = queryJobDb<{ status: string }>(dataDir, 'SELECT status FROM jobs');
  expect(job?.status).toBe('paused');
  // The trial load was stopped, not finished: nothing vouches for the file yet.
  const verdicts = join(cache, 'vouched-models.json');
  // (Before, a SIGINT to the CLI alone let the trial run to its end and record it.)
  if (existsSync(verdicts)) expect(readFileSync(verdicts, 'utf8')).not.toContain(model);
  // And nothing of it is left running.
  const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(cache) && l.includes('trial-load'));
  expect(left).toEqual([]);
});

it('Ctrl-C while llama.cpp itself starts (the model already tried) is the one paused line, not a library stack trace', async () => {
  const cache = join(dir, 'cache-tried');
  const previous = process.env.TATRA_CACHE_DIR;
  process.env.TATRA_CACHE_DIR = cache;
  try {
    await vouchForModel(await tinyModelPath());
  } finally {
    if (previous === undefined) delete process.env.TATRA_CACHE_DIR;
    else process.env.TATRA_CACHE_DIR = previous;
  }
  // node-llama-cpp tests its binary in a child of its own then, which the group's SIGINT ends.
  const { code, stderr } = await evalInterruptedWhileLoading(cache, join(dir, 'data-tried'), true);
  expect(code, stderr).toBe(130);
  expect(stderr).not.toMatch(/node-llama-cpp|^\s+at /m);
  expect(stderr.trim().split('\n').at(-1)).toMatch(/^paused job \S+ at 0\/2 rows; continue with: tatra jobs resume \S+$/);
});

