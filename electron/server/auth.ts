// Who may talk to `tatra serve`: whoever holds the random token printed with the URL, from a page
// of this server's own origin. The token arrives once in the URL (`/?token=…`), is traded for an
// HttpOnly cookie, and the page then authenticates with that cookie (and may send the header).
// The Origin check stops other web pages in the same browser (and DNS rebinding) from driving
// the API even when the browser would attach the cookie.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { parse as parseCookie, serialize as serializeCookie } from 'cookie';
import { isLoopbackHost, isWildcardHost } from '../web/hosts';
import { publicOrigin } from '../web/listen';

export { isLoopbackHost, isWildcardHost };

export const TOKEN_HEADER = 'x-tatra-token';
export const TOKEN_QUERY = 'token';

export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Cookie names are per port, because browsers share cookies across ports of one host. */
export function cookieName(port: number): string {
  return `tatra_token_${port}`;
}

/** The Set-Cookie that trades the URL's token for a cookie the page cannot read, sent to this server only. */
export function tokenCookie(token: string, port: number): string {
  return serializeCookie(cookieName(port), token, { httpOnly: true, sameSite: 'strict', path: '/' });
}

export function tokensEqual(given: string | undefined | null, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface TokenSources {
  header?: string | string[];
  cookie?: string;
  query?: string | null;
}

/** Where the request carried the token, or null when it carried none that matches. */
export function tokenSource(src: TokenSources, expected: string, port: number): 'header' | 'cookie' | 'query' | null {
  const header = Array.isArray(src.header) ? src.header[0] : src.header;
  if (tokensEqual(header, expected)) return 'header';
  if (tokensEqual(parseCookie(src.cookie ?? '')[cookieName(port)], expected)) return 'cookie';
  if (tokensEqual(src.query ?? undefined, expected)) return 'query';
  return null;
}

export function requestTokenSource(req: IncomingMessage, url: URL, expected: string, port: number): ReturnType<typeof tokenSource> {
  return tokenSource({ header: req.headers[TOKEN_HEADER], cookie: req.headers.cookie, query: url.searchParams.get(TOKEN_QUERY) }, expected, port);
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** Origins a page of this server can have, given where it listens. */
export function allowedOrigins(bindHost: string, port: number, extra: readonly string[] = []): Set<string> {
  const set = new Set<string>();
  const names = isLoopbackHost(bindHost) || isWildcardHost(bindHost) ? LOOPBACK_NAMES : [];
  for (const n of names) set.add(`http://${n}:${port}`);
  if (!isWildcardHost(bindHost)) set.add(publicOrigin(bindHost, port));
  for (const o of extra) set.add(o.replace(/\/+$/, '').toLowerCase());
  return set;
}

/**
 * Whether a request's Origin may use the API. No Origin: not a browser page (curl, the tests'
 * API clients); the token still guards it. When listening on every interface the server cannot
 * know its public name, so a page whose Origin matches the Host it asked for (same origin) is
 * accepted there too; the token still guards against DNS rebinding.
 */
export function originAllowed(origin: string | undefined, hostHeader: string | undefined, allowed: ReadonlySet<string>, bindHost: string): boolean {
  if (origin === undefined) return true;
  const o = origin.toLowerCase();
  if (o === 'null') return false;
  if (allowed.has(o)) return true;
  if (isWildcardHost(bindHost) && hostHeader && o === `http://${hostHeader.toLowerCase()}`) return true;
  return false;
}
