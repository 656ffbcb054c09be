// The one implementation of the API contract (common/contract/) over the data folder's services
// (services.ts: the engine's pool, the jobs, the model library). Electron's main process (IPC) and `tatra serve` (HTTP + WebSocket) are thin
// transports over this host, so no face duplicates any logic. Every input is parsed with the
// contract before a handler sees it; outputs are parsed too, so defaults apply and a handler
// that drifts from the contract fails loudly in development instead of confusing the UI.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { type z } from 'zod';
import {
  type ApiErrorPayload,
  apiEvents,
  apiMethods,
  describeZodError,
  isEventName,
  isMethodName,
} from '../common/contract';
import { joinSignals } from '../common/abort';
import { DisposableStore } from '../common/disposables';
import { errorMessage } from '../common/errors';
import type { BackendProvider } from '../jobs';
import type { KeyProtection } from '../models/remote-library';
import type { CallContext, HostDeps } from './deps';
import { HOST_ERROR_CODES, toApiError } from './errors';
export { HOST_ERROR_CODES, toApiError } from './errors';
import { createSettingsHandlers } from './handlers/settings';
import { createTasksHandlers } from './handlers/tasks';
import { createClassifyHandlers } from './handlers/classify';
import { createJobsHandlers, forwardJobEvents } from './handlers/jobs';
import { createModelsHandlers } from './handlers/models';
import { createExperimentsHandlers } from './handlers/experiments';
import { createPlansHandlers } from './handlers/plans';
import { createReviewHandlers } from './handlers/review';
import { MODEL_KEEP_ALIVE_MS, openServices } from './services';

export interface ApiHostOptions {
  /** The data folder; created when missing. */
  dataDir: string;
  /** Threads for node-llama-cpp (default: defaultThreads(), llama/threads.ts). */
  threads?: number;
  /** Extra model folders for the library (beside the default models/ and those in settings). */
  modelsDirs?: string[];
  /** Which face serves this host (reported by `app.info`). Default "browser". */
  mode?: HostDeps['mode'];
  /**
   * Fail a call whose handler returns something the contract rejects (default: on unless
   * NODE_ENV is "production"; in production the unparsed value is passed on and logged).
   */
  strictOutputs?: boolean;
  /** Tests: serve models from this provider instead of node-llama-cpp's pool. */
  backendProvider?: BackendProvider;
  /** Where unexpected errors are logged (default: stderr). */
  log?: (line: string) => void;
  /** How keys typed into the app are protected at rest (Electron: safeStorage); default a 0600 file. */
  keyProtection?: KeyProtection;
}

export type InvokeResult = { ok: true; value: unknown } | { ok: false; error: ApiErrorPayload };
export type HostListener = (event: string, payload: unknown) => void;

export interface ApiHost {
  readonly dataDir: string;
  /**
   * Calls one contract method. Never rejects: every failure is an `{ok:false, error}` answer.
   * `signal`: the caller no longer waits for the answer (deps.ts CallContext).
   */
  invoke(method: string, input: unknown, options?: { signal?: AbortSignal }): Promise<InvokeResult>;
  /** Receives every streamed event; returns the function that unsubscribes. */
  subscribe(listener: HostListener): () => void;
  /** Cancels running work, unloads models, closes the database. Idempotent. */
  dispose(): Promise<void>;
}

type AnyHandler = (input: unknown, call: CallContext) => Promise<unknown>;

export async function createApiHost(opts: ApiHostOptions): Promise<ApiHost> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const strict = opts.strictOutputs ?? process.env.NODE_ENV !== 'production';
  const listeners = new Set<HostListener>();
  const shutdown = new AbortController();
  let disposed = false;

  const emit = contractEmitter(listeners, { log, strict, live: () => !disposed });

  const services = openServices({
    dataDir,
    ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
    // A page may name tasks by id only: a path would let it read files on this machine.
    taskPaths: false,
    keepAliveMs: MODEL_KEEP_ALIVE_MS,
    modelsDirs: opts.modelsDirs ?? [],
    ...(opts.keyProtection ? { keyProtection: opts.keyProtection } : {}),
    ...(opts.backendProvider ? { backendProvider: opts.backendProvider } : {}),
    onOpen: {
      // Forwarded from creation on, so jobs started by any handler group (experiments too) stream;
      // each forward stops when the services close (what these return).
      jobs: (manager) => forwardJobEvents(manager, emit as HostDeps['emit']),
      experiments: (experiments) => experiments.onProgress((p) => emit('experiment.progress', p)),
    },
  });

  // Shutdown in the reverse order of what is added: the host's signal first (runs see it), then
  // the handler groups, the last added first (runs and jobs stop before models unload), then the
  // services (sweeps and jobs paused, resumable; the database closed; models unloaded), then the
  // listeners. A failure is logged and the rest still close.
  const lifetime = new DisposableStore((e) => log(`tatra: shutting down: ${errorMessage(e)}`));
  lifetime.add(() => listeners.clear());
  lifetime.add(services);

  const deps: HostDeps = {
    services,
    dataDir,
    mode: opts.mode ?? 'browser',
    emit: emit as HostDeps['emit'],
    signal: shutdown.signal,
    log,
  };

  const table = new Map<string, AnyHandler>();
  const add = (group: { handlers: object; dispose?(): Promise<void> }): void => {
    if (group.dispose) lifetime.add(() => group.dispose?.());
    for (const [name, fn] of Object.entries(group.handlers)) table.set(name, fn as AnyHandler);
  };
  add(createSettingsHandlers(deps));
  add(createTasksHandlers(deps));
  add(createModelsHandlers(deps));
  add(createJobsHandlers(deps));
  add(createClassifyHandlers(deps));
  add(createExperimentsHandlers(deps));
  add(createPlansHandlers(deps));
  add(createReviewHandlers(deps));
  lifetime.add(() => shutdown.abort());

  const invoke = contractInvoke(table, { log, strict, live: () => !disposed }, shutdown.signal);

  return {
    dataDir,
    invoke,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async dispose() {
      disposed = true;
      await lifetime.dispose();
    },
  };
}

interface Checking {
  log: (line: string) => void;
  /** Fail what breaks the contract (development), or pass it on and log it (production). */
  strict: boolean;
  /** False once the host is disposed: calls are refused, events dropped. */
  live: () => boolean;
}

/** Emits an event to every listener, checked against the contract first; a throwing listener is logged, not fatal. */
function contractEmitter(listeners: ReadonlySet<HostListener>, { log, strict, live }: Checking): (event: string, payload: unknown) => void {
  return (event: string, payload: unknown): void => {
    if (!live()) return;
    let value = payload;
    if (isEventName(event)) {
      const parsed = (apiEvents[event] as z.ZodType).safeParse(payload);
      if (parsed.success) value = parsed.data;
      else if (strict) {
        log(`tatra: dropped event ${event} that breaks the contract: ${describeZodError(parsed.error)}`);
        return;
      }
    } else if (strict) {
      log(`tatra: dropped unknown event ${event}`);
      return;
    }
    for (const l of [...listeners]) {
      try {
        l(event, value);
      } catch (e) {
        log(`tatra: event listener failed: ${errorMessage(e)}`);
      }
    }
  };
}

/** Runs `fn` with a signal aborted by the caller's or the host's, whichever first; the join goes when the call ends (common/abort.ts joinSignals). */
async function withCallSignal<T>(given: AbortSignal | undefined, host: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  if (!given) return fn(host);
  const call = joinSignals(given, host);
  try {
    return await fn(call.signal);
  } finally {
    call.forget();
  }
}

/** Calls a handler with its input parsed by the contract and its output checked by it; never rejects. */
function contractInvoke(table: ReadonlyMap<string, AnyHandler>, { log, strict, live }: Checking, hostSignal: AbortSignal): ApiHost['invoke'] {
  return async (method, input, options = {}): Promise<InvokeResult> => {
    if (!live()) return { ok: false, error: { code: HOST_ERROR_CODES.disposed, message: 'the app is shutting down' } };
    if (typeof method !== 'string' || !isMethodName(method)) {
      return { ok: false, error: { code: HOST_ERROR_CODES.unknownMethod, message: `unknown method "${String(method)}"` } };
    }
    const def = apiMethods[method];
    const handler = table.get(method);
    if (!handler) return { ok: false, error: { code: HOST_ERROR_CODES.notAvailable, message: `${method} is not available in this build` } };
    const parsedInput = (def.input as z.ZodType).safeParse(input ?? {});
    if (!parsedInput.success) {
      return { ok: false, error: { code: HOST_ERROR_CODES.invalidInput, message: describeZodError(parsedInput.error, '', input) } };
    }
    let raw: unknown;
    try {
      raw = await withCallSignal(options.signal, hostSignal, (signal) => handler(parsedInput.data, { signal }));
    } catch (e) {
      const err = toApiError(e);
      if (err.internal) log(`tatra: ${method} failed: ${e instanceof Error && e.stack ? e.stack : errorMessage(e)}`);
      return { ok: false, error: { code: err.code, message: err.message } };
    }
    const parsedOutput = (def.output as z.ZodType).safeParse(raw);
    if (parsedOutput.success) return { ok: true, value: parsedOutput.data };
    const why = describeZodError(parsedOutput.error, `${method} answered outside the contract: `);
    log(`tatra: ${why}`);
    if (strict) return { ok: false, error: { code: HOST_ERROR_CODES.internal, message: why } };
    return { ok: true, value: raw };
  };
}
