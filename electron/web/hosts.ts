// Which names and addresses are this machine: what every network face checks before it trusts a
// request for being local (the Host header against DNS rebinding, the peer for unauthenticated
// health and metrics).

/** A host name or literal that can only mean this machine: localhost, 127.x.x.x, ::1 (brackets allowed). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** Every interface: the address cannot tell which name a client used. */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** A peer address (socket.remoteAddress) on this machine, IPv4-mapped IPv6 included. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  return isLoopbackHost(address.replace(/^::ffff:/i, ''));
}

/** The host name of a Host header (`name:port`, `[v6]:port`), without the port. */
export function hostHeaderName(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(header.trim());
  return m ? m[1]! : null;
}

/** What a face answers (403) to a request whose Host is refused by hostAllowed. */
export const HOST_REFUSED = 'this server answers only to its loopback name (127.0.0.1 or localhost)';

/**
 * Whether a request's Host header may reach a server listening on `bindHost`, for every face the
 * same: on loopback only a name of this machine (or one of `alsoNames`, a reverse proxy's), so a
 * page whose domain was rebound to 127.0.0.1 (DNS rebinding) is refused; bound elsewhere the
 * server cannot know the names it is reached by, and takes any.
 */
export function hostAllowed(bindHost: string, hostHeader: string | undefined, alsoNames: readonly string[] = []): boolean {
  if (!isLoopbackHost(bindHost)) return true;
  const name = hostHeaderName(hostHeader)?.toLowerCase();
  return name !== undefined && (isLoopbackHost(name) || alsoNames.includes(name));
}
