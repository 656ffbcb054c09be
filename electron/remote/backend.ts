// TatraBackend on OpenAI-compatible inference servers. One remote model may have several endpoints
// (replicas); each request goes to the least-loaded healthy one (endpoints.ts), fails over when an
// endpoint dies, and is retried with backoff and jitter on 429/5xx (honouring Retry-After). The
// engine sees the same seam as for a local GGUF; only the result's `deterministic: false` differs:
// a server batches requests as it likes, so the same seed need not give the same text.
import { z } from 'zod';
import { joinSignals } from '../common/abort';
import { UserError, isAbortError } from '../common/errors';
import type { ConstrainedMode, RemoteModelRef, ServerKind, ServerProbe } from '../common/remote';
import type { OutputConstraint } from '../common/tatra';
import { ContextOverflowError, type ChatPrompt, type GenerateRequest, type GenerateResult, type GenerateResultListener, type LoadedBackend } from '../engine/backend';
import { Endpoint, EndpointSet, type EndpointState } from './endpoints';
import { HttpFailure, backoffDelay, httpJson, sleep } from '../net/http';
import { checkModelListed, describeFailure, oneLine, probeServer, serverRoot } from './probe';
import { literalChoices } from '../engine/literal-choices';
import { type ChoiceTokens, answerSchema, chatMessages, choiceTokensFrom, llamaServerCompletion, outputConstraintFor, readAnswer, shapeChatCall, type ShapedCall } from './shapes';

export interface RemoteBackendOptions {
  /** OpenAI API roots (…/v1) of the endpoints serving the model; several are replicas. */
  urls: readonly string[];
  /** Model id on the servers. */
  model: string;
  /** Library entry name, when the model came from one (recorded with jobs). */
  name?: string;
  /** API key (Bearer). Kept in memory only. */
  key?: string;
  /** Where the key came from, for error lines and job records (never the key itself). */
  keyEnv?: string;
  keyStored?: boolean;
  /** Override what the probe detects. */
  kind?: ServerKind;
  constrained?: ConstrainedMode;
  /** Context size per request; default what the server says, else 4096. */
  contextSize?: number;
  /** Requests in flight per endpoint at most (the ceiling it adapts under); default defaultMaxInFlight(). */
  maxInFlight?: number;
  /** Per request (default 300 s: a long generation on a busy server). */
  requestTimeoutMs?: number;
  /** Per probe request (default 4 s, so an unreachable server fails in under 10 s). */
  probeTimeoutMs?: number;
  /** Attempts per request before its error is final (default 8). */
  maxAttempts?: number;
  /** Backoff between attempts (default 250 ms doubling to 10 s). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** First delay before a set-aside endpoint is probed again (default 500 ms, doubling to 15 s). */
  reprobeMs?: number;
  /** How long requests wait while every endpoint is down (default 120 s). */
  downTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface RemoteBackendStats {
  requests: number;
  /** Attempts that were sent again (other endpoint, or after a backoff). */
  retries: number;
  /** Outputs the server was asked to constrain / left free. */
  constrainedOutputs: number;
  unconstrainedOutputs: number;
  endpoints: EndpointState[];
}

// The other answers the backend reads (llama-server's /apply-template and /tokenize, vLLM's /tokenize).
const templateAnswer = z.looseObject({ prompt: z.string() });
const tokensAnswer = z.looseObject({ tokens: z.array(z.unknown()) });
const countAnswer = z.looseObject({ count: z.number() });

const DEFAULT_CONTEXT = 4096;
/** vLLM's documented default batch (`--max-num-seqs`): requests it decodes at once. */
const VLLM_DEFAULT_BATCH = 256;
/** Anything that does not say how much it takes at once (Ollama, LM Studio, OpenAI, others). */
const DEFAULT_IN_FLIGHT = 8;

/**
 * Requests in flight per endpoint when the user does not say: what the server says about itself
 * where it does. llama-server: twice its slots, because a request spends part of its time outside
 * a slot (the HTTP round trip, /apply-template) and one waiting in the server's queue keeps the
 * slot busy meanwhile, where one per slot left it idle for that time. vLLM: its default batch (a
 * server started with a larger --max-num-seqs needs the user's number). Anything else: a few, and
 * 429/503 answers lower even that (endpoints.ts).
 */
export function defaultMaxInFlight(kind: ServerKind, slots: number | null): number {
  if (kind === 'llama-server' && slots) return slots * 2;
  if (kind === 'vllm') return VLLM_DEFAULT_BATCH;
  return DEFAULT_IN_FLIGHT;
}
const MAX_RENDERED = 512;

/** A remote model's identity in cache keys: its model id and endpoints. */
export function remoteBackendId(model: string, urls: readonly string[]): string {
  return `remote:${model}@${[...urls].sort().join(',')}`;
}

export class RemoteBackend implements LoadedBackend {
  readonly id: string;
  readonly contextSize: number;
  /** A server's batching decides which requests decode together: the same seed need not give the same text. */
  readonly deterministic = false;
  readonly kind: ServerKind;
  readonly version: string | null;
  readonly constrainedMode: ConstrainedMode;
  /** How this server holds outputs to a grammar and to a label set (results record it). */
  readonly outputConstraint: { readonly grammar: OutputConstraint; readonly choice: OutputConstraint };
  readonly model: string;

  private readonly set: EndpointSet;
  private readonly rendered = new Map<string, Promise<string>>();
  private readonly counted = new Map<string, Promise<number>>();
  private readonly choices = new Map<string, Promise<ChoiceTokens | null>>();
  private readonly dispose_ = new AbortController();
  private readonly counters = { requests: 0, retries: 0, constrainedOutputs: 0, unconstrainedOutputs: 0 };
  private disposed = false;

  /** @internal use connectRemoteBackend() */
  constructor(
    private readonly opts: RemoteBackendOptions,
    endpoints: Endpoint[],
    first: ServerProbe,
  ) {
    this.model = opts.model;
    this.kind = opts.kind ?? first.kind;
    this.version = first.version;
    this.constrainedMode = opts.constrained ?? first.constrained;
    this.outputConstraint = outputConstraintFor(this.kind, this.constrainedMode);
    this.contextSize = opts.contextSize ?? first.contextLength ?? DEFAULT_CONTEXT;
    this.id = remoteBackendId(opts.model, opts.urls);
    const reprobeMs = opts.reprobeMs ?? 500;
    this.set = new EndpointSet(endpoints, {
      reprobeMs,
      maxReprobeMs: Math.max(reprobeMs, 15_000),
      downTimeoutMs: opts.downTimeoutMs ?? 120_000,
      check: async (endpoint) => {
        endpoint.probe = await probeServer(endpoint.url, { ...this.keyOpts(), timeoutMs: this.probeTimeoutMs, signal: this.dispose_.signal });
        return true;
      },
    });
    // Endpoints the first probe could not reach are set aside now and come back when they answer.
    for (const e of endpoints) if (!e.probe) this.set.setAside(e, e.lastError ?? 'unreachable');
  }

  /** Whether label outputs are constrained by the server (false: parsed and validated only). */
  get constrained(): boolean {
    return this.constrainedMode !== 'none';
  }

  /** What a job records about this model: where it is and what it is, never the key. */
  describe(): RemoteModelRef {
    return {
      ...(this.opts.name ? { name: this.opts.name } : {}),
      urls: [...this.opts.urls],
      model: this.opts.model,
      ...(this.opts.keyEnv ? { keyEnv: this.opts.keyEnv } : {}),
      ...(this.opts.keyStored ? { keyStored: true } : {}),
      kind: this.kind,
      version: this.version,
      constrained: this.constrainedMode,
      ...(this.opts.maxInFlight ? { maxInFlight: this.opts.maxInFlight } : {}),
    };
  }

  stats(): RemoteBackendStats {
    return { ...this.counters, endpoints: this.set.states() };
  }

  /** Calls `listener` after an endpoint is set aside or set back in (read stats().endpoints in it); returns its removal. */
  onEndpointUpOrDown(listener: () => void): () => void {
    return this.set.onUpOrDown(listener);
  }

  async generate(requests: readonly GenerateRequest[], onResult?: GenerateResultListener): Promise<GenerateResult[]> {
    this.ensureNotDisposed();
    for (const request of requests) {
      request.signal?.throwIfAborted();
      if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1) throw new UserError(`maxTokens must be a positive integer (got ${request.maxTokens})`);
    }
    return Promise.all(
      requests.map(async (request, index) => {
        const result = await this.generateOne(request);
        onResult?.(index, result);
        return result;
      }),
    );
  }

  async countPromptTokens(prompt: ChatPrompt): Promise<number> {
    this.ensureNotDisposed();
    const key = promptKey(prompt);
    let count = this.counted.get(key);
    if (!count) {
      count = this.countUncached(prompt);
      remember(this.counted, key, count);
    }
    return count;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.dispose_.abort();
    this.set.dispose();
  }

  // -------------------------------------------------------------------------------------------

  private get probeTimeoutMs(): number {
    return this.opts.probeTimeoutMs ?? 4000;
  }

  private keyOpts(): { key?: string; keyEnv?: string } {
    return { ...(this.opts.key ? { key: this.opts.key } : {}), ...(this.opts.keyEnv ? { keyEnv: this.opts.keyEnv } : {}) };
  }

  private ensureNotDisposed(): void {
    if (this.disposed) throw new Error('this model backend has been disposed');
  }

  private async generateOne(request: GenerateRequest): Promise<GenerateResult> {
    const started = performance.now();
    const { call, answer, promptTokens } = await this.withEndpoint(request.signal, async (endpoint, signal) => {
      let shaped: ShapedCall;
      let renderedTokens: number | null = null;
      if (this.kind === 'llama-server' && this.constrainedMode === 'gbnf') {
        const [prompt, choice] = await Promise.all([this.render(request.prompt, endpoint), request.grammar === undefined ? null : this.choiceTokens(request.grammar, endpoint)]);
        shaped = llamaServerCompletion(prompt, request, choice);
      } else {
        shaped = shapeChatCall(this.kind, this.constrainedMode, this.model, request);
      }
      const json = await this.post(endpoint, shaped.fromRoot ? `${serverRoot(endpoint.url)}${shaped.path}` : `${endpoint.url}${shaped.path}`, shaped.body, signal, answerSchema(shaped));
      const answer = readAnswer(shaped, json);
      if (!answer) throw new UserError(`${endpoint.url} answered ${shaped.path} without a completion`, 'remote_not_openai');
      // The answer stands when its prompt cannot be counted after it (the server gone since, or no
      // tokenizer it offers): its usage then counts no prompt tokens, never fails the call.
      if (answer.promptTokens === null) renderedTokens = await this.countPromptTokens(request.prompt).catch(uncounted);
      return { call: shaped, answer, promptTokens: answer.promptTokens ?? renderedTokens ?? 0 };
    }, request.maxTokens);
    this.counters.requests++;
    if (call.constrained) this.counters.constrainedOutputs++;
    else this.counters.unconstrainedOutputs++;
    return {
      text: answer.text,
      promptTokens,
      completionTokens: answer.completionTokens ?? 0,
      ms: performance.now() - started,
    };
  }

  /**
   * Runs `fn` on an endpoint, failing over and backing off as the failure says: an endpoint that
   * is down is set aside and the request goes elsewhere (or waits for it to come back); 429 and
   * 5xx are retried after a backoff; anything else is final and becomes one clear line.
   */
  private async withEndpoint<T>(requestSignal: AbortSignal | undefined, fn: (endpoint: Endpoint, signal: AbortSignal) => Promise<T>, maxTokens = Infinity): Promise<T> {
    // The request's signal joined with dispose's, forgotten when the request ends, so nothing of it
    // stays on dispose's long-lived signal (common/abort.ts joinSignals says when AbortSignal.any would).
    const joined = requestSignal ? joinSignals(requestSignal, this.dispose_.signal) : null;
    try {
      return await this.attempts(joined?.signal ?? this.dispose_.signal, fn, maxTokens);
    } finally {
      joined?.forget();
    }
  }

  private async attempts<T>(signal: AbortSignal, fn: (endpoint: Endpoint, signal: AbortSignal) => Promise<T>, maxTokens: number): Promise<T> {
    const maxAttempts = this.opts.maxAttempts ?? 8;
    const backoff = { baseMs: this.opts.backoffBaseMs ?? 250, maxMs: this.opts.backoffMaxMs ?? 10_000 };
    for (let attempt = 1; ; attempt++) {
      const endpoint = await this.set.acquire(signal, attempt > 1);
      const started = performance.now();
      let ok = false;
      try {
        const value = await fn(endpoint, signal);
        ok = true;
        endpoint.noteSuccess(performance.now() - started, maxTokens);
        return value;
      } catch (e) {
        signal.throwIfAborted();
        if (isAbortError(e)) throw e;
        if (!(e instanceof HttpFailure)) throw e;
        if (e.busy) endpoint.noteBusy();
        if (e.endpointDown) this.set.setAside(endpoint, e.message);
        if (!e.retryable || attempt >= maxAttempts) throw this.finalError(e, endpoint);
        this.counters.retries++;
        // A dead endpoint's requests go straight to another one; a busy server gets a pause.
        if (!e.endpointDown || this.set.endpoints.length === 1) await sleep(backoffDelay(attempt, backoff, e.retryAfterMs), signal);
      } finally {
        this.set.release(endpoint, ok);
      }
    }
  }

  private finalError(e: HttpFailure, endpoint: Endpoint): Error {
    const message = e.serverMessage ?? '';
    const body = e.body as { error?: { type?: unknown; code?: unknown; n_prompt_tokens?: unknown; n_ctx?: unknown } } | undefined;
    const type = body?.error?.type ?? body?.error?.code;
    if (e.kind === 'status' && (type === 'exceed_context_size_error' || type === 'context_length_exceeded' || /context (length|size|window)|maximum context|too long/i.test(message))) {
      const numbers = [...message.matchAll(/\d+/g)].map((m) => Number(m[0]));
      const ctx = typeof body?.error?.n_ctx === 'number' ? body.error.n_ctx : (numbers[0] ?? this.contextSize);
      const needed = typeof body?.error?.n_prompt_tokens === 'number' ? body.error.n_prompt_tokens : (numbers[1] ?? ctx + 1);
      return new ContextOverflowError(needed, ctx);
    }
    if (e.kind === 'status' && (e.status === 404 || e.status === 400) && /model/i.test(message) && /(not|no) (found|exist)|does not exist|unknown/i.test(message)) {
      const models = endpoint.probe?.models ?? [];
      return new UserError(`${endpoint.url} has no model "${this.model}"${models.length ? `; it serves: ${models.slice(0, 12).join(', ')}` : ''}`, 'remote_unknown_model');
    }
    if (e.kind === 'status' && e.status === 400) return new UserError(`${endpoint.url} refused the request: ${oneLine(message || 'HTTP 400')}`, 'remote_bad_request');
    return describeFailure(e, endpoint.url, this.keyOpts());
  }

  private post<T>(endpoint: Endpoint, url: string, body: unknown, signal: AbortSignal, answer: z.ZodType<T>): Promise<T> {
    return httpJson({ method: 'POST', url, body, answer, timeoutMs: this.opts.requestTimeoutMs ?? 300_000, signal, ...(this.opts.key ? { key: this.opts.key } : {}) });
  }

  /**
   * The prompt as llama-server's chat template renders it (without an assistant prefix). Shared by
   * every request with the same turns, so it listens only to dispose, not to one request's signal.
   */
  private render(prompt: ChatPrompt, endpoint: Endpoint): Promise<string> {
    const signal = this.dispose_.signal;
    const key = promptKey({ system: prompt.system, user: prompt.user });
    let rendered = this.rendered.get(key);
    if (!rendered) {
      rendered = this.post(endpoint, `${serverRoot(endpoint.url)}/apply-template`, { messages: chatMessages(prompt, false) }, signal, templateAnswer).then((json) => json.prompt);
      remember(this.rendered, key, rendered);
    }
    return rendered;
  }

  /**
   * A label-set grammar's choices as the server tokenizes them (llama-server's /tokenize), asked
   * once per grammar: every replica serves the same model, so one answer holds for all. Null for
   * any other grammar, or when the tokens do not spell the choices back.
   */
  private choiceTokens(grammar: string, endpoint: Endpoint): Promise<ChoiceTokens | null> {
    let known = this.choices.get(grammar);
    if (!known) {
      const choices = literalChoices(grammar);
      known = !choices
        ? Promise.resolve(null)
        : Promise.all(choices.map((content) => this.post(endpoint, `${serverRoot(endpoint.url)}/tokenize`, { content, add_special: false, parse_special: false, with_pieces: true }, this.dispose_.signal, tokensAnswer))).then((answers) =>
            choiceTokensFrom(choices, answers),
          ).catch((e: unknown) => {
            // A server without /tokenize (or refusing it) still has the grammar; a down one is retried.
            if (e instanceof HttpFailure && !e.retryable) return null;
            throw e;
          });
      remember(this.choices, grammar, known);
    }
    return known;
  }

  private async countUncached(prompt: ChatPrompt): Promise<number> {
    if (this.kind === 'llama-server') {
      return this.withEndpoint(undefined, async (endpoint, signal) => {
        const rendered = (await this.render(prompt, endpoint)) + (prompt.assistantPrefix ?? '');
        const json = await this.post(endpoint, `${serverRoot(endpoint.url)}/tokenize`, { content: rendered, add_special: true, parse_special: true }, signal, tokensAnswer);
        return json.tokens.length;
      });
    }
    if (this.kind === 'vllm') {
      try {
        return await this.withEndpoint(undefined, async (endpoint, signal) => {
          const json = await this.post(endpoint, `${serverRoot(endpoint.url)}/tokenize`, { model: this.model, messages: chatMessages(prompt), add_generation_prompt: !prompt.assistantPrefix }, signal, countAnswer);
          return json.count;
        });
      } catch (e) {
        if (!(e instanceof UserError)) throw e;
        // An older vLLM without /tokenize: estimate as below.
      }
    }
    // No tokenizer endpoint: a generous estimate (most tokenizers average 3.5-4.5 characters a
    // token on English), so the engine's context checks err on the safe side.
    const chars = prompt.system.length + prompt.user.length + (prompt.assistantPrefix?.length ?? 0);
    return Math.ceil(chars / 3) + 16;
  }
}

function promptKey(prompt: ChatPrompt): string {
  return `${prompt.system}\u0000${prompt.user}\u0000${prompt.assistantPrefix ?? ''}`;
}

function remember<T>(map: Map<string, Promise<T>>, key: string, value: Promise<T>): void {
  if (map.size >= MAX_RENDERED) map.delete(map.keys().next().value as string);
  map.set(key, value);
  // A failed render or count is not remembered: the next call asks again.
  value.catch(() => {
    if (map.get(key) === value) map.delete(key);
  });
}

/**
 * Probes every endpoint (in parallel, each within probeTimeoutMs), checks that the model is served
 * and returns the backend. Endpoints that cannot be reached are set aside and probed again later,
 * as long as one answers; a wrong key, an unknown model or a server that is not OpenAI-compatible
 * fails at once with one line.
 */
export async function connectRemoteBackend(opts: RemoteBackendOptions): Promise<RemoteBackend> {
  if (opts.urls.length === 0) throw new UserError('a remote model needs at least one URL', 'remote_bad_spec');
  const probeOpts = { ...(opts.key ? { key: opts.key } : {}), ...(opts.keyEnv ? { keyEnv: opts.keyEnv } : {}), timeoutMs: opts.probeTimeoutMs ?? 4000, ...(opts.signal ? { signal: opts.signal } : {}) };
  const outcomes = await Promise.allSettled(opts.urls.map((url) => probeServer(url, probeOpts)));
  opts.signal?.throwIfAborted();
  const probes: ServerProbe[] = [];
  for (const o of outcomes) {
    if (o.status === 'fulfilled') probes.push(o.value);
    else if (!(o.reason instanceof UserError && o.reason.code === 'remote_unreachable')) throw o.reason;
  }
  const first = probes[0];
  if (!first) throw (outcomes[0] as PromiseRejectedResult).reason;
  for (const p of probes) checkModelListed(p, opts.model);
  const endpoints = opts.urls.map((url, i) => {
    const o = outcomes[i]!;
    const probe = o.status === 'fulfilled' ? o.value : null;
    const endpoint = new Endpoint(url, opts.maxInFlight ?? defaultMaxInFlight(opts.kind ?? (probe ?? first).kind, probe?.slots ?? first.slots));
    endpoint.probe = probe;
    if (o.status === 'rejected') endpoint.lastError = (o.reason as Error).message;
    return endpoint;
  });
  return new RemoteBackend(opts, endpoints, first);
}

/** A prompt whose tokens could not be counted after its answer came: unknown, so none are counted. */
function uncounted(): null {
  return null;
}
