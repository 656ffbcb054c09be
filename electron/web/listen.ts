// Naming where a face's HTTP server listens, the same for `tatra serve` and `tatra api`.
import { isWildcardHost } from './hosts';

/** The origin to show: a wildcard address is shown as loopback, IPv6 in brackets. */
export function publicOrigin(hostname: string, port: number): string {
  if (isWildcardHost(hostname)) return `http://127.0.0.1:${port}`;
  return `http://${hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname}:${port}`;
}
