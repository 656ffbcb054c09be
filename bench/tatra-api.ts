// The real `tatra api` for benchmarks: the built CLI as a child process, with a key to call it and
// its origin once it says where it listens (bench/api-service.ts, bench/api-soak.ts).
import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const TATRA = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'bin', 'tatra.js');

/** A new API key named `name` in the data folder `env` points at. */
export async function addApiKey(name: string, env: NodeJS.ProcessEnv): Promise<string> {
  return (await promisify(execFile)(process.execPath, [TATRA, 'api', 'keys', 'add', name], { env })).stdout.trim();
}

/** Starts `tatra api --port 0 ...args` and resolves once it prints its origin. */
export async function startTatraApi(args: string[], env: NodeJS.ProcessEnv): Promise<{ server: ChildProcessByStdio<null, Readable, null>; origin: string }> {
  const server = spawn(process.execPath, [TATRA, 'api', '--port', '0', ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const origin = await new Promise<string>((resolveOrigin, reject) => {
    let out = '';
    server.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const m = /listening on (\S+)/.exec(out);
      if (m) resolveOrigin(m[1]!);
    });
    server.once('exit', (code) => reject(new Error(`tatra api exited with ${code}`)));
  });
  return { server, origin };
}
