// One security boundary, two faces: the desktop app's app:// protocol handler and `tatra serve`
// serve the same folder through one lookup (web/static.ts), so a file, a missing asset, a route
// and a traversal get the same status and the same headers from both. (Before, each face had its
// own CSP, header set, MIME table, containment check and static server, and they had drifted.)
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import { createAppProtocolHandler } from '../../../electron/protocol';
import { startServer, type RunningServer } from '../../../electron/server/server';
import { CONTENT_SECURITY_POLICY } from '../../../electron/web/csp';
import { SECURITY_HEADERS } from '../../../electron/web/headers';
import { isInside } from '../../../electron/web/inside';

let dir: string;
let web: string;
let host: ApiHost;
let server: RunningServer;
let app: (r: Request) => Promise<Response>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tatra-faces-'));
  web = join(dir, 'web');
  mkdirSync(join(web, 'assets'), { recursive: true });
  writeFileSync(join(web, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(web, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(web, 'assets', 'font.woff2'), 'w');
  writeFileSync(join(dir, 'secret.txt'), 'secret');
  symlinkSync(join(dir, 'secret.txt'), join(web, 'assets', 'link.txt'));
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test' });
  server = await startServer({ host, port: 0, staticDir: web, token: 'faces-token', log: () => undefined });
  app = createAppProtocolHandler(web);
});

afterAll(async () => {
  await server.close();
  await host.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Status and the headers that describe the content (transport headers like Date left out). */
function shape(res: Response): { status: number; headers: Record<string, string> } {
  const skip = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!skip.has(k)) headers[k] = v;
  });
  return { status: res.status, headers };
}

describe('the two faces', () => {
  it.each(['/', '/index.html', '/assets/app.js', '/assets/font.woff2', '/evaluate/x', '/assets/missing.js', '/..%2fsecret.txt', '/assets/..%2f..%2fsecret.txt', '/assets/link.txt', '/a%5cb', '/%E0%A4%A'])(
    'answer %s alike',
    async (path) => {
      const viaServe = shape(await fetch(`${server.origin}${path}`, { headers: { 'x-tatra-token': 'faces-token' } }));
      const viaApp = shape(await app(new Request(`app://tatra${path}`)));
      // Errors are plain text of each face's own wording; everything else must match exactly.
      if (viaServe.status !== 200) {
        delete viaServe.headers['content-length'];
        delete viaApp.headers['content-length'];
        expect(viaServe.headers['cache-control']).toBe('no-store');
        delete viaServe.headers['cache-control'];
      }
      expect(viaApp).toEqual(viaServe);
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) expect(viaServe.headers[k.toLowerCase()], k).toBe(v);
    },
  );

  it('send one CSP', async () => {
    const page = await fetch(`${server.origin}/`, { headers: { 'x-tatra-token': 'faces-token' } });
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect((await app(new Request('app://tatra/'))).headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });
});

describe('isInside', () => {
  it('is a path test, not a string prefix test', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c/d')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
    expect(isInside('/a/b', '/a/b/../c')).toBe(false);
    expect(isInside('/a/b', '/a/b/..c')).toBe(true);
  });
});
