// The thread budget under contention (llama/contention.ts): llama.cpp's threads spin at every
// barrier, so the process uses only the cores other processes leave free.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import type { Llama } from 'node-llama-cpp';
import { afterEach, describe, expect, it } from 'vitest';
import { threadBudget, watchContention, type ContentionWatch } from '../../../electron/llama/contention';

describe('thread budget', () => {
  it('is every core on an idle machine and drops a core per busy one, never below 1 nor above the cap', () => {
    expect(threadBudget({ cores: 2, others: 0 }, 2)).toBe(2);
    // A background of tabs and editors does not cost a thread; one busy process does.
    expect(threadBudget({ cores: 2, others: 0.5 }, 2)).toBe(2);
    expect(threadBudget({ cores: 2, others: 0.7 }, 2)).toBe(1);
    expect(threadBudget({ cores: 2, others: 1 }, 2)).toBe(1);
    expect(threadBudget({ cores: 2, others: 5 }, 2)).toBe(1);
    expect(threadBudget({ cores: 8, others: 2 }, 7)).toBe(6);
    expect(threadBudget({ cores: 8, others: 0 }, 7)).toBe(7);
    // A pinned context keeps its threads whatever the load.
    expect(threadBudget({ cores: 2, others: 2 }, 2, 2)).toBe(2);
  });
});

describe('contention watch', () => {
  let watch: ContentionWatch | undefined;
  const busy: ReturnType<typeof spawn>[] = [];
  afterEach(() => {
    watch?.stop();
    for (const child of busy.splice(0)) child.kill('SIGKILL');
  });

  it.skipIf(availableParallelism() < 2)('lowers the budget while another process keeps a core busy, holds it for a pin, and gives it back when stopped', async () => {
    const cores = availableParallelism();
    // The watch sets llama.maxThreads; the test waits for the assignment that lowers it.
    let threads = cores;
    let lowered!: () => void;
    const whenLowered = new Promise<void>((r) => (lowered = r));
    const llama = {
      get maxThreads() {
        return threads;
      },
      set maxThreads(n: number) {
        threads = n;
        if (n < cores) lowered();
      },
    } as Llama;
    watch = watchContention(llama, cores);
    busy.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    await whenLowered;
    expect(watch.load!.others).toBeGreaterThan(0.7);
    expect(llama.maxThreads).toBeLessThan(cores);
    const release = watch.pin(cores);
    expect(llama.maxThreads).toBe(cores);
    release();
    expect(llama.maxThreads).toBeLessThan(cores);
    watch.stop();
    expect(llama.maxThreads).toBe(cores);
  });
});
