// Threads that do not spin against each other: llama.cpp's CPU threads meet at a barrier after
// every operation of a decode (hundreds per token) and wait there by spinning, never sleeping. When
// another process keeps a core busy, the thread that shares that core is descheduled for whole
// time slices while the others spin, and every barrier waits for it: measured on 2 cores with other
// work running (load ~11), evaluator calls ran 5× faster on 1 thread than on 2. So the process's
// thread budget (node-llama-cpp's `llama.maxThreads`, shared by its contexts) follows the cores
// other processes leave free, sampled twice a second: all of them on an idle machine, fewer while
// others are busy, never fewer than 1 or than a context that must keep its thread count needs.
//
// The thread count does not change a token's numbers under the lockstep schedule (every ubatch has
// two or more tokens and sequences, so no kernel splits a reduction by thread;
// bench/determinism-probe.ts "1 thread instead of 2"), so adapting it keeps results reproducible.
import { cpus } from 'node:os';
import type { Llama } from 'node-llama-cpp';

/** How often the machine's CPU use is sampled. */
const SAMPLE_MS = 500;

export interface CpuLoad {
  /** Logical cores. */
  cores: number;
  /** Cores' worth of CPU time other processes used in the last interval. */
  others: number;
}

/**
 * Threads for llama.cpp given what other processes use: the cores they leave free, counting a core
 * as free while they use up to 0.6 of one (a background of browser tabs and editors should not cost
 * a thread; one busy process should), between `floor` and `max`.
 */
export function threadBudget(load: CpuLoad, max: number, floor = 1): number {
  const free = load.cores - Math.max(0, Math.ceil(load.others - 0.6));
  return Math.max(1, floor, Math.min(max, free));
}

/** Busy CPU time of the whole machine and of this process, in microseconds. */
function cpuTimes(): { machine: number; own: number; at: number } {
  let machine = 0;
  for (const { times } of cpus()) machine += (times.user + times.nice + times.sys + times.irq) * 1000;
  const own = process.cpuUsage();
  return { machine, own: own.user + own.system, at: performance.now() };
}

export interface ContentionWatch {
  /** The last sample (null before the first interval ends). */
  readonly load: CpuLoad | null;
  /**
   * Keeps the budget at `threads` or more while the returned release function is not called: for
   * a context whose thread count must not change.
   */
  pin(threads: number): () => void;
  /** Stops adapting and gives the runtime back `max` threads (benchmarks compare with and without). */
  stop(): void;
}

/** Starts adapting `llama.maxThreads` (at most `max`) to the load other processes put on the machine. */
export function watchContention(llama: Llama, max: number): ContentionWatch {
  let last = cpuTimes();
  let load: CpuLoad | null = null;
  const pins = new Map<symbol, number>();
  const floor = () => Math.max(1, ...pins.values());
  const apply = () => {
    const budget = load ? threadBudget(load, max, floor()) : max;
    if (llama.maxThreads !== budget) llama.maxThreads = budget;
  };
  const timer = setInterval(() => {
    const now = cpuTimes();
    const wall = (now.at - last.at) * 1000;
    if (wall > 0) load = { cores: cpus().length, others: Math.max(0, (now.machine - last.machine - (now.own - last.own)) / wall) };
    last = now;
    apply();
  }, SAMPLE_MS);
  timer.unref();
  return {
    get load() {
      return load;
    },
    pin(threads) {
      const key = Symbol('pin');
      pins.set(key, threads);
      apply();
      return () => {
        pins.delete(key);
        apply();
      };
    },
    stop() {
      clearInterval(timer);
      load = null;
      apply();
    },
  };
}
