// The one HTTP client: every exchange with a server goes through here (inference servers and their
// probes, model downloads, the Hugging Face API). Three rules hold for all of them, in this file only:
// - Failures are classified (connection, timeout, HTTP status, not JSON, an answer of the wrong
//   shape) and worded once, so callers decide what to do (retry, fail over, one clear line)
//   without looking at raw errors.
// - The API key is redacted from every text that came back, before anything reads it: a server
//   that quotes the key in an error (or an answer) cannot put it in a terminal, a job row, an
//   event, an export or a log.
// - Every JSON answer is checked against the caller's schema; a bad one is an HttpFailure naming
//   what was wrong, never a TypeError further on.
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { z } from 'zod';
import { onAbort } from '../common/abort';
import { UserError } from '../common/errors';

export type HttpFailureKind = 'connect' | 'timeout' | 'status' | 'not-json' | 'bad-answer';

/** A failed exchange. `retryable`: the same request may succeed later or elsewhere. */
export class HttpFailure extends Error {
  constructor(
    readonly kind: HttpFailureKind,
    message: string,
    readonly url: string,
    readonly status?: number,
    /** Parsed JSON error body (key redacted), when there was one. */
    readonly body?: unknown,
    /** Milliseconds the server asked us to wait (Retry-After). */
    readonly retryAfterMs?: number,
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

  /** The server's error message (key redacted), from the usual JSON error shapes. */
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

// ------------------------------------------------------------------------------------------ keys

/** What a redacted key reads as. */
export const REDACTED = '[redacted]';

/**
 * Keys shorter than this are not searched for: replacing a two-letter "key" would garble every
 * answer, and it protects nothing.
 */
const MIN_REDACTED_KEY = 4;

let lastKey: string | undefined;
let lastForms: string[] = [];

/** The spellings of `key` a server's text may carry: as sent, JSON-escaped, URL-encoded (worked out once per key: this runs on every answer). */
function keyForms(key: string | undefined): string[] {
  if (!key || key.length < MIN_REDACTED_KEY) return [];
  if (key !== lastKey) {
    const json = JSON.stringify(key).slice(1, -1);
    lastForms = [...new Set([key, json, json.replaceAll('/', '\\/'), encodeURIComponent(key)])];
    lastKey = key;
  }
  return lastForms;
}

/** `text` with every spelling of `key` replaced by [redacted]. */
export function redactKey(text: string, key: string | undefined): string {
  let out = text;
  for (const form of keyForms(key)) if (out.includes(form)) out = out.replaceAll(form, REDACTED);
  return out;
}

// ------------------------------------------------------------------------------------------ calls

export interface HttpCall {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  /** Bearer key; never logged, never part of an error, redacted from what comes back. */
  key?: string;
  /** Until the whole answer is in (JSON), or until the headers are (streams). */
  timeoutMs: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface JsonCall<T> extends HttpCall {
  /** The answer's schema: only what the caller reads, loose about the rest. */
  answer: z.ZodType<T>;
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

/** A network error in words: `connection refused`, `host not found`, … */
function connectWords(e: unknown): string {
  const code = causeCode(e);
  if (code) return CONNECT_WORDS[code] ?? code;
  return e instanceof Error ? e.message : String(e);
}

function headersFor(call: Pick<HttpCall, 'headers' | 'body' | 'key'>, json: boolean): Record<string, string> {
  const headers: Record<string, string> = { ...(json ? { accept: 'application/json' } : {}), ...call.headers };
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  if (call.key) {
    // A header carries printable ASCII only; fetch's own refusal would read as a network failure.
    if (!/^[\x20-\x7e]+$/.test(call.key)) throw new UserError('the API key holds characters an HTTP header cannot carry (printable ASCII only); check it for a stray character', 'remote_bad_key');
    headers.authorization = `Bearer ${call.key}`;
  }
  return headers;
}

/** Why a JSON answer does not fit its schema, in one short phrase: `data: expected array, received null`. */
export function schemaProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'unexpected shape';
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'the answer';
  const what = issue.message.replace(/^Invalid input: /, '');
  return `${where}: ${what}`;
}

// JSON calls go over node:http(s) with one keep-alive pool per protocol, not fetch: an inference
// server takes hundreds of short calls a second, and fetch (WHATWG streams, a Request clone and
// several AbortSignals per call) cost about six times the CPU per call of a plain request here,
// enough to make the client the bottleneck (bench/remote-throughput.ts).
// An idle connection is closed after 4 s (or before the server's own Keep-Alive hint): servers
// close theirs after 5 s (uvicorn under vLLM, llama-server, Node), and a request sent on a
// connection the server is closing fails; one that does anyway is sent again on a new connection.
const IDLE_MS = 4000;
const agents = { 'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_MS }), 'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_MS }) } as const;
/** Redirects a GET follows (a POST's redirect is answered as its status). */
const MAX_REDIRECTS = 5;

interface Exchange {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

function headerText(value: string | string[] | undefined): string | null {
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

/** One request and its whole answer; rejects with a node error, a timeout HttpFailure, or the signal's reason. */
function exchange(call: HttpCall, url: URL, redirects = 0, reuse = true): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => {
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const headers = headersFor(call, true);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const agent = url.protocol === 'https:' ? agents['https:'] : url.protocol === 'http:' ? agents['http:'] : undefined;
    if (!agent) return reject(new Error(`unsupported protocol ${url.protocol}`));
    let settled = false;
    const finish = (error: unknown, value?: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      forget?.();
      if (error !== null) reject(error);
      else resolve(value!);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let answered = false;
    const req = send(url, { method: call.method, headers, agent: reuse ? agent : false }, (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      const location = headerText(res.headers.location);
      if (call.method === 'GET' && location && [301, 302, 303, 307, 308].includes(status) && redirects < MAX_REDIRECTS) {
        res.resume();
        settled = true;
        clearTimeout(timer);
        forget?.();
        const next = new URL(location, url);
        // The key is for the server it was given for: another origin does not get it.
        const { key: _key, ...keyless } = call;
        exchange(next.origin === url.origin ? call : keyless, next, redirects + 1).then(resolve, reject);
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish(null, { status, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => finish(e));
      res.on('close', () => {
        if (!res.complete) finish(Object.assign(new Error('connection closed'), { code: 'ECONNRESET' }));
      });
    });
    req.on('error', (e) => {
      // The server closed a kept-alive connection just as this request went out on it: it never
      // saw the request, so it goes again on a fresh connection (once).
      const code = (e as { code?: unknown }).code;
      if (req.reusedSocket && !answered && (code === 'ECONNRESET' || code === 'EPIPE') && !settled) {
        settled = true;
        clearTimeout(timer);
        forget?.();
        exchange(call, url, redirects, false).then(resolve, reject);
        return;
      }
      finish(e);
    });
    const timer = setTimeout(() => {
      finish(new HttpFailure('timeout', `no answer within ${Math.round(call.timeoutMs / 1000)} s`, call.url));
      req.destroy();
    }, call.timeoutMs);
    const forget = call.signal
      ? onAbort(call.signal, () => {
          finish(call.signal!.reason);
          req.destroy();
        })
      : undefined;
    req.end(body);
  });
}

/**
 * Sends one request and returns its JSON answer, checked against `call.answer`. Throws HttpFailure
 * for everything the server or the network did wrong (a wrong shape included), and the signal's
 * reason when `signal` aborts. Whatever the server wrote has the key redacted.
 */
export async function httpJson<T>(call: JsonCall<T>): Promise<T> {
  call.signal?.throwIfAborted();
  // Checked before anything is sent (a key a header cannot carry is a UserError, not a network failure).
  headersFor(call, true);
  let res: Exchange;
  try {
    res = await exchange(call, new URL(call.url));
  } catch (e) {
    call.signal?.throwIfAborted();
    if (e instanceof HttpFailure) throw e;
    throw new HttpFailure('connect', connectWords(e), call.url);
  }
  const text = redactKey(res.text, call.key);
  const contentType = redactKey(headerText(res.headers['content-type']) ?? '', call.key);
  let json: unknown;
  let parsed = false;
  try {
    json = JSON.parse(text);
    parsed = true;
  } catch {
    /* handled below */
  }
  if (res.status < 200 || res.status > 299) {
    throw new HttpFailure('status', `HTTP ${res.status}`, call.url, res.status, parsed ? json : undefined, parseRetryAfter(headerText(res.headers['retry-after'])), contentType);
  }
  if (!parsed) {
    const what = /html/i.test(contentType) || /^\s*</.test(text) ? 'an HTML page' : contentType ? `${contentType.split(';')[0]}` : 'something that is not JSON';
    throw new HttpFailure('not-json', `answered ${what}`, call.url, res.status, undefined, undefined, contentType);
  }
  const checked = call.answer.safeParse(json);
  if (!checked.success) throw new HttpFailure('bad-answer', `${new URL(call.url).pathname}: ${schemaProblem(checked.error)}`, call.url, res.status);
  return checked.data;
}

/** An answer whose body is read as a stream (downloads). */
export interface HttpStream {
  status: number;
  headers: Headers;
  /** The URL that answered, after redirects. */
  url: string;
  /** The body; fails with an HttpFailure ('timeout') after `idleTimeoutMs` without data, with the signal's reason on abort. */
  body: Readable;
}

export interface StreamCall extends Omit<HttpCall, 'method' | 'body'> {
  /** Longest silence once the body flows (default: none). */
  idleTimeoutMs?: number;
}

/**
 * GET whose answer is streamed: resolves once the headers are in (within `timeoutMs`, which covers
 * DNS, TCP and the wait for headers; redirects followed). The caller reads `status` and `headers`
 * and consumes or destroys `body`.
 */
export async function httpStream(call: StreamCall): Promise<HttpStream> {
  call.signal?.throwIfAborted();
  const headers = headersFor(call, false);
  const controller = new AbortController();
  const forget = call.signal ? onAbort(call.signal, () => controller.abort(call.signal!.reason)) : () => undefined;
  const headerTimer = setTimeout(() => controller.abort(new HttpFailure('timeout', `no answer within ${Math.round(call.timeoutMs / 1000)} s`, call.url)), call.timeoutMs);
  let res: Response;
  try {
    res = await fetch(call.url, { method: 'GET', headers, signal: controller.signal, redirect: 'follow' });
  } catch (e) {
    forget();
    call.signal?.throwIfAborted();
    const reason: unknown = controller.signal.reason;
    if (reason instanceof HttpFailure) throw reason;
    throw new HttpFailure('connect', connectWords(e), call.url);
  } finally {
    clearTimeout(headerTimer);
  }
  const done = () => {
    clearTimeout(idle);
    forget();
  };
  let idle: NodeJS.Timeout | undefined;
  const idleMs = call.idleTimeoutMs;
  const arm = () => {
    if (idleMs === undefined) return;
    clearTimeout(idle);
    idle = setTimeout(() => controller.abort(new HttpFailure('timeout', `no data for ${Math.round(idleMs / 1000)} s`, call.url)), idleMs);
  };
  const source = res.body ? Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>) : Readable.from([]);
  // What the body fails with: our timeout or the caller's reason, not undici's bare AbortError.
  const body = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      arm();
      cb(null, chunk);
    },
    flush(cb) {
      done();
      cb();
    },
  });
  source.on('error', (e) => {
    done();
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
    body.destroy(reason instanceof Error ? reason : reason !== undefined ? new HttpFailure('connect', 'connection closed', call.url) : new HttpFailure('connect', connectWords(e), call.url));
  });
  body.on('close', () => {
    done();
    // Destroyed by the caller before the end: stop the transfer.
    if (!source.destroyed) source.destroy();
  });
  source.pipe(body);
  arm();
  return { status: res.status, headers: res.headers, url: res.url || call.url, body };
}

// ------------------------------------------------------------------------------------------ retries

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
    const timer = setTimeout(() => {
      forget?.();
      resolve();
    }, ms);
    const forget = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(signal.reason);
        })
      : undefined;
  });
}
