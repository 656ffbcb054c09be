// Starting `tatra serve` from a spec or the global set-up: the built CLI on a data folder, one
// thread, and the URL it prints (token included) once it listens.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface Served {
  child: ChildProcess;
  /** The URL it printed, token included. */
  url: string;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

/** Starts `tatra serve --port <port> --data-dir <dataDir> --threads 1` and resolves with its URL. */
export async function startServe(opts: { dataDir: string; port: number; env?: NodeJS.ProcessEnv; echo?: boolean }): Promise<Served> {
  const child = spawn(process.execPath, ['bin/tatra.js', 'serve', '--port', String(opts.port), '--data-dir', opts.dataDir, '--threads', '1'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'test', ...opts.env },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (opts.echo) process.stderr.write(d);
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`tatra serve printed no URL within 30 s; stderr: ${stderr}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tatra serve exited with ${code}: ${stderr}`));
    });
  });
  return { child, url, stderr: () => stderr };
}

/**
 * Stops a server started by startServe with SIGTERM and checks that it stopped as `tatra serve`
 * promises: the host disposed and exit code 0, within 15 s (then it is killed and this throws).
 */
export async function stopServe(served: Served): Promise<void> {
  const { child } = served;
  if (child.exitCode !== null || child.signalCode !== null) throw new Error(`tatra serve ended before it was stopped (${child.exitCode ?? child.signalCode}); stderr: ${served.stderr()}`);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 15_000)))]);
  clearTimeout(timer);
  if (code === 'timeout') {
    child.kill('SIGKILL');
    throw new Error(`tatra serve did not exit within 15 s of SIGTERM; stderr: ${served.stderr()}`);
  }
  if (code !== 0) throw new Error(`tatra serve exited with ${code} on SIGTERM; stderr: ${served.stderr()}`);
}
