// The endpoints of one remote model (replicas serving the same model) and which one a request goes
// to: the least-loaded healthy one with room, never more than its `limit` requests in flight.
//
// Requests that find no room wait in one first-come first-served queue; each slot that frees
// hands itself to the request at the head of it, so a request's cost does not grow with the queue
// behind it (no waking every waiter to race for one slot, no timer per waiter, and one abort
// listener per distinct signal however many of its requests wait). A request sent again after a
// failure waits ahead of new ones.
//
// An endpoint that fails (connection refused, reset, timeout, 502/504) is set aside and probed
// again after a growing delay; once it answers it takes requests again. What was in flight on it
// is retried by the caller on another endpoint (or on the same one once it is back). While every
// endpoint is down, requests wait up to `downTimeoutMs` (one timer for the whole set).
//
// An endpoint's limit adapts below its ceiling `maxInFlight`: a busy answer (429, 503) halves it
// and calls that queue at the server (their latency far above the endpoint's best) take a tenth
// off; calls that go well raise it again, a tenth per limit's worth of calls, up to the ceiling.
import { onAbort } from '../common/abort';
import { UserError } from '../common/errors';
import { Listeners } from '../common/listeners';
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
  /** Requests allowed in flight now (adapts between 1 and maxInFlight). */
  limit: number;
  /** The ceiling: what the user set, or the default for the server's kind. */
  maxInFlight: number;
  /** Busy answers (429/503) and queueing the limit was lowered for. */
  backoffs: number;
}

/** Calls up to this many tokens long are short: their latency tells queueing from work. */
const SHORT_CALL_TOKENS = 16;
/** A short call's smoothed latency above twice the best one seen, plus this, is queueing at the server. */
const QUEUEING_SLACK_MS = 250;

export class Endpoint implements EndpointState {
  up = true;
  inFlight = 0;
  served = 0;
  failures = 0;
  backoffs = 0;
  lastError: string | null = null;
  limit: number;
  /** Picks so far, to break ties round-robin. */
  lastPicked = 0;
  retryDelayMs = 0;
  timer: NodeJS.Timeout | undefined;
  probe: ServerProbe | null = null;
  /** Calls ended since the limit last changed: it changes at most once per limit's worth. */
  private sinceChange = 0;
  /** Short calls' best and smoothed latency (ms). */
  private bestMs = Infinity;
  private smoothMs = 0;

  constructor(
    readonly url: string,
    public maxInFlight: number,
  ) {
    this.limit = maxInFlight;
  }

  snapshot(): EndpointState {
    return {
      url: this.url,
      up: this.up,
      inFlight: this.inFlight,
      served: this.served,
      failures: this.failures,
      lastError: this.lastError,
      limit: this.limit,
      maxInFlight: this.maxInFlight,
      backoffs: this.backoffs,
    };
  }

  /** Room for another request now. */
  get free(): number {
    return this.up ? Math.max(0, this.limit - this.inFlight) : 0;
  }

  /**
   * A call that went well, `ms` long, for at most `maxTokens` new tokens: raises the limit after
   * a limit's worth of them, or lowers it when short calls have started to queue at the server.
   */
  noteSuccess(ms: number, maxTokens: number): void {
    this.sinceChange++;
    if (maxTokens <= SHORT_CALL_TOKENS && Number.isFinite(ms)) {
      this.bestMs = Math.min(this.bestMs, ms);
      this.smoothMs = this.smoothMs === 0 ? ms : this.smoothMs * 0.9 + ms * 0.1;
      if (this.smoothMs > 2 * this.bestMs + QUEUEING_SLACK_MS) {
        this.lower(0.9);
        return;
      }
    }
    if (this.limit < this.maxInFlight && this.sinceChange >= this.limit) {
      this.limit = Math.min(this.maxInFlight, Math.ceil(this.limit * 1.1));
      this.sinceChange = 0;
    }
  }

  /** The server said it is busy (429, 503): half the limit, once per limit's worth of calls. */
  noteBusy(): void {
    this.sinceChange++;
    this.lower(0.5);
  }

  private lower(factor: number): void {
    if (this.sinceChange < this.limit && this.backoffs > 0) return;
    const next = Math.max(1, Math.floor(this.limit * factor));
    if (next === this.limit) return;
    this.limit = next;
    this.sinceChange = 0;
    this.backoffs++;
    // Latency measured at the old limit no longer says anything about the new one.
    this.smoothMs = 0;
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

interface Waiter {
  signal: AbortSignal | undefined;
  resolve: (endpoint: Endpoint) => void;
  reject: (reason: unknown) => void;
  /** Set once it got an endpoint or failed; a settled waiter still in a queue is skipped. */
  settled: boolean;
  /** Ends its wait on its signal's abort (common/abort.ts: one listener per signal, however many wait). */
  forget?: () => void;
}

/** A first-in first-out queue whose head is taken without moving the rest. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Taken items are dropped in bulk, so the array does not grow for ever.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  *[Symbol.iterator](): Generator<T> {
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i];
      if (item !== undefined) yield item;
    }
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

export class EndpointSet {
  /** Requests sent again after a failure: served before new ones. */
  private readonly retries = new Fifo<Waiter>();
  private readonly waiters = new Fifo<Waiter>();
  /** Waiters not yet settled, in both queues. */
  private waiting = 0;
  private picks = 0;
  private allDownSince: number | null = null;
  private downTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  // Aborted on dispose: its reason is what a request still waiting for an endpoint rejects with.
  private readonly closed = new AbortController();
  private readonly upDownListeners = new Listeners();

  constructor(
    readonly endpoints: readonly Endpoint[],
    private readonly opts: EndpointSetOptions,
  ) {}

  /** Requests waiting for an endpoint now. */
  get queued(): number {
    return this.waiting;
  }

  /**
   * The endpoint a request should use now, counted as in flight until `release`. Waits, first come
   * first served, while every healthy endpoint is full, and while all are down (up to
   * downTimeoutMs, then a UserError). `retry`: the request failed once and goes ahead of new ones.
   */
  acquire(signal?: AbortSignal, retry = false): Promise<Endpoint> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.closed.signal.aborted) return Promise.reject(this.closed.signal.reason);
    // Nobody ahead of it: take a free slot at once.
    if (this.waiting === 0) {
      const endpoint = this.pick();
      if (endpoint) return Promise.resolve(this.take(endpoint));
    }
    const down = this.allDownError();
    if (down) return Promise.reject(down);
    return new Promise<Endpoint>((resolve, reject) => {
      const waiter: Waiter = { signal, resolve, reject, settled: false };
      (retry ? this.retries : this.waiters).push(waiter);
      this.waiting++;
      if (signal) waiter.forget = onAbort(signal, () => this.fail(waiter, signal.reason));
    });
  }

  /** Ends a request on `endpoint`; `ok` counts it as served. Its slot goes to the next waiter. */
  release(endpoint: Endpoint, ok: boolean): void {
    endpoint.inFlight = Math.max(0, endpoint.inFlight - 1);
    if (ok) endpoint.served++;
    this.dispatch();
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
    this.checkAllDown();
    this.upDownListeners.call();
  }

  /** Calls `listener` after an endpoint is set aside or set back in (read states() in it); returns its removal. */
  onUpOrDown(listener: () => void): () => void {
    return this.upDownListeners.add(listener);
  }

  /** States of all endpoints (copies). */
  states(): EndpointState[] {
    return this.endpoints.map((e) => e.snapshot());
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.closed.abort();
    for (const e of this.endpoints) clearTimeout(e.timer);
    clearTimeout(this.downTimer);
    this.failAll(this.closed.signal.reason);
  }

  // -------------------------------------------------------------------------------------------

  /** The least-loaded endpoint with room (ties round-robin), or undefined. */
  private pick(): Endpoint | undefined {
    let best: Endpoint | undefined;
    for (const e of this.endpoints) {
      if (e.free === 0) continue;
      if (!best || e.inFlight / e.limit < best.inFlight / best.limit || (e.inFlight / e.limit === best.inFlight / best.limit && e.lastPicked < best.lastPicked)) best = e;
    }
    return best;
  }

  private take(endpoint: Endpoint): Endpoint {
    endpoint.inFlight++;
    endpoint.lastPicked = ++this.picks;
    return endpoint;
  }

  /** Hands free slots to waiters in order, one slot each, until either runs out. */
  private dispatch(): void {
    while (this.waiting > 0) {
      const endpoint = this.pick();
      if (!endpoint) return;
      const waiter = this.next();
      if (!waiter) return;
      this.settle(waiter);
      waiter.resolve(this.take(endpoint));
    }
  }

  /** The first waiter not yet settled (retries first), taken off its queue. */
  private next(): Waiter | undefined {
    for (const queue of [this.retries, this.waiters]) {
      for (let w = queue.shift(); w; w = queue.shift()) if (!w.settled) return w;
    }
    return undefined;
  }

  private settle(waiter: Waiter): void {
    waiter.settled = true;
    this.waiting--;
    waiter.forget?.();
    if (this.waiting === 0) {
      // Nothing waits: drop the settled ones the queues still hold.
      this.retries.clear();
      this.waiters.clear();
    }
  }

  /** Rejects one waiting request (unless it got an endpoint or failed already). */
  private fail(waiter: Waiter, reason: unknown): void {
    if (waiter.settled) return;
    this.settle(waiter);
    waiter.reject(reason);
  }

  /** Rejects every waiting request. */
  private failAll(reason: unknown): void {
    const waiting: Waiter[] = [];
    for (const queue of [this.retries, this.waiters]) for (const w of queue) if (!w.settled) waiting.push(w);
    for (const w of waiting) this.fail(w, reason);
  }

  /** The error for a request arriving once every endpoint has been down for downTimeoutMs. */
  private allDownError(): UserError | null {
    if (this.allDownSince === null || Date.now() - this.allDownSince < this.opts.downTimeoutMs) return null;
    const reasons = this.endpoints.map((e) => `${e.url}: ${e.lastError ?? 'down'}`).join('; ');
    return new UserError(`no endpoint of this remote model answers (${reasons})`, 'remote_unreachable');
  }

  /** When the last endpoint goes down, one timer fails whoever still waits at the deadline. */
  private checkAllDown(): void {
    if (this.endpoints.some((e) => e.up) || this.allDownSince !== null) return;
    this.allDownSince = Date.now();
    this.armDownTimer(this.opts.downTimeoutMs);
  }

  /**
   * A timer can fire a little before the clock says its time has come (timers run on another
   * clock than Date.now()); then it waits out the rest, or the requests waiting would wait forever.
   */
  private armDownTimer(ms: number): void {
    this.downTimer = setTimeout(() => {
      const error = this.allDownError();
      if (error) this.failAll(error);
      else if (this.allDownSince !== null) this.armDownTimer(Math.max(1, this.allDownSince + this.opts.downTimeoutMs - Date.now()));
    }, ms);
    this.downTimer.unref?.();
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
      this.allDownSince = null;
      clearTimeout(this.downTimer);
      this.dispatch();
      this.upDownListeners.call();
    } else {
      endpoint.retryDelayMs = Math.min(this.opts.maxReprobeMs, endpoint.retryDelayMs * 2);
      this.schedule(endpoint);
    }
  }
}
