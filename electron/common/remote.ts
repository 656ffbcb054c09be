// Remote models: OpenAI-compatible inference servers (llama-server, vLLM, Ollama, LM Studio,
// OpenAI itself) standing in for a local GGUF. The shapes here are shared by the remote backend
// (electron/remote/), the model library, the API contract, the CLI and the UI, so a remote model
// is described the same way everywhere. common/: no Node, no DOM.
import { z } from 'zod';
import { UserError } from './errors';
import { Price } from './plan';

/** The server software behind an endpoint, as detected from the server itself. */
export const ServerKind = z.enum(['llama-server', 'vllm', 'ollama', 'lmstudio', 'openai', 'openai-compatible']);
export type ServerKind = z.infer<typeof ServerKind>;

/**
 * How outputs are constrained on a server:
 * - `gbnf`: llama-server's `grammar` field, the engine's GBNF as is;
 * - `structured-outputs`: vLLM ≥ 0.12 `structured_outputs` (`choice`, `grammar`);
 * - `guided`: older vLLM `guided_choice` / `guided_grammar`;
 * - `ollama-format`: Ollama's `format` with a JSON schema (label sets only);
 * - `json-schema`: `response_format` json_schema, OpenAI and LM Studio (label sets only);
 * - `none`: free text, parsed and validated as the engine parses local outputs.
 */
export const ConstrainedMode = z.enum(['gbnf', 'structured-outputs', 'guided', 'ollama-format', 'json-schema', 'none']);
export type ConstrainedMode = z.infer<typeof ConstrainedMode>;

/**
 * Requests in flight per endpoint, when the user sets it: `--max-in-flight` on `tatra models
 * add-remote`, `?inflight=N` after an inline spec's model, the app's remote-model form.
 */
export const MAX_IN_FLIGHT = { min: 1, max: 4096 } as const;
export const MaxInFlight = z.number().int().min(MAX_IN_FLIGHT.min).max(MAX_IN_FLIGHT.max);

/** What a probe of one endpoint found. */
export const ServerProbe = z.object({
  url: z.string(),
  kind: ServerKind,
  /** Server version (vLLM, Ollama) or build (llama-server); null when the server does not say. */
  version: z.string().nullable(),
  /** Model ids the server lists (/v1/models). */
  models: z.array(z.string()),
  /** Context length per request, when the server says (llama-server n_ctx, vLLM max_model_len). */
  contextLength: z.number().nullable(),
  /** The constrained output this server offers (see ConstrainedMode). */
  constrained: ConstrainedMode,
  /** Requests the server decodes at once (llama-server slots); null when unknown. */
  slots: z.number().nullable(),
});
export type ServerProbe = z.infer<typeof ServerProbe>;

/** A remote model as the model library keeps it (`remote:NAME`). No key: only where to find one. */
export const RemoteModelEntry = z.object({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
  /** Base URLs ending in the OpenAI API root (e.g. http://gpu1:8000/v1); several are replicas. */
  urls: z.array(z.string()).min(1),
  /** Model id on the server. */
  model: z.string().min(1),
  /** Environment variable holding the API key. */
  keyEnv: z.string().optional(),
  /** True when a key typed into the app is kept for this entry (server-side, never shown). */
  keyStored: z.boolean().optional(),
  /** Overrides what the probe detects. */
  kind: ServerKind.optional(),
  constrained: ConstrainedMode.optional(),
  /** Requests in flight per endpoint at most; default: what the server's kind takes (README, Scale out). */
  maxInFlight: MaxInFlight.optional(),
  /** US dollars per million input and output tokens, for plans and money budgets. */
  price: Price.optional(),
});
export type RemoteModelEntry = z.infer<typeof RemoteModelEntry>;

/** A remote model as a job records it: enough to reach the same endpoints on resume, no key. */
export const RemoteModelRef = z.object({
  /** Library entry name, when the model came from one. */
  name: z.string().optional(),
  urls: z.array(z.string()).min(1),
  model: z.string(),
  keyEnv: z.string().optional(),
  keyStored: z.boolean().optional(),
  kind: ServerKind,
  version: z.string().nullable(),
  constrained: ConstrainedMode,
  /** The in-flight ceiling the user set, if any (a resume uses it again). */
  maxInFlight: MaxInFlight.optional(),
});
export type RemoteModelRef = z.infer<typeof RemoteModelRef>;

/** Normalises a base URL: trailing slashes off; UserError for anything that is not http(s). */
export function normaliseBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UserError(`"${raw}" is not a URL; give the server's OpenAI API root, e.g. http://localhost:8080/v1`, 'remote_bad_url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UserError(`"${raw}" is not an http(s) URL`, 'remote_bad_url');
  if (url.username || url.password) throw new UserError(`put no credentials in the URL "${url.host}"; use --key-env`, 'remote_bad_url');
  if (url.search || url.hash) throw new UserError(`the server URL "${raw}" must not have a query or #fragment`, 'remote_bad_url');
  return url.toString().replace(/\/+$/, '');
}

/** A short label for a remote model: its library name, or its model and host (model-spec.ts labels inline specs so too). */
export function remoteLabel(ref: Pick<RemoteModelRef, 'name' | 'urls' | 'model'>): string {
  if (ref.name) return `remote:${ref.name}`;
  const first = ref.urls[0] ?? '';
  let host = first;
  try {
    host = new URL(first).host;
  } catch {
    /* keep as is */
  }
  return `${ref.model} @ ${host}${ref.urls.length > 1 ? ` +${ref.urls.length - 1}` : ''}`;
}
