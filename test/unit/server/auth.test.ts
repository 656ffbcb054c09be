import { describe, expect, it } from 'vitest';
import {
  allowedOrigins,
  cookieName,
  isLoopbackHost,
  originAllowed,
  tokenCookie,
  tokenSource,
  tokensEqual,
} from '../../../electron/server/auth';
import { hostAllowed } from '../../../electron/web/hosts';
import { CONTENT_SECURITY_POLICY } from '../../../electron/web/csp';
import { safeFileName } from '../../../electron/web/file-name';

describe('token checks', () => {
  const token = 'abcDEF123_-xyz';
  it('compares tokens exactly, refusing empty, shorter and longer ones', () => {
    expect(tokensEqual(token, token)).toBe(true);
    expect(tokensEqual(`${token}x`, token)).toBe(false);
    expect(tokensEqual(token.slice(1), token)).toBe(false);
    expect(tokensEqual('', token)).toBe(false);
    expect(tokensEqual(undefined, token)).toBe(false);
  });

  it('accepts the header, the per-port cookie or the query, in that order', () => {
    expect(tokenSource({ header: token }, token, 5178)).toBe('header');
    expect(tokenSource({ cookie: `other=1; ${cookieName(5178)}=${token}` }, token, 5178)).toBe('cookie');
    // Another port's cookie is not this server's: browsers share cookies across ports.
    expect(tokenSource({ cookie: `${cookieName(9999)}=${token}` }, token, 5178)).toBeNull();
    expect(tokenSource({ query: token }, token, 5178)).toBe('query');
    expect(tokenSource({ header: 'nope', cookie: 'a=b', query: 'c' }, token, 5178)).toBeNull();
    expect(tokenSource({}, token, 5178)).toBeNull();
  });

  it('finds the cookie among others, whatever they hold, the first of a repeated name', () => {
    const name = cookieName(5178);
    expect(tokenSource({ cookie: `junk; a=%E0%A4%A; ${name}=${encodeURIComponent(token)}; b="q"` }, token, 5178)).toBe('cookie');
    expect(tokenSource({ cookie: `${name}=${token}; ${name}=other` }, token, 5178)).toBe('cookie');
    expect(tokenSource({ cookie: `${name}=other; ${name}=${token}` }, token, 5178)).toBeNull();
    expect(tokenSource({ cookie: '' }, token, 5178)).toBeNull();
  });

  it('sets the cookie for this port, out of the page’s reach, sent to this site only', () => {
    expect(tokenCookie(token, 5178)).toBe(`${cookieName(5178)}=${token}; Path=/; HttpOnly; SameSite=Strict`);
  });
});

describe('Host checks (both faces)', () => {
  it('on loopback takes only this machine’s names, and a proxy’s when given', () => {
    for (const host of ['127.0.0.1:5178', 'localhost:5178', 'LOCALHOST', '[::1]:5178', '127.1.2.3']) expect(hostAllowed('127.0.0.1', host), host).toBe(true);
    for (const host of [undefined, '', 'evil.example:5178', 'a:b:c', '127.0.0.1.evil.example', '\u00ff']) expect(hostAllowed('127.0.0.1', host), String(host)).toBe(false);
    expect(hostAllowed('127.0.0.1', 'proxy.example', ['proxy.example'])).toBe(true);
    expect(hostAllowed('::1', 'evil.example')).toBe(false);
  });

  it('bound elsewhere takes any name: the server cannot know the names it is reached by', () => {
    expect(hostAllowed('0.0.0.0', 'gpu-box:8080')).toBe(true);
    expect(hostAllowed('192.168.1.5', undefined)).toBe(true);
  });
});

describe('Origin checks', () => {
  it('allows only this server’s own origins on loopback', () => {
    const allowed = allowedOrigins('127.0.0.1', 5178);
    expect(originAllowed('http://127.0.0.1:5178', '127.0.0.1:5178', allowed, '127.0.0.1')).toBe(true);
    expect(originAllowed('http://localhost:5178', 'localhost:5178', allowed, '127.0.0.1')).toBe(true);
    expect(originAllowed('http://127.0.0.1:5179', '127.0.0.1:5178', allowed, '127.0.0.1')).toBe(false);
    expect(originAllowed('http://evil.example', '127.0.0.1:5178', allowed, '127.0.0.1')).toBe(false);
    // DNS rebinding: the Host header names the attacker's domain; still refused on loopback.
    expect(originAllowed('http://evil.example:5178', 'evil.example:5178', allowed, '127.0.0.1')).toBe(false);
    expect(originAllowed('null', '127.0.0.1:5178', allowed, '127.0.0.1')).toBe(false);
    // Not a browser: no Origin. The token still guards it.
    expect(originAllowed(undefined, '127.0.0.1:5178', allowed, '127.0.0.1')).toBe(true);
  });

  it('on every interface, accepts a same-origin page and extra origins', () => {
    const allowed = allowedOrigins('0.0.0.0', 8080, ['https://proxy.example/']);
    expect(originAllowed('http://gpu-box:8080', 'gpu-box:8080', allowed, '0.0.0.0')).toBe(true);
    expect(originAllowed('https://proxy.example', 'gpu-box:8080', allowed, '0.0.0.0')).toBe(true);
    expect(originAllowed('http://evil.example', 'gpu-box:8080', allowed, '0.0.0.0')).toBe(false);
  });

  it('knows loopback hosts', () => {
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('::1')).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    expect(isLoopbackHost('192.168.1.5')).toBe(false);
  });
});

describe('page headers and uploads', () => {
  it('has a CSP with no inline script, no framing, nothing from elsewhere', () => {
    const csp = CONTENT_SECURITY_POLICY;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toContain('unsafe-inline');
  });

  it('keeps only a safe base name of an uploaded file', () => {
    expect(safeFileName('../../etc/passwd')).toBe('passwd');
    expect(safeFileName('C:\\Users\\me\\my data.csv')).toBe('my_data.csv');
    expect(safeFileName('.hidden')).toBe('hidden');
    expect(safeFileName('')).toBe('upload');
  });
});
