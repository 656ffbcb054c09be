// The only thing the TATRA engine knows about a language model. node-llama-cpp implements it
// (electron/llama/), tests script it, and an OpenAI-compatible server could implement it too.
// Kept deliberately small: a backend generates text for chat prompts, optionally constrained by
// a GBNF grammar, and counts tokens. Everything TATRA-specific lives in the engine.
import type { OutputConstraint, StageName } from '../common/tatra';

/** A prompt as chat turns; the backend renders it with the model's chat template. */
export interface ChatPrompt {
  system: string;
  user: string;
  /**
   * Text the model's turn already starts with; the output continues it. Used to finish a math
   * answer that reached the token limit before its final line.
   */
  assistantPrefix?: string;
}

export interface GenerateRequest {
  prompt: ChatPrompt;
  /**
   * Length of the part of `prompt.user` that many requests share (the evaluator's instruction and
   * examples). A hint: a backend may evaluate that prefix once and reuse it. Results must not
   * depend on it.
   */
  sharedUserPrefixLength?: number;
  /** GBNF grammar the output must match; omitted, output is free. */
  grammar?: string;
  maxTokens: number;
  /** 0 (default) is greedy. */
  temperature?: number;
  topP?: number;
  /** Sampling seed; the same seed and prompt give the same text. */
  seed?: number;
  signal?: AbortSignal;
  /** Which stage of the method asks (for accounting: usage per stage, budgets); never changes the output. */
  stage?: StageName;
}

export interface GenerateResult {
  text: string;
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

/** Told of each request's result as soon as it is done (request index), before the whole call resolves. */
export type GenerateResultListener = (index: number, result: GenerateResult) => void;

export interface TatraBackend {
  /** Stable identity of the model behind it (used in cache keys): e.g. path + header hash. */
  readonly id: string;
  /** Context size per sequence, in tokens. */
  readonly contextSize: number;
  /**
   * True when the same requests in one generate() call always give the same results, whatever
   * else runs at the time or ran before (in-process CPU inference with a lockstep schedule).
   * Absent: false (a remote server, a GPU build).
   */
  readonly deterministic?: boolean;
  /**
   * Generate for each request. Independent requests may be decoded on parallel sequences; the
   * results come back in request order. Rejects with the signal's reason (an AbortError) when a request's signal aborts.
   */
  generate(requests: readonly GenerateRequest[], onResult?: GenerateResultListener): Promise<GenerateResult[]>;
  /** Tokens the rendered prompt (chat template included) would take. */
  countPromptTokens(prompt: ChatPrompt): Promise<number>;
  /**
   * How this backend holds an output to a request's grammar, for a general GBNF grammar (examples,
   * paraphrases, math answers) and for one that is a set of literal strings (a label set). A
   * server without GBNF may offer only a label choice, or nothing; its free outputs are parsed and
   * validated as usual, and results say so. Absent: `grammar` for both (in-process llama.cpp).
   */
  readonly outputConstraint?: { readonly grammar: OutputConstraint; readonly choice: OutputConstraint };
}

/**
 * A backend as its loader hands it over (LlamaBackend, RemoteBackend): whoever loaded it unloads it
 * with `dispose()`. The pool (hold/pool.ts) owns every model it loads and lends it out as a
 * TatraBackend, which has no dispose: a holder gives back its claim, never the model.
 */
export interface LoadedBackend extends TatraBackend {
  dispose(): Promise<void>;
}

/**
 * `inner` in everything but generate: the one way a backend is decorated, for a wrapper that
 * counts, gates or answers some requests itself (a job's meter, a sweep's shared evaluations,
 * `tatra api`'s metrics). Decorators compose: each wraps what it is given, decorated or not, and
 * calls its generate. The wrapper owns nothing, as no holder does; it keeps inner's promises
 * (deterministic, constraints), so what it answers itself must be what inner would.
 */
export function withGenerate(inner: TatraBackend, generate: TatraBackend['generate']): TatraBackend {
  return {
    get id() {
      return inner.id;
    },
    get contextSize() {
      return inner.contextSize;
    },
    get deterministic() {
      return inner.deterministic;
    },
    get outputConstraint() {
      return inner.outputConstraint;
    },
    countPromptTokens: (prompt) => inner.countPromptTokens(prompt),
    generate,
  };
}

/** Raised for a prompt that does not fit the context; the engine reports it as a user error. */
export class ContextOverflowError extends Error {
  constructor(
    readonly promptTokens: number,
    readonly contextSize: number,
  ) {
    super(`the prompt needs ${promptTokens} tokens but the context holds ${contextSize}; shorten the input or lower k`);
    this.name = 'ContextOverflowError';
  }
}


