// Starting the instant OpenAI-compatible server (instant-openai-server.ts) in its own process, and
// the check that a job killed and resumed against it did every row exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { quoteSafe } from '../../electron/engine/parse';
import { queryJobDb, repoRoot } from './tatra-cli';

export interface InstantServerStats {
  /** Generation calls answered. */
  calls: number;
  /** Arrival of the first call and answer of the last since the reset (performance.now() of the server). */
  firstMs: number | null;
  lastMs: number | null;
  /** Most requests open at once. */
  maxOpen: number;
  /** Calls by what they asked for. */
  byStage: Record<string, number>;
  /** Answers held now (POST /bench/hold). */
  held: number;
}

export interface InstantServer {
  /** http://127.0.0.1:PORT (the OpenAI API root is `${origin}/v1`). */
  origin: string;
  stats(): Promise<InstantServerStats>;
  /** The original input of every evaluation call since the reset (not of the server's paraphrases). */
  originals(): Promise<string[]>;
  reset(): Promise<void>;
  /** Resolves once at least `count` requests are held (answered by the server when it holds them). */
  heldAtLeast(count: number): Promise<void>;
  /** Stops answering now, or once `after` more generation calls have arrived. */
  hold(after?: number): Promise<void>;
  /** Answers the held requests; with `thenHoldAfter`, holds again once that many more calls have arrived. */
  release(thenHoldAfter?: number): Promise<void>;
  stop(): void;
}

export interface InstantServerOptions {
  kind?: 'vllm' | 'openai-compatible';
  /** Each answer after this many ms. */
  latencyMs?: number;
  /** At most this many answered at once (0: no limit). */
  capacity?: number;
}

/** Starts the server and resolves once it listens. */
export async function startInstantServer(opts: InstantServerOptions = {}): Promise<InstantServer> {
  const args = ['--kind', opts.kind ?? 'vllm', '--latency', String(opts.latencyMs ?? 0), '--capacity', String(opts.capacity ?? 0)];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'test/helpers/instant-openai-server.ts'), ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let origin: string | null = null;
  for await (const line of createInterface({ input: child.stdout! })) {
    const m = /^listening (\d+)$/.exec(line);
    if (m) {
      origin = `http://127.0.0.1:${m[1]}`;
      break;
    }
  }
  if (!origin) throw new Error('the instant server did not start');
  const at = origin;
  const get = async <T>(path: string): Promise<T> => (await fetch(`${at}${path}`)).json() as Promise<T>;
  const post = async (path: string): Promise<void> => void (await (await fetch(`${at}${path}`, { method: 'POST' })).text());
  return {
    origin,
    stats: () => get<InstantServerStats>('/bench/stats'),
    originals: () => get<string[]>('/bench/originals'),
    reset: () => post('/bench/reset'),
    heldAtLeast: async (count: number) => void (await get<{ held: number }>(`/bench/held?atLeast=${count}`)),
    hold: (after?: number) => post(after === undefined ? '/bench/hold' : `/bench/hold?after=${after}`),
    release: (thenHoldAfter?: number) => post(thenHoldAfter === undefined ? '/bench/release' : `/bench/release?then=${thenHoldAfter}`),
    stop: () => void child.kill('SIGTERM'),
  };
}

/** Calls per second as the server counted them: from the first call's arrival to the last one's answer. */
export function serverRate(s: InstantServerStats): number {
  return s.firstMs === null || s.lastMs === null || s.lastMs <= s.firstMs ? 0 : s.calls / ((s.lastMs - s.firstMs) / 1000);
}

/** Indexes and inputs of the rows of the job in `dataDir` committed now. */
export function committedRows(dataDir: string): Map<number, string> {
  return new Map(queryJobDb<{ idx: number; input: string }>(dataDir, `SELECT idx, input FROM job_rows WHERE status = 'done'`).map((r) => [r.idx, r.input]));
}

/**
 * Every row of the job in `dataDir` done exactly once, after a kill and a resume: all rows are
 * done, and the resumed session evaluated the original input of each row not committed before the
 * kill exactly r times (once per run; evaluations are never cached), and of no row committed
 * before. `originals`: what the server saw since the resume began. Returns the problems (none: []).
 */
export function resumeProblems(dataDir: string, committedBefore: Map<number, string>, originals: readonly string[], r: number): string[] {
  const rows = queryJobDb<{ idx: number; input: string; status: string }>(dataDir, `SELECT idx, input, status FROM job_rows ORDER BY idx`);
  const problems: string[] = [];
  if (rows.length === 0) problems.push('no rows');
  const notDone = rows.filter((row) => row.status !== 'done').length;
  if (notDone > 0) problems.push(`${notDone} rows not done`);
  const expected = new Map<string, number>();
  for (const row of rows) {
    if (committedBefore.has(row.idx)) continue;
    const key = quoteSafe(row.input.trim());
    expected.set(key, (expected.get(key) ?? 0) + r);
  }
  const seen = new Map<string, number>();
  for (const o of originals) seen.set(o, (seen.get(o) ?? 0) + 1);
  const wrong = [...new Set([...expected.keys(), ...seen.keys()])].filter((key) => (expected.get(key) ?? 0) !== (seen.get(key) ?? 0));
  if (wrong.length > 0) problems.push(`${wrong.length} inputs evaluated another number of times than r per row not committed before (first: "${wrong[0]}": ${seen.get(wrong[0]!) ?? 0}, expected ${expected.get(wrong[0]!) ?? 0})`);
  return problems;
}
