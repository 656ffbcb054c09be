// Browser mode's guard: every request and WebSocket needs the token; API calls and WebSocket
// upgrades from a foreign Origin are refused even with it; the page carries a strict CSP and
// runs under it without a single violation.
import WebSocket from 'ws';
import { expect, openApp, test } from './fixtures';

function wsStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('error', (e) => reject(e));
  });
}

test('a request without the token gets 401, page and API alike', async ({ server }) => {
  const page = await fetch(`${server.origin}/`);
  expect(page.status).toBe(401);
  const asset = await fetch(`${server.origin}/index.html`);
  expect(asset.status).toBe(401);
  const api = await fetch(`${server.origin}/api/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method: 'tasks.list', input: {} }) });
  expect(api.status).toBe(401);
  const wrong = await fetch(`${server.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': `${server.token}x` },
    body: JSON.stringify({ method: 'tasks.list', input: {} }),
  });
  expect(wrong.status).toBe(401);
  expect(await wsStatus(`${server.origin.replace('http', 'ws')}/api/events`, { Origin: server.origin })).toBe(401);
});

test('a foreign Origin is refused even with the token', async ({ server }) => {
  const res = await fetch(`${server.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': server.token, Origin: 'http://evil.example' },
    body: JSON.stringify({ method: 'tasks.list', input: {} }),
  });
  expect(res.status).toBe(403);
  const ws = `${server.origin.replace('http', 'ws')}/api/events?token=${server.token}`;
  expect(await wsStatus(ws, { Origin: 'http://evil.example' })).toBe(403);
  // The same socket from the server's own origin is accepted.
  expect(await wsStatus(ws, { Origin: server.origin })).toBe(101);
});

test('the token in the URL becomes a cookie; the page has a strict CSP and breaks none of it', async ({ page, server }) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  const response = await page.goto(server.url);
  // The token left the address bar (a 303 to the same path without it).
  expect(page.url()).not.toContain('token=');
  const csp = response?.headers()['content-security-policy'] ?? '';
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(response?.headers()['x-content-type-options']).toBe('nosniff');
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
  // The page reaches the API with its cookie: the built-in tasks are listed.
  await page.getByTestId('nav-tasks').click();
  await expect(page.getByTestId('task-sst2')).toBeVisible();
  await expect(page.locator('.dot.off')).toHaveCount(0);
  // A fresh context without the cookie is refused.
  const other = await page.context().browser()!.newContext();
  const anon = await other.newPage();
  const refused = await anon.goto(server.origin);
  expect(refused?.status()).toBe(401);
  await other.close();
  await openApp(page);
  expect(violations).toEqual([]);
});
