// The app:// handler is plain fetch-API code over fs, so it runs here without Electron: real
// files in a temporary folder, real Request/Response objects.
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APP_SCHEME_PRIVILEGES,
  createAppProtocolHandler,
  handleAppProtocol,
  registerAppScheme,
  resolveAssetPath,
} from '../../../electron/protocol';
import { CONTENT_SECURITY_POLICY } from '../../../electron/web/csp';
import { mimeTypeFor } from '../../../electron/web/mime';

let base: string;
let root: string;
let handler: (request: Request) => Promise<Response>;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'tatra-protocol-'));
  root = join(base, 'renderer');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>TATRA</title>');
  writeFileSync(join(root, 'assets', 'index-abc.js'), 'console.log(1)');
  writeFileSync(join(root, 'assets', 'index-abc.css'), 'body{}');
  writeFileSync(join(root, 'assets', 'logo.svg'), '<svg/>');
  writeFileSync(join(root, 'assets', 'blob.xyz'), 'x');
  writeFileSync(join(base, 'secret.txt'), 'do not serve');
  symlinkSync(join(base, 'secret.txt'), join(root, 'assets', 'link.txt'));
  handler = createAppProtocolHandler(root);
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

function get(url: string, method = 'GET'): Promise<Response> {
  // A plain object, not a Request: the handler must not rely on Request's own URL normalisation.
  return handler({ url, method } as Request);
}

describe('app:// handler', () => {
  it('serves index.html at the root with the CSP', async () => {
    const res = await get('app://tatra/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await res.text()).toContain('<title>TATRA</title>');
  });

  it('serves assets with their MIME types and security headers', async () => {
    const js = await handler(new Request('app://tatra/assets/index-abc.js'));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await js.text()).toBe('console.log(1)');
    expect((await get('app://tatra/assets/index-abc.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await get('app://tatra/assets/logo.svg')).headers.get('content-type')).toBe('image/svg+xml');
    expect((await get('app://tatra/assets/blob.xyz')).headers.get('content-type')).toBe('application/octet-stream');
  });

  it('answers HEAD without a body and refuses other methods', async () => {
    const head = await get('app://tatra/index.html', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await get('app://tatra/index.html', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it.each([
    'app://tatra/..%2fsecret.txt',
    'app://tatra/%2e%2e%2fsecret.txt',
    'app://tatra/assets/..%2f..%2fsecret.txt',
    'app://tatra/..%2F..%2F..%2Fetc%2Fpasswd',
  ])('refuses traversal %s', async (url) => {
    const res = await get(url);
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain('do not serve');
  });

  it('refuses backslashes, NUL bytes and bad escapes', async () => {
    expect((await get('app://tatra/..%5csecret.txt')).status).toBe(400);
    expect((await get('app://tatra/index.html%00.js')).status).toBe(400);
    expect((await get('app://tatra/%E0%A4%A')).status).toBe(400);
  });

  it('refuses a symlink that leaves the renderer folder', async () => {
    const res = await get('app://tatra/assets/link.txt');
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain('do not serve');
  });

  it('refuses foreign hosts', async () => {
    expect((await get('app://other/index.html')).status).toBe(403);
  });

  it('404s a missing asset but falls back to index.html for a client route', async () => {
    const missing = await get('app://tatra/assets/missing.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const route = await get('app://tatra/evaluate');
    expect(route.status).toBe(200);
    expect(await route.text()).toContain('<title>TATRA</title>');
  });

  it('says the renderer is not built when index.html is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'tatra-empty-'));
    try {
      const res = await createAppProtocolHandler(empty)({ url: 'app://tatra/', method: 'GET' } as Request);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build:renderer');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('resolveAssetPath and registration', () => {
  it('maps URLs into the root', () => {
    expect(resolveAssetPath('/r', 'app://tatra/a/b.js')).toEqual({ ok: true, path: '/r/a/b.js' });
    expect(resolveAssetPath('/r', 'app://tatra/')).toMatchObject({ ok: true, path: '/r/index.html' });
    expect(resolveAssetPath('/r', 'app://tatra/sub/')).toMatchObject({ ok: true, path: '/r/sub/index.html' });
    expect(resolveAssetPath('/r', 'file:///r/index.html')).toMatchObject({ ok: false, status: 403 });
    expect(resolveAssetPath('/r', '::')).toMatchObject({ ok: false, status: 400 });
  });

  it('knows the common MIME types', () => {
    expect(mimeTypeFor('a.woff2')).toBe('font/woff2');
    expect(mimeTypeFor('A.PNG')).toBe('image/png');
    expect(mimeTypeFor('x.json')).toBe('application/json; charset=utf-8');
  });

  it('registers the scheme as standard, secure and fetch-capable, without bypassing the CSP', () => {
    const calls: unknown[] = [];
    registerAppScheme({ registerSchemesAsPrivileged: (s) => void calls.push(s) });
    expect(calls).toEqual([[{ scheme: 'app', privileges: { standard: true, secure: true, supportFetchAPI: true } }]]);
    expect(APP_SCHEME_PRIVILEGES.privileges).not.toHaveProperty('bypassCSP');
  });

  it('installs the handler on the given protocol object', async () => {
    let installed: ((r: Request) => Promise<Response>) | undefined;
    handleAppProtocol(
      {
        handle: (scheme, h) => {
          expect(scheme).toBe('app');
          installed = h as (r: Request) => Promise<Response>;
        },
      },
      root,
    );
    const res = await installed!(new Request('app://tatra/index.html'));
    expect(res.status).toBe(200);
  });
});
