// The one thread default for node-llama-cpp, read by every face (CLI, `tatra serve`, the desktop
// app, the hardware panel). Explicit because node-llama-cpp's own CPU default busy-waits on small
// machines and runs ~10x slower there (docs/architecture.md, "node-llama-cpp").
import { availableParallelism } from 'node:os';
import { UserError } from '../common/errors';

/** Up to this many cores, inference uses every one of them. */
const ALL_CORES_UP_TO = 4;

/**
 * Threads for `cores` cores and the value of $TATRA_THREADS (if set).
 * ≤ 4 cores: all of them. Token generation is compute-bound and scales with threads there, so
 * keeping a core back for the UI would halve throughput on 2 cores; the UI's event loop is idle
 * while inference runs in llama.cpp's own threads, and the OS schedules it between them.
 * More cores: all but one. A fifth of the speed or less, and it keeps the main process, SQLite
 * and the rest of the desktop responsive while a long evaluation runs.
 */
export function threadsFor(cores: number, env: string | undefined): number {
  if (env !== undefined && env.trim() !== '') {
    const t = env.trim();
    if (!/^\d+$/.test(t) || Number(t) < 1) throw new UserError(`TATRA_THREADS must be a whole number of at least 1, got "${env}"`, 'bad_env');
    return Number(t);
  }
  const c = Math.max(1, Math.floor(cores));
  return c <= ALL_CORES_UP_TO ? c : c - 1;
}

/** This machine's default: $TATRA_THREADS, else threadsFor(its cores). */
export function defaultThreads(): number {
  return threadsFor(availableParallelism(), process.env.TATRA_THREADS);
}

/** What --threads says its default is. */
export const THREADS_HELP = `CPU threads for inference (default $TATRA_THREADS, else every core up to ${ALL_CORES_UP_TO}, then all but one)`;
