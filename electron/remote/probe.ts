// What is behind an endpoint: asked of the server itself. `/v1/models` must answer (every
// OpenAI-compatible server has it); then llama-server's `/props`, vLLM's `/version`, Ollama's
// `/api/version` and LM Studio's `/api/v0/models` tell the kind, which decides the constrained
// output the backend asks for. Every failure becomes one line a user can act on.
import { z } from 'zod';
import { UserError } from '../common/errors';
import type { ConstrainedMode, ServerKind, ServerProbe } from '../common/remote';
import { HttpFailure, httpJson } from '../net/http';

export interface ProbeOptions {
  key?: string;
  /** Environment variable the key came from, for the error line. */
  keyEnv?: string;
  /** Per request (default 4000 ms): an unreachable server fails in well under 10 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The server root: the base URL without its trailing /v1 (llama-server, vLLM and Ollama serve their own endpoints there). */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/v1$/, '');
}

/** vLLM 0.12 replaced `guided_*` with `structured_outputs`. */
export function vllmConstrained(version: string | null): ConstrainedMode {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  if (!m) return 'structured-outputs';
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > 0 || minor >= 12 ? 'structured-outputs' : 'guided';
}

/** The constrained output each kind offers. */
export function constrainedFor(kind: ServerKind, version: string | null): ConstrainedMode {
  switch (kind) {
    case 'llama-server':
      return 'gbnf';
    case 'vllm':
      return vllmConstrained(version);
    case 'ollama':
      return 'ollama-format';
    case 'lmstudio':
    case 'openai':
      return 'json-schema';
    default:
      return 'none';
  }
}

/** One line for a failed exchange with `url`, naming what to do about it. */
export function describeFailure(e: HttpFailure, baseUrl: string, opts: { keyEnv?: string; model?: string } = {}): UserError {
  const where = baseUrl;
  if (e.kind === 'connect') return new UserError(`cannot reach ${where}: ${e.message}`, 'remote_unreachable');
  if (e.kind === 'timeout') return new UserError(`cannot reach ${where}: ${e.message}`, 'remote_unreachable');
  if (e.kind === 'not-json') return new UserError(`${where} is not an OpenAI-compatible server: ${new URL(e.url).pathname} ${e.message}`, 'remote_not_openai');
  if (e.kind === 'bad-answer') return new UserError(`${where} sent an answer TATRA Studio cannot use (${oneLine(e.message)})`, 'remote_bad_answer');
  const msg = e.serverMessage;
  if (e.status === 401 || e.status === 403) {
    const hint = opts.keyEnv ? `check the key in $${opts.keyEnv}` : 'give one with --key-env VAR (or type it in the app)';
    return new UserError(`${where} rejected the API key (HTTP ${e.status}${msg ? `: ${oneLine(msg)}` : ''}); ${hint}`, 'remote_auth');
  }
  if (e.status === 404 && !e.body) return new UserError(`${where} is not an OpenAI-compatible server: ${new URL(e.url).pathname} answered HTTP 404`, 'remote_not_openai');
  return new UserError(`${where} answered HTTP ${e.status}${msg ? `: ${oneLine(msg)}` : ''}`, 'remote_http');
}

export function oneLine(text: string, max = 200): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

// The listing every OpenAI-compatible server has, and the optional endpoints that tell the kind
// (any JSON object; what is read from it is checked where it is read).
const modelsAnswer = z.looseObject({ data: z.array(z.unknown()) });
const anyObject = z.looseObject({});

async function optional(call: Promise<Record<string, unknown>>): Promise<Record<string, unknown> | null> {
  try {
    return await call;
  } catch (e) {
    if (e instanceof HttpFailure) return null;
    throw e;
  }
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

/**
 * Probes one endpoint (`baseUrl` is the OpenAI API root, e.g. http://host:8080/v1). Rejects with
 * a UserError line when the server cannot be reached, is not OpenAI-compatible or refuses the key.
 */
export async function probeServer(baseUrl: string, opts: ProbeOptions = {}): Promise<ServerProbe> {
  const timeoutMs = opts.timeoutMs ?? 4000;
  const call = { method: 'GET' as const, timeoutMs, ...(opts.key ? { key: opts.key } : {}), ...(opts.signal ? { signal: opts.signal } : {}) };
  const get = (url: string) => httpJson({ ...call, url, answer: anyObject });
  let data: unknown[];
  try {
    data = (await httpJson({ ...call, url: `${baseUrl}/models`, answer: modelsAnswer })).data;
  } catch (e) {
    if (e instanceof HttpFailure) throw describeFailure(e, baseUrl, opts);
    throw e;
  }
  const entries = data.filter((d): d is Record<string, unknown> => !!d && typeof d === 'object');
  const models = entries.map((d) => str(d.id)).filter((id): id is string => id !== null);

  const root = serverRoot(baseUrl);
  const [props, version, ollama] = await Promise.all([optional(get(`${root}/props`)), optional(get(`${root}/version`)), optional(get(`${root}/api/version`))]);
  let kind: ServerKind;
  let ver: string | null = null;
  let contextLength: number | null = null;
  let slots: number | null = null;
  let lmstudio: Record<string, unknown> | null = null;
  if (props && typeof props.default_generation_settings === 'object') {
    kind = 'llama-server';
    ver = str(props.build_info);
    const settings = props.default_generation_settings as Record<string, unknown>;
    contextLength = num(settings.n_ctx);
    slots = num(props.total_slots);
  } else if (version && str(version.version) && entries.some((d) => 'max_model_len' in d || d.owned_by === 'vllm')) {
    kind = 'vllm';
    ver = str(version.version);
  } else if (ollama && str(ollama.version)) {
    kind = 'ollama';
    ver = str(ollama.version);
  } else if (new URL(baseUrl).hostname === 'api.openai.com') {
    kind = 'openai';
  } else if (Array.isArray((lmstudio = await optional(get(`${root}/api/v0/models`)))?.data)) {
    kind = 'lmstudio';
    // LM Studio lists each model's largest context.
    const mine = (lmstudio!.data as Array<Record<string, unknown>>).find((d) => d && d.id !== undefined && models.includes(String(d.id)));
    contextLength = num(mine?.max_context_length);
  } else {
    kind = 'openai-compatible';
  }
  if (kind === 'vllm') {
    // vLLM lists the context length of each model it serves.
    contextLength = num(entries.find((d) => 'max_model_len' in d)?.max_model_len);
  }
  return { url: baseUrl, kind, version: ver, models, contextLength, constrained: constrainedFor(kind, ver), slots };
}

/** UserError when the server does not list `model`, naming the models it has. */
export function checkModelListed(probe: ServerProbe, model: string): void {
  if (probe.models.length === 0 || probe.models.includes(model)) return;
  const shown = probe.models.slice(0, 12).join(', ') + (probe.models.length > 12 ? `, … (${probe.models.length} in all)` : '');
  throw new UserError(`${probe.url} has no model "${model}"; it serves: ${shown}`, 'remote_unknown_model');
}
