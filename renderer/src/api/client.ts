// The renderer's one API client. Two transports, chosen once at start-up: Electron IPC through
// the preload's `window.tatra`, or browser mode (`tatra serve`) through fetch + a WebSocket.
// Everything above this file (store, views) sees only typed calls and events from the contract.
import type { z } from 'zod';
import {
  type EventName,
  type EventPayload,
  type MethodInput,
  type MethodName,
  type MethodOutput,
  apiEvents,
  apiMethods,
  describeZodError,
  isEventName,
} from '../../../electron/common/contract';
import type { BridgeReply, TatraBridge } from '../../../electron/common/contract/bridge';

export type TransportKind = 'electron' | 'browser';
export type RawListener = (event: string, payload: unknown) => void;

export interface Transport {
  readonly kind: TransportKind;
  /** `signal`: the page stops waiting; the host stops work done only for this answer (a plan). */
  invoke(method: string, input: unknown, signal?: AbortSignal): Promise<BridgeReply>;
  subscribe(listener: RawListener): () => void;
  /** Puts a file the user picked where the main process can read it; returns its path there. */
  upload(file: File): Promise<{ path: string; bytes: number }>;
  /** A URL that downloads an export, or null where exports are opened from disk (Electron). */
  downloadUrl(path: string): string | null;
  /** Connection state of the event stream (always true over IPC). */
  onConnection(listener: (connected: boolean) => void): () => void;
}

/** A failed call: `code` is the API's ("user_error", "invalid_input", "cancelled", …). */
export class ApiCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiCallError';
  }
}

export interface CallOptions {
  /** Aborting it drops the call: it rejects with ApiCallError "cancelled", and the host stops what it did only for this answer. */
  signal?: AbortSignal;
}

/** The answer of a call dropped by its signal, whatever the transport. */
const CANCELLED: BridgeReply = { ok: false, error: { code: 'cancelled', message: 'cancelled' } };

export interface ApiClient {
  readonly kind: TransportKind;
  call<M extends MethodName>(
    method: M,
    ...input: Record<never, never> extends MethodInput<M> ? [MethodInput<M>?, CallOptions?] : [MethodInput<M>, CallOptions?]
  ): Promise<MethodOutput<M>>;
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void;
  /** Every event, after validation; for the store's generic handling and for tests. */
  onAny(listener: RawListener): () => void;
  upload(file: File): Promise<{ path: string; bytes: number }>;
  downloadUrl(path: string): string | null;
  onConnection(listener: (connected: boolean) => void): () => void;
}

export function createApiClient(transport: Transport): ApiClient {
  const listeners = new Map<string, Set<(payload: unknown) => void>>();
  const anyListeners = new Set<RawListener>();
  let unsubscribe: (() => void) | null = null;

  const dispatch: RawListener = (event, payload) => {
    let value = payload;
    if (isEventName(event)) {
      const parsed = (apiEvents[event] as z.ZodType).safeParse(payload);
      if (!parsed.success) {
        console.warn(`tatra: ignored ${event} event outside the contract: ${describeZodError(parsed.error)}`);
        return;
      }
      value = parsed.data;
    }
    for (const l of anyListeners) l(event, value);
    for (const l of listeners.get(event) ?? []) l(value);
  };
  const ensureSubscribed = () => {
    unsubscribe ??= transport.subscribe(dispatch);
  };

  return {
    kind: transport.kind,
    async call(method, ...args) {
      const input = args[0] ?? {};
      const signal = args[1]?.signal;
      const reply = signal?.aborted ? CANCELLED : await transport.invoke(method, input, signal);
      if (!reply.ok) throw new ApiCallError(reply.error.code, reply.error.message);
      const parsed = (apiMethods[method].output as z.ZodType).safeParse(reply.value);
      if (!parsed.success) throw new ApiCallError('bad_reply', describeZodError(parsed.error, `${method} replied outside the contract: `));
      return parsed.data as never;
    },
    on(event, listener) {
      ensureSubscribed();
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      const l = listener as (payload: unknown) => void;
      set.add(l);
      return () => set.delete(l);
    },
    onAny(listener) {
      ensureSubscribed();
      anyListeners.add(listener);
      return () => anyListeners.delete(listener);
    },
    upload: (file) => transport.upload(file),
    downloadUrl: (path) => transport.downloadUrl(path),
    onConnection: (l) => transport.onConnection(l),
  };
}

// ---------------------------------------------------------------- Electron IPC

export function ipcTransport(bridge: TatraBridge): Transport {
  return {
    kind: 'electron',
    invoke(method, input, signal) {
      if (!signal) return bridge.invoke(method, input);
      // The call is named so the main process can abort it; the page stops waiting at once.
      const id = crypto.randomUUID();
      return new Promise<BridgeReply>((resolve, reject) => {
        const drop = () => {
          bridge.cancel(id);
          resolve(CANCELLED);
        };
        signal.addEventListener('abort', drop, { once: true });
        bridge
          .invoke(method, input, id)
          .then(resolve, reject)
          .finally(() => signal.removeEventListener('abort', drop));
      });
    },
    subscribe: (listener) => bridge.subscribe(listener),
    async upload(file) {
      // A file from disk is read in place by the main process: no copy over IPC (capped at the
      // invoke limit), and its bytes reach the importer as they are, so a bad UTF-8 sequence is
      // named with its line instead of being replaced by file.text() on the way.
      const path = bridge.pathForFile(file);
      if (path) return { path, bytes: file.size };
      // A File made in the page (no path on disk): its text travels over IPC.
      const reply = await bridge.invoke('jobs.upload', { name: file.name, content: await file.text() });
      if (!reply.ok) throw new ApiCallError(reply.error.code, reply.error.message);
      return reply.value as { path: string; bytes: number };
    },
    downloadUrl: () => null,
    onConnection(listener) {
      listener(true);
      return () => undefined;
    },
  };
}

// ---------------------------------------------------------------- browser mode

export interface BrowserTransportOptions {
  /** Page origin, e.g. http://127.0.0.1:5178 (default: location.origin). */
  origin?: string;
  fetch?: typeof fetch;
  WebSocket?: typeof WebSocket;
  /** Token header for clients that cannot hold the cookie (tests, other tools). */
  token?: string;
}

async function replyFromResponse(res: Response): Promise<BridgeReply> {
  if (res.status === 200) return (await res.json()) as BridgeReply;
  const text = (await res.text()).trim();
  const code = res.status === 401 ? 'unauthorised' : res.status === 403 ? 'forbidden' : `http_${res.status}`;
  return { ok: false, error: { code, message: text || `the server answered ${res.status}` } };
}

/** One POST /api/invoke as a reply: "offline" where the server cannot be reached, "cancelled" once `signal` is aborted. */
async function invokeOverHttp(post: (signal: AbortSignal | undefined) => Promise<Response>, signal: AbortSignal | undefined): Promise<BridgeReply> {
  let res: Response;
  try {
    res = await post(signal);
  } catch (e) {
    if (signal?.aborted) return CANCELLED;
    return { ok: false, error: { code: 'offline', message: `cannot reach tatra serve (${e instanceof Error ? e.message : String(e)})` } };
  }
  // The signal also ends the reading of the body.
  return replyFromResponse(res).catch((e: unknown) => {
    if (signal?.aborted) return CANCELLED;
    throw e;
  });
}

export function browserTransport(opts: BrowserTransportOptions = {}): Transport {
  const origin = opts.origin ?? window.location.origin;
  const doFetch = opts.fetch ?? window.fetch.bind(window);
  const WS = opts.WebSocket ?? window.WebSocket;
  const headers: Record<string, string> = opts.token ? { 'x-tatra-token': opts.token } : {};
  const rawListeners = new Set<RawListener>();
  const connectionListeners = new Set<(c: boolean) => void>();
  let socket: WebSocket | null = null;
  let connected = false;
  let retry = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const setConnected = (c: boolean) => {
    if (c === connected) return;
    connected = c;
    for (const l of connectionListeners) l(c);
  };
  const connect = () => {
    if (socket || rawListeners.size === 0) return;
    const ws = new WS(`${origin.replace(/^http/, 'ws')}/api/events`);
    socket = ws;
    ws.onopen = () => {
      retry = 0;
      setConnected(true);
    };
    ws.onmessage = (m: MessageEvent) => {
      let msg: { event?: unknown; payload?: unknown };
      try {
        msg = JSON.parse(String(m.data)) as typeof msg;
      } catch {
        return;
      }
      if (typeof msg.event !== 'string' || msg.event === 'hello') return;
      for (const l of rawListeners) l(msg.event, msg.payload);
    };
    ws.onclose = () => {
      socket = null;
      setConnected(false);
      if (rawListeners.size === 0) return;
      // Back off up to 5 s; the server may be restarting.
      const delay = Math.min(5000, 250 * 2 ** retry++);
      timer = setTimeout(() => {
        timer = null;
        connect();
      }, delay);
    };
  };

  return {
    kind: 'browser',
    invoke: (method, input, signal) =>
      // An aborted fetch closes its connection: the host stops what it did only for the answer (server.ts).
      invokeOverHttp(
        (s) =>
          doFetch(`${origin}/api/invoke`, {
            method: 'POST',
            credentials: 'same-origin',
            headers: { 'content-type': 'application/json', ...headers },
            body: JSON.stringify({ method, input }),
            ...(s ? { signal: s } : {}),
          }),
        signal,
      ),
    subscribe(listener) {
      rawListeners.add(listener);
      connect();
      return () => {
        rawListeners.delete(listener);
        if (rawListeners.size === 0) {
          if (timer) clearTimeout(timer);
          socket?.close();
          socket = null;
        }
      };
    },
    async upload(file) {
      const res = await doFetch(`${origin}/api/upload?name=${encodeURIComponent(file.name)}`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/octet-stream', ...headers },
        body: file,
      });
      if (res.status !== 200) {
        const reply = await replyFromResponse(res);
        throw new ApiCallError(reply.ok ? 'upload_failed' : reply.error.code, reply.ok ? 'upload failed' : reply.error.message);
      }
      return (await res.json()) as { path: string; bytes: number };
    },
    downloadUrl: (path) => `${origin}/api/download?path=${encodeURIComponent(path)}`,
    onConnection(listener) {
      connectionListeners.add(listener);
      listener(connected);
      return () => connectionListeners.delete(listener);
    },
  };
}

// ---------------------------------------------------------------- the one client

let client: ApiClient | null = null;

/** The transport for this page: IPC inside Electron, else browser mode. */
export function chooseTransport(win: Window = window): Transport {
  return win.tatra ? ipcTransport(win.tatra) : browserTransport();
}

export function getApi(): ApiClient {
  client ??= createApiClient(chooseTransport());
  return client;
}

/** Tests and stories: use this client instead. */
export function setApi(next: ApiClient | null): void {
  client = next;
}

/** The message to show for any failure, one line. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiCallError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
