// A real OpenAI-compatible server for the remote-backend tests and benchmarks: llama-server, built by
// tools/build-llama-server.sh from the llama.cpp source node-llama-cpp ships, once per machine and
// llama.cpp release, into the per-user cache (~/.cache/tatra-studio/llama-server/<release>/), or
// the binary TATRA_LLAMA_SERVER names. The script alone says where it is: it prints the path last.
// The model tests' and the e2e tests' global set-ups run it first, so no test pays for a build.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

let built: Promise<string> | undefined;

/** The llama-server binary, built if missing or stale; rejects with the build's own error output. */
export function ensureLlamaServer(): Promise<string> {
  built ??= promisify(execFile)('bash', [join(repoRoot, 'tools', 'build-llama-server.sh')], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout }) => {
      const path = stdout.trim().split('\n').at(-1) ?? '';
      if (!existsSync(path)) throw new Error(`tools/build-llama-server.sh ran but printed no binary that exists (its last line: ${JSON.stringify(path)})`);
      return path;
    },
    (e: unknown) => {
      const err = e as { stderr?: string; message?: string };
      throw new Error(`llama-server could not be built (bash tools/build-llama-server.sh): ${(err.stderr ?? err.message ?? String(e)).slice(-2000)}`);
    },
  );
  return built;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export interface LlamaServerOptions {
  model: string;
  /** Name the server lists the model under (default "tiny"). */
  alias?: string;
  /** Parallel slots (default 2). */
  parallel?: number;
  /** CPU threads (default 1). */
  threads?: number;
  /** Total context over all slots (default 4096 per slot). */
  contextSize?: number;
  port?: number;
  extraArgs?: string[];
}

export interface RunningLlamaServer {
  /** The OpenAI API root, http://127.0.0.1:PORT/v1. */
  url: string;
  port: number;
  process: ChildProcess;
  /** Recent output, for failure messages. */
  log(): string;
  /** SIGKILL (a crash, not a shutdown). */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Resolves once llama-server says it serves: this build prints "listening on http://HOST:PORT" once
 * its model is loaded and /health answers 200 (tools/server/server.cpp). Rejects with its output
 * when it exits (or fails to start) first. No deadline: a slow machine only makes it later, and a
 * start-up that never ends is ended by the test's own timeout.
 */
function listening(child: ChildProcess, port: number, output: () => string): Promise<void> {
  const said = new RegExp(`listening on http://127\\.0\\.0\\.1:${port}\\s`);
  return new Promise((resolve, reject) => {
    // Each stream read on its own, so a line split between two chunks is whole again.
    const readers = [child.stdout, child.stderr].flatMap((stream) => {
      if (!stream) return [];
      let text = '';
      const onData = (d: Buffer) => {
        text = text.slice(-4096) + d.toString('utf8');
        if (said.test(text)) done(resolve);
      };
      stream.on('data', onData);
      return [() => void stream.off('data', onData)];
    });
    const done = (settle: () => void) => {
      for (const off of readers) off();
      child.off('close', onClose);
      child.off('error', onError);
      settle();
    };
    // Once its output is all read. A crash ends it with a signal and no exit code: either is named.
    const onClose = (code: number | null, signal: NodeJS.Signals | null) => done(() => reject(new Error(`llama-server exited with ${code ?? signal} before it listened:\n${output()}`)));
    const onError = (e: Error) => done(() => reject(new Error(`llama-server did not start: ${e.message}`)));
    child.once('close', onClose);
    child.once('error', onError);
  });
}

/** Starts llama-server on the model and waits until it says it listens, its model loaded (however long that takes on a contended CPU). */
export async function startLlamaServer(opts: LlamaServerOptions): Promise<RunningLlamaServer> {
  const binary = await ensureLlamaServer();
  const port = opts.port ?? (await freePort());
  const parallel = opts.parallel ?? 2;
  const args = [
    '-m', opts.model,
    '--host', '127.0.0.1',
    '--port', String(port),
    '--alias', opts.alias ?? 'tiny',
    '-t', String(opts.threads ?? 1),
    '-tb', String(opts.threads ?? 1),
    '-np', String(parallel),
    '-c', String(opts.contextSize ?? 4096 * parallel),
    '-ngl', '0',
    ...(opts.extraArgs ?? []),
  ];
  let output = '';
  let child: ChildProcess;
  const launch = async () => {
    child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer) => {
      output = (output + d.toString('utf8')).slice(-8000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    await listening(child, port, () => output);
  };
  await launch();
  const exited = () =>
    new Promise<void>((r) => {
      if (child.exitCode !== null || child.signalCode !== null) return r();
      child.once('exit', () => r());
    });
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    get process() {
      return child;
    },
    log: () => output,
    async kill() {
      child.kill('SIGKILL');
      await exited();
    },
    async restart() {
      await launch();
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited();
      clearTimeout(timer);
    },
  };
}
