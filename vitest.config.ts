// Two kinds of tests, mirrored on the source tree (like node-llama-cpp's test/standalone and
// test/modelDependent): `unit` needs no model and runs in parallel; `model` runs real inference
// through node-llama-cpp on synthetic GGUFs, in one worker so one Llama instance serves them all
// and two model-heavy files never fight over the two cores.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.{ts,tsx}'],
          environment: 'node',
          globalSetup: ['test/unit/global-setup.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'model',
          include: ['test/model/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/model/global-setup.ts'],
          pool: 'forks',
          maxWorkers: 1,
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
