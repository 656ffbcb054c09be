// What every handler group receives from the host: the data folder's services (one model pool, one
// job manager, one settings store: services.ts) and the host's one event bus.
// Handler groups are `create<Domain>Handlers(deps)` in handlers/<domain>.ts and return a
// `DomainHandlers<typeof <domain>Methods>` object.
import type { z } from 'zod';
import type { ApiEvents, EventName, EventPayload, MethodDef, MethodMap } from '../common/contract';
import type { Services } from './services';

export interface HostDeps {
  /** The data folder's services (composition root, services.ts): pool, jobs, tasks, settings, libraries. */
  readonly services: Services;
  /** Absolute data folder (job database, user tasks, settings, uploads, exports). */
  readonly dataDir: string;
  readonly mode: 'electron' | 'browser' | 'test';
  /** Streams an event to every subscriber (validated against the contract in development). */
  emit<E extends EventName>(event: E, payload: z.input<ApiEventSchema<E>>): void;
  /** A signal aborted when the host is disposed: long work started by a handler listens to it. */
  readonly signal: AbortSignal;
  /** Where a failure nobody asked to hear of goes (work done after a call has answered): the host's log. */
  log(line: string): void;
}

type ApiEventSchema<E extends EventName> = ApiEvents[E];

/** What the host knows of one call beside its input. */
export interface CallContext {
  /**
   * Aborted when nobody waits for the answer any more (the page dropped the request: a browser's
   * fetch aborted, its connection closed) or when the host shuts down. Work a call does only for
   * its answer (a plan) stops on it; work it starts for later (a job) listens to `HostDeps.signal`.
   */
  readonly signal: AbortSignal;
}

/** Handlers for one domain's methods: parsed input in, output (before its defaults) out. */
export type DomainHandlers<M extends MethodMap> = {
  [K in keyof M]: (input: z.output<M[K]['input']>, call: CallContext) => Promise<z.input<M[K]['output']>>;
};

/** A handler group can hold resources (runs, a database); the host disposes it last-in first-out. */
export interface HandlerGroup<M extends MethodMap> {
  handlers: DomainHandlers<M>;
  dispose?(): Promise<void>;
}

export type { EventPayload, MethodDef };
