// A model as every face names it, parsed once where it comes in (a CLI flag, the app's input, a
// stored job or experiment): a GGUF file, a model-library entry `remote:NAME`, or an inline
// OpenAI-compatible server `openai+http(s)://HOST:PORT/v1#MODEL[?inflight=N]`. A record stores
// the spec's `text`, a string, as records always have; everything else is read off the parsed
// spec: whether it is remote, how the pool loads it (hold/pool.ts) and how a plan counts its
// tokens (hold/plan-models.ts: by kind), what a model id is made of (`name`) and what people read
// (`label`, the same on every face). common/: no Node, no DOM.
import { UserError } from './errors';
import { MAX_IN_FLIGHT, MaxInFlight, RemoteModelEntry, normaliseBaseUrl, remoteLabel } from './remote';

interface SpecBase {
  /** The spec as a record stores it and as the pool and plans tell models apart by. */
  readonly text: string;
  /** A short name to build ids from: the file's name without .gguf, the library entry's name, the server's model id. */
  readonly name: string;
  /** What people read, in tables, charts, job names and terminals alike. */
  readonly label: string;
}

/** A GGUF file, loaded in this process. */
export interface GgufModelSpec extends SpecBase {
  readonly kind: 'gguf';
  readonly path: string;
}

/** `remote:NAME`: an entry of the model library (its endpoints, key and price are the entry's). */
export interface LibraryModelSpec extends SpecBase {
  readonly kind: 'library';
  readonly entry: string;
}

/** `openai+http(s)://HOST:PORT/v1#MODEL[?inflight=N]`: one endpoint, written out in full. */
export interface InlineModelSpec extends SpecBase {
  readonly kind: 'inline';
  /** The OpenAI API root, normalised (no trailing slash). */
  readonly url: string;
  /** The model id on the server. */
  readonly model: string;
  readonly maxInFlight?: number;
}

export type RemoteModelSpec = LibraryModelSpec | InlineModelSpec;
export type ModelSpec = GgufModelSpec | RemoteModelSpec;

export function isRemote(spec: ModelSpec): spec is RemoteModelSpec {
  return spec.kind !== 'gguf';
}

const LIBRARY = 'remote:';
const INLINE = /^openai\+/i;

/**
 * Whether text is written as a remote spec (`remote:…`, `openai+…`), well formed or not: the parse
 * reads it as one (and refuses it if malformed), never as a file; the app's model picker takes
 * such typed text as a model rather than a search.
 */
export function writtenAsRemote(text: string): boolean {
  const s = text.trim();
  return s.startsWith(LIBRARY) || INLINE.test(s);
}

export interface ParseModelSpecOptions {
  /**
   * Makes a GGUF path absolute (node:path's `resolve`, where a face has a working folder): a run
   * records it so, and a resume then works from any folder. Without it the path is kept as given.
   */
  resolvePath?: (path: string) => string;
}

/**
 * The one parse of a model argument. UserError, one line with the expected form, for an empty
 * argument and for a malformed remote spec; any other text names a GGUF file (whether it is one is
 * the loader's question).
 */
export function parseModelSpec(text: string, opts: ParseModelSpecOptions = {}): ModelSpec {
  const s = text.trim();
  if (s === '') throw new UserError('no model given: a GGUF file, remote:NAME or openai+http://HOST:PORT/v1#MODEL', 'model_missing');
  if (writtenAsRemote(s)) return s.startsWith(LIBRARY) ? librarySpec(s) : inlineSpec(s);
  const path = opts.resolvePath ? opts.resolvePath(s) : s;
  const name = fileStem(path);
  return { kind: 'gguf', text: path, path, name, label: name };
}

/** The generator and the evaluator an input or a record names, parsed. */
export function parseModelPair(pair: { generator: string; evaluator: string }): { generator: ModelSpec; evaluator: ModelSpec } {
  return { generator: parseModelSpec(pair.generator), evaluator: parseModelSpec(pair.evaluator) };
}

/** The label of a stored spec; one a parse would refuse (a record of an older version) shows as written. */
export function modelLabel(text: string): string {
  try {
    return parseModelSpec(text).label;
  } catch (e) {
    if (e instanceof UserError) return text;
    throw e;
  }
}

function fileStem(path: string): string {
  return (path.split(/[\\/]/).pop() ?? path).replace(/\.gguf$/i, '');
}

function librarySpec(s: string): LibraryModelSpec {
  const entry = s.slice(LIBRARY.length);
  if (!RemoteModelEntry.shape.name.safeParse(entry).success) throw new UserError(`"${s}" is not a remote model name (remote:NAME, letters, digits, . _ -)`, 'remote_bad_spec');
  return { kind: 'library', text: s, entry, name: entry, label: s };
}

function inlineSpec(s: string): InlineModelSpec {
  const rest = s.slice('openai+'.length);
  if (!/^https?:\/\//i.test(rest)) throw new UserError(`"${s}" is not a remote model; use openai+http://HOST:PORT/v1#MODEL or remote:NAME`, 'remote_bad_spec');
  const hash = rest.indexOf('#');
  // After the model, `?inflight=N` (the only option so far); model ids never hold a `?`.
  const fragment = hash >= 0 ? rest.slice(hash + 1) : '';
  const query = fragment.indexOf('?');
  const model = decodeURIComponent(query >= 0 ? fragment.slice(0, query) : fragment);
  if (hash < 0 || model.trim() === '') throw new UserError(`"${s}" names no model; add #MODEL, e.g. openai+http://localhost:8080/v1#qwen2.5-7b`, 'remote_bad_spec');
  const options = query >= 0 ? inlineOptions(s, fragment.slice(query + 1)) : {};
  const url = normaliseBaseUrl(rest.slice(0, hash));
  return { kind: 'inline', text: s, url, model, ...options, name: model, label: remoteLabel({ urls: [url], model }) };
}

/** `inflight=N` after an inline spec's `#MODEL?`; UserError naming the option for anything else. */
function inlineOptions(spec: string, query: string): { maxInFlight?: number } {
  const out: { maxInFlight?: number } = {};
  for (const [key, value] of new URLSearchParams(query)) {
    if (key !== 'inflight') throw new UserError(`"${spec}": unknown option "${key}" (the one option is ?inflight=N, requests in flight)`, 'remote_bad_spec');
    const n = Number(value);
    if (!MaxInFlight.safeParse(n).success) throw new UserError(`"${spec}": inflight must be a whole number from ${MAX_IN_FLIGHT.min} to ${MAX_IN_FLIGHT.max} (got "${value}")`, 'remote_bad_spec');
    out.maxInFlight = n;
  }
  return out;
}
