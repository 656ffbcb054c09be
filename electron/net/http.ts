// The one HTTP client: every exchange with a server goes through here (inference servers and
// their probes; downloads and the Hugging Face API follow). Failures are classified (connection,
// timeout, HTTP status, not JSON) so that callers can decide what to do (retry, try another
// endpoint, stop with one clear line) without looking at raw errors.

export type HttpFailureKind = 'connect' | 'timeout' | 'status' | 'not-json';

/** A failed exchange. `retryable`: the same request may succeed later or elsewhere. */
export class HttpFailure extends Error {
  constructor(
    readonly kind: HttpFailureKind,
    message: string,
    readonly url: string,
    readonly status?: number,
    /** Parsed JSON error body, when there was one. */
    readonly body?: unknown,
    /** Milliseconds the server asked us to wait (Retry-After). */
    readonly retryAfterMs?: number,
    /** The start of a non-JSON body (HTML error pages), for the error line. */
    readonly contentType?: string,
  ) {
    super(message);
    this.name = 'HttpFailure';
  }

  get retryable(): boolean {
    if (this.kind === 'connect' || this.kind === 'timeout') return true;
    if (this.kind === 'status') return this.status === 429 || this.status === 408 || (this.status ?? 0) >= 500;
    return false;
  }

  /** The endpoint itself is gone (not just busy): set it aside and send the request elsewhere. */
  get endpointDown(): boolean {
    return this.kind === 'connect' || this.kind === 'timeout' || this.status === 502 || this.status === 504;
  }

  /**
   * The server answered that it is busy (429; 503, which Ollama sends when its queue is full and
   * llama-server while it loads): send fewer requests at once, and this one again after a pause.
   */
  get busy(): boolean {
    return this.kind === 'status' && (this.status === 429 || this.status === 503);
  }

  /** The server's error message, from the usual JSON error shapes. */
  get serverMessage(): string | undefined {
    const b = this.body as { error?: unknown; message?: unknown; detail?: unknown } | undefined;
    if (!b || typeof b !== 'object') return undefined;
    const e = b.error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
    if (typeof b.message === 'string') return b.message;
    if (typeof b.detail === 'string') return b.detail;
    return undefined;
  }
}

export interface HttpCall {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  /** Bearer key; never logged, never part of an error. */
  key?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds, capped at a minute. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(60_000, Math.max(0, ms));
}

function causeCode(e: unknown): string | undefined {
  let c: unknown = e;
  for (let i = 0; i < 4 && c && typeof c === 'object'; i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    c = (c as { cause?: unknown }).cause;
  }
  return undefined;
}

const CONNECT_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer',
  UND_ERR_BODY_TIMEOUT: 'answer stalled',
  EPIPE: 'connection closed',
};

/**
 * Sends one request and returns its JSON body. Throws HttpFailure for everything the server or the
 * network did wrong, and the signal's reason when `signal` aborts.
 */
export async function httpJson(call: HttpCall): Promise<unknown> {
  call.signal?.throwIfAborted();
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  if (call.key) headers.authorization = `Bearer ${call.key}`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(call.url, { method: call.method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body), signal });
    text = await res.text();
  } catch (e) {
    call.signal?.throwIfAborted();
    if (timeout.aborted) throw new HttpFailure('timeout', `no answer within ${Math.round(call.timeoutMs / 1000)} s`, call.url);
    const code = causeCode(e);
    throw new HttpFailure('connect', code ? (CONNECT_WORDS[code] ?? code) : e instanceof Error ? e.message : String(e), call.url);
  }
  const contentType = res.headers.get('content-type') ?? '';
  let json: unknown;
  let parsed = false;
  try {
    json = JSON.parse(text);
    parsed = true;
  } catch {
    /* handled below */
  }
  if (!res.ok) {
    throw new HttpFailure('status', `HTTP ${res.status}`, call.url, res.status, parsed ? json : undefined, parseRetryAfter(res.headers.get('retry-after')), contentType);
  }
  if (!parsed) {
    const what = /html/i.test(contentType) || /^\s*</.test(text) ? 'an HTML page' : contentType ? `${contentType.split(';')[0]}` : 'something that is not JSON';
    throw new HttpFailure('not-json', `answered ${what}`, call.url, res.status, undefined, undefined, contentType);
  }
  return json;
}

export interface Backoff {
  /** First delay (ms); doubles each attempt. */
  baseMs: number;
  /** Longest delay (ms). */
  maxMs: number;
}

/** Exponential backoff with full jitter for attempt (1-based); Retry-After, when given, wins. */
export function backoffDelay(attempt: number, backoff: Backoff, retryAfterMs?: number, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined) return retryAfterMs;
  const cap = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(cap / 2 + (random() * cap) / 2);
}

/** Waits `ms`, or rejects with the signal's reason as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
