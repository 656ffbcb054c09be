// Three kinds of tests, mirrored on the source tree (like node-llama-cpp's test/standalone and
// test/modelDependent):
// - `unit` needs no model and runs in parallel, on at least two workers: vitest's default is one
//   fewer than the cores, one on a two-core machine, where most of these files wait on sockets,
//   files and child processes rather than on a core.
// - `unit-isolated` holds the unit files that need a module graph of their own (found by reading
//   them): those that replace a module with vi.mock (a replaced module must be imported afresh),
//   and those that render the app's pages in jsdom (the page's state is module state, the store
//   and its slices' in-flight loads, one page's as in the app: a library load a file left pending
//   kept the next file's Models view empty). `unit` and `model` share one module graph per worker (isolate: false): importing the
//   engine, node-llama-cpp, SQLite and React again for each of 160 files was a third of `unit`'s
//   time (unit and fuzz 220 s -> 150 s, model 278 s -> 240 s on two cores), and node-llama-cpp's start
//   (a child process that tries its binary) is paid once per worker, not once per file. What a
//   file leaves behind would reach the files after it, in an order that varies: the environment,
//   the working folder and fake timers must be as the file found them (test/helpers/
//   shared-worker.ts fails the file that does not).
// - `fuzz` is the HTTP fuzz of both servers (test/unit/web/fuzz.test.ts), a minute of its own:
//   `npx vitest run --project fuzz` after any change to request handling; it runs beside `unit`.
// - `model` runs real inference through node-llama-cpp on synthetic GGUFs, on two workers too: a
//   file decodes on one thread and waits on child processes and files between, so one file at a
//   time left a core idle (alone on two cores: 928 s on one worker, 709 s on two). It runs after
//   `unit` and `fuzz` (groupOrder); the browser tests follow it (package.json).
import { readFileSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const parallelWorkers = Math.max(2, availableParallelism() - 1);

const root = dirname(fileURLToPath(import.meta.url));

/** Unit test files that replace a module (vi.mock, vi.doMock) or render pages (jsdom): each needs a module graph of its own. */
const isolatedFiles = (readdirSync(join(root, 'test/unit'), { recursive: true, encoding: 'utf8' }) as string[])
  .filter((f) => /\.test\.tsx?$/.test(f) && /\bvi\.(mock|doMock)\(|@vitest-environment jsdom/.test(readFileSync(join(root, 'test/unit', f), 'utf8')))
  .map((f) => `test/unit/${f.split('\\').join('/')}`);

/** Checks that each file of a shared worker leaves the process as it found it. */
const sharedWorker = ['test/helpers/shared-worker.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.{ts,tsx}'],
          exclude: ['test/unit/web/fuzz.test.ts', ...isolatedFiles],
          environment: 'node',
          globalSetup: ['test/unit/global-setup.ts'],
          isolate: false,
          setupFiles: sharedWorker,
          maxWorkers: parallelWorkers,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'unit-isolated',
          include: isolatedFiles,
          environment: 'node',
          globalSetup: ['test/unit/global-setup.ts'],
          maxWorkers: parallelWorkers,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'fuzz',
          include: ['test/unit/web/fuzz.test.ts'],
          environment: 'node',
          maxWorkers: parallelWorkers,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'model',
          include: ['test/model/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/model/global-setup.ts'],
          pool: 'forks',
          isolate: false,
          setupFiles: sharedWorker,
          maxWorkers: parallelWorkers,
          sequence: { groupOrder: 1 },
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
