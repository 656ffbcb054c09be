// Three kinds of tests, mirrored on the source tree (like node-llama-cpp's test/standalone and
// test/modelDependent):
// - `unit` needs no model and runs in parallel, on at least two workers: vitest's default is one
//   fewer than the cores, one on a two-core machine, where most of these files wait on sockets,
//   files and child processes rather than on a core.
// - `fuzz` is the HTTP fuzz of both servers (test/unit/web/fuzz.test.ts), a minute of its own:
//   `npx vitest run --project fuzz` after any change to request handling; it runs beside `unit`.
// - `model` runs real inference through node-llama-cpp on synthetic GGUFs, on two workers too: a
//   file decodes on one thread and waits on child processes and files between, so one file at a
//   time left a core idle (alone on two cores: 928 s on one worker, 709 s on two). It runs after
//   `unit` and `fuzz` (groupOrder); the browser tests follow it (package.json).
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const parallelWorkers = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.{ts,tsx}'],
          exclude: ['test/unit/web/fuzz.test.ts'],
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
          maxWorkers: parallelWorkers,
          sequence: { groupOrder: 1 },
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
