// Running the built `tatra` CLI from a model test, and reading what it left: the last JSON line
// of its output, and the job database (read-only) while or after it runs.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, watch } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { openJobStore } from '../../electron/jobs/store';
import type { JobRow } from '../../electron/jobs/types';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TATRA = join(repoRoot, 'bin', 'tatra.js');
/** One thread: several test processes share two cores. */
export const CLI_ENV = { ...process.env, TATRA_THREADS: '1' };

/** Runs `tatra …` to the end; rejects (with code, stdout, stderr) on a non-zero exit. */
export function tatraCli(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [TATRA, ...args], { cwd: repoRoot, env: CLI_ENV, maxBuffer: 64 * 1024 * 1024 });
}

/** What a run of `tatra …` printed, and the code it exited with. */
export interface CliRun {
  stdout: string;
  stderr: string;
  code: number;
}

let inProcessQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs `tatra …` to the end inside this process (electron/cli/program.ts runTatra), as a child
 * would: its output captured, TATRA_THREADS=1 and `env` set in process.env while it runs, resolving with its exit code whatever it is. What it
 * saves is Node's start-up and the CLI's imports for each command; in a file that asks for it
 * (beforeAll(keepModelsBetweenRuns), afterAll(releaseInProcessRuns)) also node-llama-cpp's start
 * and the model loads: each command still opens and closes its services, but node-llama-cpp's
 * runtime and the models it loaded stay for the next command that loads the same file with the
 * same settings (cli/session.ts keepModelsBetweenCommands). Runs one at a time (the output
 * streams and the runtime are the process's). A test file keeps a spawned run (tatraCli) of the
 * commands it runs, so the built bundle, its exit and its signals are still tried, and its models
 * loaded afresh.
 */
export function tatraRunInProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const run = inProcessQueue.then(() => runInProcess(args, env));
  inProcessQueue = run.catch(() => undefined);
  return run;
}

/** tatraCli's contract in this process: rejects (with code, stdout, stderr) on a non-zero exit. */
export async function tatraInProcess(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const { stdout, stderr, code } = await tatraRunInProcess(args);
  if (code !== 0) throw Object.assign(new Error(`tatra ${args.join(' ')} exited with ${code}: ${stderr}`), { code, stdout, stderr });
  return { stdout, stderr };
}

let keeping = false;
let releaseKept: (() => Promise<void>) | undefined;

/** From now on the commands run in this process keep node-llama-cpp and their models for the next (beforeAll). */
export function keepModelsBetweenRuns(): void {
  keeping = true;
}

/** Unloads what the commands run in this process kept (models, node-llama-cpp's runtime), once they are done (afterAll). */
export async function releaseInProcessRuns(): Promise<void> {
  keeping = false;
  await inProcessQueue;
  const release = releaseKept;
  releaseKept = undefined;
  await release?.();
}

async function runInProcess(args: string[], env: Record<string, string>): Promise<CliRun> {
  const [{ runTatra }, { redirectOutput }, { keepModelsBetweenCommands }] = await Promise.all([
    import('../../electron/cli/program'),
    import('../../electron/cli/terminal'),
    import('../../electron/cli/session'),
  ]);
  if (keeping) releaseKept ??= keepModelsBetweenCommands();
  const out: string[] = [];
  const err: string[] = [];
  const vars = { TATRA_THREADS: CLI_ENV.TATRA_THREADS, ...env };
  const saved = Object.keys(vars).map((name) => [name, process.env[name]] as const);
  const exitCode = process.exitCode;
  Object.assign(process.env, vars);
  process.exitCode = undefined;
  const restore = redirectOutput({ out: (t) => out.push(t), err: (t) => err.push(t) });
  try {
    const code = (await runTatra([process.execPath, TATRA, ...args])) ?? Number(process.exitCode ?? 0);
    return { stdout: out.join(''), stderr: err.join(''), code };
  } finally {
    restore();
    process.exitCode = exitCode;
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** The JSON a --json command printed (its last line that is an object or an array). */
export function lastJson<T>(stdout: string): T {
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{') || l.startsWith('[')).pop();
  if (!line) throw new Error(`no JSON in output: ${stdout.slice(0, 500)}`);
  return JSON.parse(line) as T;
}

/** Rows of a query on `<dataDir>/tatra.db`, read-only; none while the file does not exist yet. */
export function queryJobDb<T>(dataDir: string, sql: string, ...params: unknown[]): T[] {
  try {
    const db = new Database(join(dataDir, 'tatra.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  } catch {
    return [];
  }
}

/**
 * Rows of a query on `<dataDir>/tatra.db` once they meet `condition`: read when the file appears and
 * again each time a process commits to it (fs.watch sees its write-ahead log change), never on a
 * timer, through one read-only connection (a new connection's first read touches the log too, and
 * would wake itself). Until `stop` settles (the writer's exit, say): then it resolves with the rows
 * as they are, so the expectation after it says what happened. A query that fails before then is
 * taken as a database still being made, and tried again on the next commit.
 */
export function whenJobDb<T>(dataDir: string, sql: string, condition: (rows: T[]) => boolean, stop: Promise<unknown>): Promise<T[]> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, 'tatra.db');
  let db: Database.Database | undefined;
  return new Promise<T[]>((resolve, reject) => {
    // Watching starts before the first read, so no commit falls between the two.
    const watcher = watch(dataDir, { persistent: false });
    const finish = (settle: () => void) => {
      watcher.close();
      db?.close();
      settle();
    };
    const check = (): void => {
      try {
        if (!db && existsSync(path)) db = new Database(path, { readonly: true, fileMustExist: true });
        const rows = db ? (db.prepare(sql).all() as T[]) : [];
        if (condition(rows)) finish(() => resolve(rows));
      } catch {
        /* not made yet: the next commit tries again */
      }
    };
    watcher.on('change', (_type: string, file: string | null) => {
      // The -shm index changes with every read, ours too.
      if (!file?.endsWith('-shm')) check();
    });
    watcher.on('error', (e) => finish(() => reject(e)));
    void stop.then(() => finish(() => resolve(queryJobDb<T>(dataDir, sql))));
    check();
  });
}

/**
 * A job's rows as the app reads them (JobStore: runs with their paraphrases, whether a row holds
 * them or refers to the cache for them, stage counts decompressed), once no process writes the file.
 */
export function storedJobRows(dataDir: string, jobId: string): JobRow[] {
  const store = openJobStore(dataDir);
  try {
    return [...store.iterateRows(jobId)];
  } finally {
    store.close();
  }
}
