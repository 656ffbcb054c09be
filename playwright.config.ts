// End-to-end tests in Debian's Chromium against browser mode (`tatra serve`), the real engine and
// a tiny synthetic model. e2e/global-setup.ts builds what is missing and makes the models; each
// worker starts its own server on a free port with a fresh data folder (e2e/fixtures.ts).
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumPath } from './e2e/browser';
import type { WorkerOptions } from './e2e/fixtures';

export default defineConfig<object, WorkerOptions>({
  testDir: 'e2e',
  outputDir: 'test-results',
  globalSetup: './e2e/global-setup.ts',
  // Two workers, each with its own server (one inference thread) and browser: one's inference
  // overlaps the other's page work on two cores. A file's tests run in order on one worker.
  workers: 2,
  fullyParallel: false,
  timeout: 180_000,
  expect: { timeout: 30_000 },
  retries: 0,
  reporter: [['list']],
  // The first-run spec meets its server as a fresh install (no model, no settings); every other
  // spec's server has the model added as first-run adds it (e2e/fixtures.ts freshInstall).
  projects: [
    { name: 'first-run', testMatch: 'first-run.spec.ts', use: { freshInstall: true } },
    { name: 'app', testIgnore: 'first-run.spec.ts' },
  ],
  use: {
    browserName: 'chromium',
    viewport: { width: 1440, height: 960 },
    acceptDownloads: true,
    trace: 'retain-on-failure',
    // Debian's Chromium: its headless shell where installed, the full browser for a headed run (e2e/browser.ts).
    launchOptions: { executablePath: chromiumPath(), args: CHROMIUM_ARGS },
  },
});
