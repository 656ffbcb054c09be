// Starting a face's HTTP server and naming where it listens, the same for `tatra serve` and `tatra api`.
import type { Server } from 'node:http';
import { isWildcardHost } from './hosts';

/** Listens on `hostname:port` (0 picks a port); rejects with the listen error (EADDRINUSE…). */
export function listen(server: Server, port: number, hostname: string): Promise<void> {
  return new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
}

/** The origin to show: a wildcard address is shown as loopback, IPv6 in brackets. */
export function publicOrigin(hostname: string, port: number): string {
  if (isWildcardHost(hostname)) return `http://127.0.0.1:${port}`;
  return `http://${hostname.includes(':') && !hostname.startsWith('[') ? `[${hostname}]` : hostname}:${port}`;
}
