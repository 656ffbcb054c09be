// What every browser-mode spec needs: its worker's own `tatra serve` (started on the worker's first
// test, stopped after its last), the model, an API caller that uses the token like a script would,
// and a page already past the token step.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, expect, type Page, type Response } from '@playwright/test';
import WebSocket from 'ws';
import { recordEvents } from '../test/helpers/events';
import { startServe, stopServe } from './serve';

export interface ServerInfo {
  /** The URL tatra serve printed, token included. */
  url: string;
  origin: string;
  token: string;
  /** The tiny synthetic model. */
  model: string;
  dataDir: string;
  /** The server's models folder (empty at the start; downloads land there). */
  modelsDir: string;
}

export function serverInfo(): ServerInfo {
  const env = process.env;
  if (!env.TATRA_E2E_URL) throw new Error('TATRA_E2E_URL is unset: each worker starts tatra serve through the test of e2e/fixtures.ts (its workerServer fixture)');
  return { url: env.TATRA_E2E_URL, origin: env.TATRA_E2E_ORIGIN!, token: env.TATRA_E2E_TOKEN!, model: env.TATRA_E2E_MODEL!, dataDir: env.TATRA_E2E_DATA_DIR!, modelsDir: env.TATRA_E2E_MODELS_DIR! };
}

/** Calls the API of the server at `url` (as tatra serve printed it) as a non-browser client (token header, no Origin). */
export async function callServer<T = unknown>(url: string, method: string, input: unknown = {}): Promise<T> {
  const u = new URL(url);
  const res = await fetch(`${u.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': u.searchParams.get('token') ?? '' },
    body: JSON.stringify({ method, input }),
  });
  const reply = (await res.json()) as { ok: boolean; value?: T; error?: { message: string } };
  if (!reply.ok) throw new Error(`${method}: ${reply.error?.message}`);
  return reply.value as T;
}

/** Calls this worker's server's API as a non-browser client (token header, no Origin). */
export function callApi<T = unknown>(method: string, input: unknown = {}): Promise<T> {
  return callServer<T>(serverInfo().url, method, input);
}

/** What a job can end as, or stop at, without anyone acting on it. */
const SETTLED = new Set(['done', 'paused', 'cancelled', 'failed', 'interrupted']);

/**
 * Resolves with the status job `jobId` settles at (done, or paused, cancelled, failed) on the server
 * at `url`: on its `job.status` event, read from the event socket as the page reads it, or at once
 * when jobs.get finds it settled already (asked once the socket is open, so no event is missed).
 */
export async function jobSettled(url: string, jobId: string): Promise<string> {
  const u = new URL(url);
  const socket = new WebSocket(`${u.origin.replace(/^http/, 'ws')}/api/events?token=${u.searchParams.get('token') ?? ''}`, { headers: { Origin: u.origin } });
  const log = recordEvents<{ event: string; payload: { jobId?: string; status?: string } }>((push) => {
    socket.on('message', (data) => push(JSON.parse(String(data)) as { event: string; payload: { jobId?: string; status?: string } }));
    return () => socket.terminate();
  });
  const failed = new Promise<never>((_, reject) => socket.on('error', reject));
  try {
    await Promise.race([log.until((events) => events.some((e) => e.event === 'hello')), failed]);
    const now = await callServer<{ status: string }>(url, 'jobs.get', { jobId });
    if (SETTLED.has(now.status)) return now.status;
    const settled = (events: readonly { event: string; payload: { jobId?: string; status?: string } }[]) =>
      events.find((e) => e.event === 'job.status' && e.payload.jobId === jobId && SETTLED.has(e.payload.status ?? ''));
    await Promise.race([log.until((events) => settled(events) !== undefined), failed]);
    return settled(log.events)!.payload.status!;
  } finally {
    log.off();
  }
}

/** Opens the app as a user would: the printed URL, which trades the token for a cookie. */
export async function openApp(page: Page, hash = ''): Promise<void> {
  const s = serverInfo();
  await page.goto(s.url);
  if (hash) await page.evaluate((h) => (window.location.hash = h), hash);
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  // Views seed their fields from the saved settings once these arrive; a field filled before that
  // can be overwritten mid-fill (CI saw a typed path appended to the saved model path). Settings
  // and app info arrive in one store update, and the footer shows the latter.
  await expect(page.getByText(/ · \d+ threads?$/)).toHaveCount(1);
}

export interface WorkerOptions {
  /**
   * The server meets the specs as a fresh install does (no model, no settings): the first-run
   * project's. Otherwise the tiny model is added before the first test, as the welcome card adds
   * one (the first model added becomes generator and evaluator), which is where a fresh install
   * stands once its user has been through first-run.spec.ts.
   */
  freshInstall: boolean;
}

/**
 * Starts `tatra serve` for this worker: a fresh data folder, its own empty models folder
 * (downloads land there too), the tiny model, one thread, port 0. Workers share no state, so
 * they run beside each other; the specs of one file run in order on one worker's server, as they
 * always did. Its URL reaches serverInfo() and callApi() through this worker's environment.
 */
async function serveForWorker(freshInstall: boolean, use: (s: ServerInfo) => Promise<void>): Promise<void> {
  const model = process.env.TATRA_E2E_MODEL;
  if (!model) throw new Error('TATRA_E2E_MODEL is unset: run through playwright.config.ts (its globalSetup makes the model)');
  const dataDir = mkdtempSync(join(tmpdir(), 'tatra-e2e-'));
  const modelsDir = join(dataDir, 'models-folder');
  mkdirSync(modelsDir, { recursive: true });
  try {
    const served = await startServe({ dataDir, port: 0, env: { TATRA_MODELS_DIR: modelsDir }, echo: Boolean(process.env.TATRA_E2E_VERBOSE) });
    try {
      const parsed = new URL(served.url);
      Object.assign(process.env, {
        TATRA_E2E_URL: served.url,
        TATRA_E2E_ORIGIN: parsed.origin,
        TATRA_E2E_TOKEN: parsed.searchParams.get('token') ?? '',
        TATRA_E2E_DATA_DIR: dataDir,
        TATRA_E2E_MODELS_DIR: modelsDir,
      });
      if (!freshInstall) await callApi('models.addFile', { path: model });
      await use(serverInfo());
    } finally {
      // Stopping cleanly is part of the contract of `tatra serve`: dispose the host, exit 0.
      await stopServe(served);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const test = base.extend<{ server: ServerInfo; cspGuard: void }, WorkerOptions & { workerServer: ServerInfo }>({
  freshInstall: [false, { option: true, scope: 'worker' }],
  // Auto, so that hooks and helpers that call serverInfo() or callApi() find it too.
  workerServer: [async ({ freshInstall }, use) => serveForWorker(freshInstall, use), { scope: 'worker', auto: true }],
  server: async ({ workerServer }, use) => {
    await use(workerServer);
  },
  // Every test fails if the page broke its Content-Security-Policy anywhere (charts included).
  cspGuard: [
    async ({ page }, use) => {
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content[- ]Security[- ]Policy/i.test(m.text())) violations.push(m.text());
      });
      // Caught violations (an eval probe inside try/catch) print nothing; the event still fires.
      await page.exposeFunction('__tatraCspViolation', (v: string) => void violations.push(v));
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (e) => {
          (window as unknown as { __tatraCspViolation(v: string): void }).__tatraCspViolation(`${e.violatedDirective} ${e.blockedURI}`);
        });
      });
      await use();
      expect(violations, 'CSP violations').toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

/**
 * Resolves after the page's next frame and the task queued behind it: whatever an input or a
 * change before this call set going on the page has been rendered by then (React commits a
 * click's updates before the next frame), and events queued meanwhile have been delivered. The
 * wait an absence is checked after, where there is no event to wait for.
 */
export async function nextFrame(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(r, 0))));
}

/**
 * The answer to the page's next API call of `method`, however long it takes (the test's own limit
 * bounds it). Set up before the click that makes the call: a start checks its models and files
 * before it answers, which on a busy machine took longer than a fixed wait for its page allowed.
 */
export function answerTo(page: Page, method: string): Promise<Response> {
  return page.waitForResponse((r) => r.url().endsWith('/api/invoke') && (r.request().postData() ?? '').includes(`"method":"${method}"`), { timeout: 0 });
}

/** Every chart on the page drawn: ChartFigure draws just after the page's first paint. */
export async function chartsDrawn(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('figure[data-drawn="false"]').length === 0);
}

/** A full-page screenshot into e2e/artifacts/, taken from the top so the sticky sidebar sits where a user sees it. */
export async function shot(page: Page, name: string): Promise<void> {
  await chartsDrawn(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `e2e/artifacts/${name}.png`, fullPage: true });
}

/** Opens Classify with SST-2 on `model` and fills the form (the seed and early stop only when given). */
export async function fillClassify(page: Page, model: string, form: { n: number; k: number; r: number; seed?: number; earlyStop?: boolean; input: string }): Promise<void> {
  await openApp(page, '#/classify');
  await page.getByTestId('classify-task').selectOption('sst2');
  await page.getByTestId('classify-generator').fill(model);
  await page.getByTestId('classify-n').fill(String(form.n));
  await page.getByTestId('classify-k').fill(String(form.k));
  await page.getByTestId('classify-r').fill(String(form.r));
  if (form.seed !== undefined) await page.getByTestId('classify-seed').fill(String(form.seed));
  if (form.earlyStop === false) await page.getByTestId('classify-early-stop').uncheck();
  await page.getByTestId('classify-input').fill(form.input);
}
