// What every browser-mode spec needs: the running server (from e2e/global-setup.ts), the model,
// an API caller that uses the token like a script would, and a page already past the token step.
import { test as base, expect, type Page } from '@playwright/test';

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
  if (!env.TATRA_E2E_URL) throw new Error('TATRA_E2E_URL is unset: run through playwright.config.ts (its globalSetup starts tatra serve)');
  return { url: env.TATRA_E2E_URL, origin: env.TATRA_E2E_ORIGIN!, token: env.TATRA_E2E_TOKEN!, model: env.TATRA_E2E_MODEL!, dataDir: env.TATRA_E2E_DATA_DIR!, modelsDir: env.TATRA_E2E_MODELS_DIR! };
}

/** Calls the API as a non-browser client (token header, no Origin). */
export async function callApi<T = unknown>(method: string, input: unknown = {}): Promise<T> {
  const s = serverInfo();
  const res = await fetch(`${s.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': s.token },
    body: JSON.stringify({ method, input }),
  });
  const reply = (await res.json()) as { ok: boolean; value?: T; error?: { message: string } };
  if (!reply.ok) throw new Error(`${method}: ${reply.error?.message}`);
  return reply.value as T;
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

export const test = base.extend<{ server: ServerInfo; cspGuard: void }>({
  // eslint-disable-next-line no-empty-pattern
  server: async ({}, use) => {
    await use(serverInfo());
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

/** A full-page screenshot into e2e/artifacts/, taken from the top so the sticky sidebar sits where a user sees it. */
export async function shot(page: Page, name: string): Promise<void> {
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
