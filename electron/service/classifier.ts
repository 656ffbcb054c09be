// One input through the engine for `tatra api`, made cheap to ask again:
// - a result already computed for the same input, task, settings (seed included) and models is
//   answered from a bounded cache without touching a model;
// - an identical request already running is joined rather than run twice;
// - otherwise it waits its turn for an engine slot (admission.ts) and runs `classify()`, the same
//   engine call as every other face, on the models the service holds loaded, with the engine's
//   generator-output cache (run-scope examples are made once and shared by every input).
// Each caller has its own timeout and signal; the work itself stops when the last caller waiting
// for it has gone (disconnected, timed out or shut down), which frees its slot.
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { raceAbort } from '../common/errors';
import type { TatraEvent, TatraResult, TatraSettings } from '../common/tatra';
import { classify, type GenerationCache } from '../engine';
import { stableStringify } from '../engine/hash';
import type { Admission } from './admission';
import type { Target } from './catalog';
import { ApiFailure } from './errors';
import type { Lru } from './lru';
import type { ServiceMetrics } from './metrics';

export interface ClassifyAsk {
  target: Target;
  input: string;
  settings: TatraSettings;
  /** The caller's signal: its client went away, or the service is shutting down. */
  signal: AbortSignal;
  /** The engine's events while this input is computed (none for a cached answer). */
  onEvent?: (event: TatraEvent) => void;
}

export interface Answer {
  result: TatraResult;
  /** Answered from the result cache: no model was called for it. */
  cached: boolean;
}

interface Flight {
  promise: Promise<TatraResult>;
  controller: AbortController;
  listeners: Set<(event: TatraEvent) => void>;
  waiters: number;
  settled: boolean;
}

export interface ClassifierOptions {
  admission: Admission;
  metrics: ServiceMetrics;
  results: Lru<TatraResult>;
  generationCache: GenerationCache;
  /** How long one classification may take, waiting for its turn included. */
  timeoutMs: number;
}

export class Classifier {
  private readonly flights = new Map<string, Flight>();

  constructor(private readonly opts: ClassifierOptions) {}

  async classify(ask: ClassifyAsk): Promise<Answer> {
    const { metrics } = this.opts;
    ask.signal.throwIfAborted();
    const key = resultKey(ask);
    const hit = this.opts.results.get(key);
    if (hit) {
      metrics.classifications.inc({ outcome: 'cached' });
      return { result: hit, cached: true };
    }
    const giveUp = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      giveUp.abort();
    }, this.opts.timeoutMs);
    const onCallerGone = () => giveUp.abort();
    ask.signal.addEventListener('abort', onCallerGone, { once: true });

    const existing = this.flights.get(key);
    const flight = existing ?? this.start(key, ask);
    flight.waiters++;
    if (ask.onEvent) flight.listeners.add(ask.onEvent);
    try {
      const result = await raceAbort(flight.promise, giveUp.signal);
      metrics.classifications.inc({ outcome: existing ? 'joined' : 'computed' });
      return { result, cached: false };
    } catch (e) {
      if (timedOut) {
        metrics.classifications.inc({ outcome: 'timeout' });
        throw new ApiFailure(504, `the classification took longer than the server's limit of ${Math.round(this.opts.timeoutMs / 1000)} s (tatra api --timeout)`, 'timeout_error', 'timeout');
      }
      metrics.classifications.inc({ outcome: giveUp.signal.aborted ? 'cancelled' : 'failed' });
      if (giveUp.signal.aborted) throw ask.signal.reason;
      throw e;
    } finally {
      clearTimeout(timer);
      ask.signal.removeEventListener('abort', onCallerGone);
      if (ask.onEvent) flight.listeners.delete(ask.onEvent);
      flight.waiters--;
      // Nobody is waiting for it any more: stop the work and free its slot.
      if (flight.waiters === 0 && !flight.settled) flight.controller.abort();
    }
  }

  /** Identical requests in flight now (tests, metrics). */
  get inFlight(): number {
    return this.flights.size;
  }

  private start(key: string, ask: ClassifyAsk): Flight {
    const controller = new AbortController();
    // The engine listens on this signal once per model request in flight; that is not a leak.
    setMaxListeners(0, controller.signal);
    const flight: Flight = { controller, listeners: new Set(), waiters: 0, settled: false, promise: Promise.resolve(null as never) };
    const { target, input, settings } = ask;
    flight.promise = (async () => {
      const release = await this.opts.admission.slot(controller.signal);
      try {
        const result = await classify({
          task: target.served.task,
          input,
          settings,
          generator: target.pairing.generatorBackend,
          evaluator: target.pairing.evaluatorBackend,
          cache: this.opts.generationCache,
          signal: controller.signal,
          onEvent: (event) => {
            for (const listener of flight.listeners) listener(event);
          },
        });
        this.opts.results.set(key, result);
        return result;
      } finally {
        release();
      }
    })().finally(() => {
      flight.settled = true;
      this.flights.delete(key);
    });
    // A flight everyone left rejects with nobody listening: that is expected, not unhandled.
    flight.promise.catch(() => undefined);
    this.flights.set(key, flight);
    return flight;
  }
}

/** Everything that decides a result: the task's content, the input as the engine reads it, the settings and both models. */
function resultKey(ask: ClassifyAsk): string {
  const { target, input, settings } = ask;
  const parts = {
    task: target.served.hash,
    input: input.trim(),
    settings: { ...settings, earlyStop: settings.earlyStop === true },
    generator: target.pairing.generatorBackend.id,
    evaluator: target.pairing.evaluatorBackend.id,
  };
  return createHash('sha256').update(stableStringify(parts)).digest('base64url');
}
