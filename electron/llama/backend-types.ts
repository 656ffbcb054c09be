// LlamaBackend's types (backend.ts): what one is made of, what it counts, and a request's life
// from the queue to a sequence. Apart from the class so the loader (load-backend.ts) and
// bench/'s other schedule read them without the class's code.
import type { ChatWrapper, Llama, LlamaContext, LlamaModel, Token } from 'node-llama-cpp';
import type { GenerateRequest, GenerateResult } from '../engine/backend';
import type { ChoiceNode } from './choices';
import type { GgufInspection } from './gguf';
import type { Lane } from './lockstep';

export interface LlamaBackendStats {
  /** generate() requests completed. */
  requests: number;
  /** Prompt tokens actually decoded (everything not reused from a sequence or a snapshot). */
  evaluatedTokens: number;
  /** Prompt tokens a sequence already held from an earlier request, kept instead of decoded. */
  reusedTokens: number;
  /** Prompt tokens restored from a shared-prefix snapshot instead of being decoded. */
  restoredTokens: number;
  /** Tokens generated. */
  generatedTokens: number;
  /** Shared-prefix snapshots written / loaded into another sequence. */
  prefixSnapshots: number;
  prefixRestores: number;
  /** Generation steps, and throwaway tokens decoded by idle sequences in them. */
  steps: number;
  ballastTokens: number;
  /** Batches of prompt pieces, and the throwaway tokens that padded them to one share per sequence. */
  promptRounds: number;
  paddingTokens: number;
}


/** What a backend is made of (loadLlamaBackend builds it). */
export interface LlamaBackendParts {
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  inspection: GgufInspection;
  chatWrapper: ChatWrapper;
  usesFallbackTemplate: boolean;
  reuse: boolean;
}

/** One generate request: queued, then decoding on a sequence, then settled. */
export interface Generation {
  request: GenerateRequest;
  tokens: Token[];
  /** Tokens of the shared prefix within `tokens` (0: no hint). */
  prefixLength: number;
  resolve(result: GenerateResult): void;
  reject(error: unknown): void;
  /** Stops waiting for the request's signal (onAbort's). */
  forgetAbort?: () => void;
  /** Resolved or rejected (an abort may reject a generation that is still decoding). */
  settled?: boolean;
}

/** A generation decoding on a sequence. */
export interface GenerationLane extends Lane {
  generation: Generation;
  output: Token[];
  /** Where the choice trie stands (undefined: no trie, or off it). */
  node: ChoiceNode | undefined;
  started: number;
}
