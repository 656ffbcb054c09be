// How much `tatra api` takes on at once. Two bounds:
// - admitted requests (running or waiting) are at most `maxQueue`; one more is turned away at once
//   with 429 and a Retry-After estimate, so a burst costs memory for `maxQueue` requests only;
// - classifications running through the engine are at most `concurrency`; the rest wait their turn
//   in arrival order (a batch's inputs take turns with everyone else's, one slot each, so a batch
//   of thousands cannot starve a chat request that came after it).
import { onAbort } from '../common/abort';
import { Listeners } from '../common/listeners';
import { HttpError } from '../web/http-error';

export interface AdmissionOptions {
  maxQueue: number;
  concurrency: number;
}

interface Waiter {
  grant(release: () => void): void;
}

export class Admission {
  private admittedCount = 0;
  private runningCount = 0;
  private readonly waiting: Waiter[] = [];
  private readonly listeners = new Listeners();
  /** Moving average of how long a slot is held, ms (seeds Retry-After). */
  private averageMs = 0;

  constructor(readonly opts: AdmissionOptions) {
    if (opts.maxQueue < 1 || opts.concurrency < 1) throw new Error('maxQueue and concurrency must be at least 1');
  }

  get admitted(): number {
    return this.admittedCount;
  }
  get running(): number {
    return this.runningCount;
  }
  get queued(): number {
    return this.waiting.length;
  }

  /** Admits a request or throws the 429 it is answered with. Call the returned function once when it is answered. */
  admit(): () => void {
    if (this.admittedCount >= this.opts.maxQueue) {
      const seconds = this.retryAfterSeconds();
      throw new HttpError(429, `the server is busy: ${this.admittedCount} requests are queued or running (the limit is ${this.opts.maxQueue}); retry in ${seconds} s`, {
        code: 'queue_full',
        headers: { 'Retry-After': String(seconds) },
      });
    }
    this.admittedCount++;
    this.listeners.call();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.admittedCount--;
      this.listeners.call();
    };
  }

  /**
   * Calls `listener` after each change to what is admitted, running or waiting (read them on the
   * instance); returns its removal.
   */
  onChange(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  /** Resolves once no request is admitted (now, if none is). */
  idle(): Promise<void> {
    if (this.admittedCount === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const off = this.onChange(() => {
        if (this.admittedCount > 0) return;
        off();
        resolve();
      });
    });
  }

  /** Waits for an engine slot, in arrival order; rejects with the signal's reason if it aborts first. */
  slot(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.runningCount < this.opts.concurrency && this.waiting.length === 0) return Promise.resolve(this.hold());
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          forget();
          resolve(release);
        },
      };
      const forget = onAbort(signal, () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        this.listeners.call();
        reject(signal.reason);
      });
      this.waiting.push(waiter);
      this.listeners.call();
    });
  }

  /** Seconds a turned-away client should wait: the queue ahead, divided among the slots, at the recent pace. */
  retryAfterSeconds(): number {
    const ahead = this.waiting.length + this.runningCount;
    const ms = (ahead / this.opts.concurrency) * (this.averageMs || 1000);
    return Math.max(1, Math.min(600, Math.ceil(ms / 1000)));
  }

  private hold(): () => void {
    this.runningCount++;
    this.listeners.call();
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.runningCount--;
      const ms = performance.now() - started;
      this.averageMs = this.averageMs === 0 ? ms : 0.8 * this.averageMs + 0.2 * ms;
      const next = this.waiting.shift();
      if (next) next.grant(this.hold());
      else this.listeners.call();
    };
  }
}
