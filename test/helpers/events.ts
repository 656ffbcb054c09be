// Waiting for what a test checks, never for time: the events a source streams are recorded, and a
// wait resolves on the event that makes its condition true (at once if one already did). A wait
// that is never met is ended by the test's own timeout, so a slow machine only makes it later.
import { existsSync, readdirSync, watch } from 'node:fs';

type Condition<T> = (events: readonly T[]) => boolean;

/** Recorded events with waits on them. */
export interface EventLog<T> {
  readonly events: T[];
  /** Resolves once `condition` holds over the events so far: now, or after the event that makes it hold. */
  until(condition: Condition<T>): Promise<void>;
  /** Stops recording. */
  off(): void;
}

/** A log whose events the test pushes itself (from a listener it installs, a gate it holds). */
export function eventLog<T>(): EventLog<T> & { push(event: T): void } {
  const events: T[] = [];
  let waiters: { condition: Condition<T>; wake: () => void }[] = [];
  return {
    events,
    push(event) {
      events.push(event);
      waiters = waiters.filter((w) => {
        if (!w.condition(events)) return true;
        w.wake();
        return false;
      });
    },
    until: (condition) => (condition(events) ? Promise.resolve() : new Promise((wake) => void waiters.push({ condition, wake }))),
    off: () => undefined,
  };
}

/** Records what `subscribe` delivers (anything that takes a listener and returns its unsubscribe). */
export function recordEvents<T>(subscribe: (push: (event: T) => void) => () => void): EventLog<T> {
  const log = eventLog<T>();
  return { events: log.events, until: log.until, off: subscribe(log.push) };
}

/**
 * Resolves once `check` holds: checked now and after each change `subscribe` reports (a listener
 * it calls on every change, returning its removal), never on a timer.
 */
export function whenTrue(subscribe: (listener: () => void) => () => void, check: () => boolean): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve) => {
    const off = subscribe(() => {
      if (!check()) return;
      off();
      resolve();
    });
  });
}

/** Resolves once `signal` is aborted (now, if it is). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** An API host's events as [name, payload] pairs (ApiHost.subscribe). */
export function recordHostEvents(host: { subscribe(listener: (event: string, payload: unknown) => void): () => void }): EventLog<[string, unknown]> {
  return recordEvents((push) => host.subscribe((event, payload) => push([event, payload])));
}

/**
 * Resolves with a store's state once it meets `condition` (a zustand store, or anything with
 * getState and subscribe): checked now and on each change, never on a timer.
 */
export function whenState<S>(store: { getState(): S; subscribe(listener: (state: S) => void): () => void }, condition: (state: S) => boolean): Promise<S> {
  return new Promise((resolve) => {
    if (condition(store.getState())) return resolve(store.getState());
    const off = store.subscribe((state) => {
      if (!condition(state)) return;
      off();
      resolve(state);
    });
  });
}

/**
 * Resolves with the names in `dir` once they meet `condition`: read now and after each change in it
 * (fs.watch), never on a timer. A missing folder holds no names; one that is missing while they do
 * not meet `condition` is an error (nothing could change it here).
 */
export function whenFolder(dir: string, condition: (names: string[]) => boolean): Promise<string[]> {
  if (!existsSync(dir)) return condition([]) ? Promise.resolve([]) : Promise.reject(new Error(`${dir} does not exist`));
  return new Promise((resolve, reject) => {
    // Watching starts before the first read, so no change falls between the two.
    const watcher = watch(dir, { persistent: false });
    const check = (): void => {
      const names = existsSync(dir) ? readdirSync(dir) : [];
      if (!condition(names)) return;
      watcher.close();
      resolve(names);
    };
    watcher.on('change', check);
    watcher.on('error', (e) => {
      watcher.close();
      reject(e);
    });
    check();
  });
}

/** Resolves once a llama backend's counters meet `check`: read now and after each of its steps (LlamaBackend.onStep), never on a timer. */
export function whenStats<S>(backend: { stats(): S; onStep(listener: () => void): () => void }, check: (stats: S) => boolean): Promise<void> {
  return whenTrue((listener) => backend.onStep(listener), () => check(backend.stats()));
}
