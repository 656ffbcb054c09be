// End-to-end tests in Debian's Chromium against browser mode (`tatra serve`), the real engine and
// a tiny synthetic model. e2e/global-setup.ts builds what is missing, starts the server on a free
// port with a fresh data folder and hands its URL to the tests (see e2e/fixtures.ts).
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  globalSetup: './e2e/global-setup.ts',
  // One server, one model, two cores: tests run one at a time.
  workers: 1,
  fullyParallel: false,
  timeout: 180_000,
  expect: { timeout: 30_000 },
  retries: 0,
  reporter: [['list']],
  // The first-run spec meets the server as a fresh install (no model, no settings), so it runs
  // before every other spec, on the same server.
  projects: [
    { name: 'first-run', testMatch: 'first-run.spec.ts' },
    { name: 'app', testIgnore: 'first-run.spec.ts', dependencies: ['first-run'] },
  ],
  use: {
    browserName: 'chromium',
    viewport: { width: 1440, height: 960 },
    acceptDownloads: true,
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
});
