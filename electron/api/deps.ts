// What every handler group receives from the host. One instance per host: one model pool (so a
// model no job or run uses is unloaded), one job manager, one settings store, one event bus.
// Handler groups are `create<Domain>Handlers(deps)` in handlers/<domain>.ts and return a
// `DomainHandlers<typeof <domain>Methods>` object.
import type { z } from 'zod';
import type { ApiEvents, EventName, EventPayload, MethodDef, MethodMap } from '../common/contract';
import type { AppSettings } from '../common/contract/settings';
import type { BackendProvider, JobManager, JobStore } from '../jobs';
import type { RemoteLibrary } from '../models/remote-library';

export interface HostDeps {
  /** Absolute data folder (job database, user tasks, settings, uploads, exports). */
  readonly dataDir: string;
  /** Threads given to node-llama-cpp. */
  readonly threads: number;
  /** Extra model folders given on the command line (beside those in settings). */
  readonly modelsDirs: readonly string[];
  readonly mode: 'electron' | 'browser' | 'test';
  /** Streams an event to every subscriber (validated against the contract in development). */
  emit<E extends EventName>(event: E, payload: z.input<ApiEventSchema<E>>): void;
  /** Stored app settings (read fresh each call). */
  settings(): Promise<AppSettings>;
  /**
   * The host's one model pool: generator and evaluator of every run and job acquire from it, so
   * one file is loaded once and a model nothing holds is unloaded. Created on first use.
   */
  pool(): Promise<BackendProvider>;
  /** The host's one job manager (SQLite store in the data folder), opened on first use. */
  jobs(): Promise<JobManager>;
  /** The job manager's SQLite store (sweeps keep their own tables in it). */
  jobStore(): Promise<JobStore>;
  /** Remote models of the library (`remote:NAME`) and the keys typed for them (kept host-side). */
  readonly remotes: RemoteLibrary;
  /** A signal aborted when the host is disposed: long work started by a handler listens to it. */
  readonly signal: AbortSignal;
}

type ApiEventSchema<E extends EventName> = ApiEvents[E];

/** Handlers for one domain's methods: parsed input in, output (before its defaults) out. */
export type DomainHandlers<M extends MethodMap> = {
  [K in keyof M]: (input: z.output<M[K]['input']>) => Promise<z.input<M[K]['output']>>;
};

/** A handler group can hold resources (runs, a database); the host disposes it last-in first-out. */
export interface HandlerGroup<M extends MethodMap> {
  handlers: DomainHandlers<M>;
  dispose?(): Promise<void>;
}

export type { EventPayload, MethodDef };
