// One input through the engine for `tatra api`, made cheap to ask again:
// - a result already computed for the same input, task, settings (seed included) and models is
//   answered from a bounded cache without touching a model;
// - an identical request already running is joined rather than run twice;
// - otherwise it waits its turn for an engine slot (admission.ts) and runs `classify()`, the same
//   engine call as every other face, on the models the service holds loaded, with the engine's
//   generator-output cache: run-scope examples are made once and shared by every input, and while
//   the first input of a task and settings makes them, the others wait instead of making them too.
// Each caller has its own timeout and signal; the work itself stops when the last caller waiting
// for it has gone (disconnected, timed out or shut down), which frees its slot.
import { createHash } from 'node:crypto';
import { onAbort } from '../common/abort';
import { raceAbort } from '../common/errors';
import type { TatraEvent, TatraResult, TatraSettings } from '../common/tatra';
import { classify, type GenerationCache } from '../engine';
import { stableStringify } from '../engine/hash';
import { HttpError } from '../web/http-error';
import type { Admission } from './admission';
import type { Target } from './catalog';
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

/** Groups whose run-scope examples a finished classification left in the generator cache (at most this many remembered). */
const MAX_WARM_GROUPS = 10_000;

export class Classifier {
  private readonly flights = new Map<string, Flight>();
  /** Example groups (see exampleGroup) already made, and those being made now (resolved when done, either way). */
  private readonly warm = new Set<string>();
  private readonly warming = new Map<string, Promise<void>>();

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
    const forgetCaller = onAbort(ask.signal, () => giveUp.abort());

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
        throw new HttpError(504, `the classification took longer than the server's limit of ${Math.round(this.opts.timeoutMs / 1000)} s (tatra api --timeout)`, { code: 'timeout' });
      }
      metrics.classifications.inc({ outcome: giveUp.signal.aborted ? 'cancelled' : 'failed' });
      if (giveUp.signal.aborted) throw ask.signal.reason;
      throw e;
    } finally {
      clearTimeout(timer);
      forgetCaller();
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

  /**
   * Waits while another classification of the same example group makes the run-scope examples
   * (the engine's generator cache has no notion of work in progress: inputs started together would
   * each make them, the costliest stage, again). Returns the function to call when this one is
   * done: with true its examples are in the cache, and the group's later inputs go straight on.
   */
  private async examplesFirst(group: string | null, signal: AbortSignal): Promise<(made: boolean) => void> {
    const nothing = () => undefined;
    if (group === null) return nothing;
    for (;;) {
      if (this.warm.has(group)) return nothing;
      const making = this.warming.get(group);
      if (!making) break;
      await raceAbort(making, signal);
    }
    let done!: () => void;
    this.warming.set(group, new Promise<void>((resolve) => (done = resolve)));
    let called = false;
    return (made) => {
      if (called) return;
      called = true;
      if (made) {
        if (this.warm.size >= MAX_WARM_GROUPS) this.warm.clear();
        this.warm.add(group);
      }
      this.warming.delete(group);
      done();
    };
  }

  private start(key: string, ask: ClassifyAsk): Flight {
    const controller = new AbortController();
    const flight: Flight = { controller, listeners: new Set(), waiters: 0, settled: false, promise: Promise.resolve(null as never) };
    const { target, input, settings } = ask;
    flight.promise = (async () => {
      const examplesMade = await this.examplesFirst(exampleGroup(ask), controller.signal);
      let ok = false;
      const release = await this.opts.admission.slot(controller.signal).catch((e: unknown) => {
        examplesMade(false);
        throw e;
      });
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
        ok = true;
        return result;
      } finally {
        release();
        examplesMade(ok);
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

/**
 * What run-scope examples depend on: the task, k, the seed, the runs (r) and the generator. Every
 * input of such a group shares them; null for scope `input` (each input has its own).
 */
function exampleGroup(ask: ClassifyAsk): string | null {
  const { target, settings } = ask;
  if (settings.scope !== 'run' || settings.k === 0) return null;
  return stableStringify([target.served.hash, settings.k, settings.seed, settings.r, target.pairing.generatorBackend.id]);
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
