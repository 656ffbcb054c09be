// Running the built `tatra api` from a model test: started as a child process like any user would,
// ready once it prints `listening on http://…`, stopped with a signal like a service manager does.
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI_ENV, TATRA, repoRoot } from './tatra-cli';

export interface RunningTatraApi {
  /** http://127.0.0.1:PORT, as printed. */
  origin: string;
  process: ChildProcess;
  /** Everything written on stderr so far. */
  stderr(): string;
  /** Sends `signal` and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startTatraApi(args: string[]): Promise<RunningTatraApi> {
  const child = spawn(process.execPath, [TATRA, 'api', '--port', '0', ...args], { cwd: repoRoot, env: CLI_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
      const m = /^listening on (http:\/\/\S+)$/m.exec(stdout);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`tatra api exited with ${code} before listening:\n${stderr}`)));
  });
  return {
    origin,
    process: child,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
