// The endpoints of one remote model (replicas serving the same model) and which one a request goes
// to: the least-loaded healthy one with room, never more than `limit` requests in flight on any.
// An endpoint that fails (connection refused, reset, timeout, 502-504) is set aside and probed
// again after a growing delay; once it answers it takes requests again. What was in flight on it
// is retried by the caller on another endpoint (or on the same one once it is back).
import { UserError } from '../common/errors';
import type { ServerProbe } from '../common/remote';

export interface EndpointState {
  url: string;
  up: boolean;
  inFlight: number;
  /** Requests this endpoint answered. */
  served: number;
  /** Times it was set aside. */
  failures: number;
  /** Why it was last set aside. */
  lastError: string | null;
  limit: number;
}

export class Endpoint implements EndpointState {
  up = true;
  inFlight = 0;
  served = 0;
  failures = 0;
  lastError: string | null = null;
  /** Picks so far, to break ties round-robin. */
  lastPicked = 0;
  retryDelayMs = 0;
  timer: NodeJS.Timeout | undefined;
  probe: ServerProbe | null = null;

  constructor(
    readonly url: string,
    public limit: number,
  ) {}

  snapshot(): EndpointState {
    return { url: this.url, up: this.up, inFlight: this.inFlight, served: this.served, failures: this.failures, lastError: this.lastError, limit: this.limit };
  }
}

export interface EndpointSetOptions {
  /** First delay before probing a set-aside endpoint again (ms; doubles up to maxReprobeMs). */
  reprobeMs: number;
  maxReprobeMs: number;
  /** How long requests wait while every endpoint is down before failing (ms). */
  downTimeoutMs: number;
  /** Checks that an endpoint answers again (resolves true when it does). */
  check: (endpoint: Endpoint) => Promise<boolean>;
}

export class EndpointSet {
  private readonly waiters = new Set<() => void>();
  private picks = 0;
  private allDownSince: number | null = null;
  private disposed = false;
  // Aborted on dispose: its reason is what a request still waiting for an endpoint rejects with.
  private readonly closed = new AbortController();

  constructor(
    readonly endpoints: readonly Endpoint[],
    private readonly opts: EndpointSetOptions,
  ) {}

  /**
   * The endpoint a request should use now, counted as in flight until `release`. Waits while every
   * healthy endpoint is full, and while all are down (up to downTimeoutMs, then a UserError).
   */
  async acquire(signal?: AbortSignal): Promise<Endpoint> {
    for (;;) {
      signal?.throwIfAborted();
      this.closed.signal.throwIfAborted();
      const up = this.endpoints.filter((e) => e.up);
      if (up.length > 0) {
        this.allDownSince = null;
        let best: Endpoint | undefined;
        for (const e of up) {
          if (e.inFlight >= e.limit) continue;
          if (!best || e.inFlight / e.limit < best.inFlight / best.limit || (e.inFlight / e.limit === best.inFlight / best.limit && e.lastPicked < best.lastPicked)) best = e;
        }
        if (best) {
          best.inFlight++;
          best.lastPicked = ++this.picks;
          return best;
        }
      } else {
        this.allDownSince ??= Date.now();
        const waited = Date.now() - this.allDownSince;
        if (waited >= this.opts.downTimeoutMs) {
          const reasons = this.endpoints.map((e) => `${e.url}: ${e.lastError ?? 'down'}`).join('; ');
          throw new UserError(`no endpoint of this remote model answers (${reasons})`, 'remote_unreachable');
        }
      }
      await this.wait(signal, up.length > 0 ? 5000 : Math.min(1000, this.opts.downTimeoutMs));
    }
  }

  /** Ends a request on `endpoint`; `ok` counts it as served. */
  release(endpoint: Endpoint, ok: boolean): void {
    endpoint.inFlight = Math.max(0, endpoint.inFlight - 1);
    if (ok) endpoint.served++;
    this.wake();
  }

  /** Sets `endpoint` aside after a failure and schedules a probe to bring it back. */
  setAside(endpoint: Endpoint, reason: string): void {
    if (this.disposed) return;
    endpoint.lastError = reason;
    if (!endpoint.up) return;
    endpoint.up = false;
    endpoint.failures++;
    endpoint.retryDelayMs = this.opts.reprobeMs;
    this.schedule(endpoint);
    this.wake();
  }

  /** States of all endpoints (copies). */
  states(): EndpointState[] {
    return this.endpoints.map((e) => e.snapshot());
  }

  dispose(): void {
    this.disposed = true;
    this.closed.abort();
    for (const e of this.endpoints) clearTimeout(e.timer);
    this.wake();
  }

  private schedule(endpoint: Endpoint): void {
    clearTimeout(endpoint.timer);
    endpoint.timer = setTimeout(() => void this.reprobe(endpoint), endpoint.retryDelayMs);
  }

  private async reprobe(endpoint: Endpoint): Promise<void> {
    if (this.disposed || endpoint.up) return;
    let ok = false;
    try {
      ok = await this.opts.check(endpoint);
    } catch {
      ok = false;
    }
    if (this.disposed) return;
    if (ok) {
      endpoint.up = true;
      endpoint.retryDelayMs = 0;
      this.wake();
    } else {
      endpoint.retryDelayMs = Math.min(this.opts.maxReprobeMs, endpoint.retryDelayMs * 2);
      this.schedule(endpoint);
    }
  }

  private wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const w of waiters) w();
  }

  private wait(signal: AbortSignal | undefined, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }
}
