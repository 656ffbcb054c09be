// TatraBackend on node-llama-cpp: one model, one context with a pool of parallel sequences, and a
// queue in front of it, so every caller (the rows of an evaluation running at once, generator and
// evaluator sharing the file) shares the same sequences.
//
// Why this shape:
// - Deterministic by default (schedule `lockstep`, lockstep.ts): a request's output is a function
//   of the request alone, whatever else is queued, ran before, or the timing. llama.cpp's CPU
//   kernels are not invariant to how tokens are grouped (a matmul over one token column takes
//   ggml's vec_dot path, over two or more tinyBLAS, which rounds differently; and with one KV
//   stream per sequence a ubatch only spans consecutive sequence ids, so a batch over sequences
//   {0, 2} is decoded as two one-token ubatches). Measured (bench/determinism-probe.ts): which
//   other sequences decode beside a request changes its probabilities unless every step is one
//   ubatch of two or more tokens, while how many (2 or 4), their content, the request's sequence
//   and the prompt's chunk boundaries do not. So lockstep decodes each prompt on its own in chunks
//   of two or more tokens, and runs generation in steps where every sequence takes part (idle
//   ones decode a throwaway "ballast" token), never mixing prompts into a step. What a sequence
//   held from an earlier request is not reused (it gave other text for some requests), only
//   shared-prefix snapshots decoded from an empty sequence.
// - Schedule `free` (the previous one, kept to measure what determinism costs): requests are
//   dispatched as sequences free up, and node-llama-cpp batches whatever is queued in one tick
//   into one llama_decode (docs/architecture.md, "node-llama-cpp"). Each sequence keeps its KV cache between requests;
//   a request goes to the free sequence sharing the longest token prefix with its prompt and only
//   the rest is evaluated. Timing decides the batches, so the same seed can give other text.
// - A shared prefix (the evaluator's instruction and examples, `sharedUserPrefixLength`) is
//   evaluated once and snapshotted; other sequences load the snapshot instead of evaluating it.
//   node-llama-cpp 3.21.1 has no sequence-to-sequence copy (the internal
//   `_copyStateFromOtherSequence` arrived later), so the snapshot goes through its public
//   saveStateToFile/loadStateFromFile (~1 ms for 300 tokens of a tiny model; docs/architecture.md).
// - The whole prompt is always tokenized as one text, so the tokens (and the output) never depend
//   on the prefix hint; the hint only decides what is worth snapshotting.
import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  GeneralChatWrapper,
  InsufficientMemoryError,
  LlamaGrammarEvaluationState,
  resolveChatWrapper,
  TokenBias,
  type ChatHistoryItem,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import { ContextOverflowError, type ChatPrompt, type GenerateRequest, type GenerateResult, type GenerateResultListener, type TatraBackend } from '../engine/backend';
import { UserError, errorMessage } from '../common/errors';
import { ChoiceTrie, literalChoices, type ChoiceNode } from './choices';
import { type GgufInspection } from './gguf';
import { inspectGgufOnce } from './inspection';
import { ownedTempDir } from '../processes';
import { getLlamaRuntime } from './runtime';
import { defaultThreads } from './threads';
import { loadGpuLayers, memoryShortfall } from './fit';
import { decodeInChunks, runSteps, sequenceOrderStrategy, type Lane } from './lockstep';

export interface LoadLlamaBackendOptions {
  /** The GGUF file; validated with inspectGguf before loading. */
  modelPath: string;
  /** Tokens per sequence. Default min(4096, the model's trained context). */
  contextSize?: number;
  /** Parallel sequences in the context. Default 4. */
  sequences?: number;
  /** CPU threads for this context. Default defaultThreads() (llama/threads.ts). */
  threads?: number;
  /** Layers to offload to the GPU. Default "auto" (fit to free VRAM, reserving room for the context). */
  gpuLayers?: 'auto' | number;
  /** Aborts loading; the partly loaded model is disposed. */
  signal?: AbortSignal;
  /**
   * Reuse KV caches and shared-prefix snapshots between requests (default true). False decodes
   * every prompt from scratch: only for measuring what reuse saves.
   */
  reuse?: boolean;
  /**
   * `lockstep` (default): every request's output is a function of the request alone (on the
   * CPU). `free`: batches are whatever timing puts together (not reproducible; kept for bench/).
   */
  schedule?: LlamaSchedule;
}

export type LlamaSchedule = 'lockstep' | 'free';

export interface LlamaBackendStats {
  /** generate() requests completed. */
  requests: number;
  /** Prompt tokens actually decoded (everything not reused from a sequence's cache or a snapshot). */
  evaluatedTokens: number;
  /** Prompt tokens taken from a sequence's KV cache instead of being decoded. */
  reusedTokens: number;
  /** Prompt tokens restored from a shared-prefix snapshot instead of being decoded. */
  restoredTokens: number;
  /** Tokens generated. */
  generatedTokens: number;
  /** Shared-prefix snapshots written / loaded into another sequence. */
  prefixSnapshots: number;
  prefixRestores: number;
  /** Lockstep: generation steps, and throwaway tokens decoded by idle sequences in them. */
  steps: number;
  ballastTokens: number;
}

interface Job {
  request: GenerateRequest;
  tokens: Token[];
  /** Tokens of the shared prefix within `tokens` (0: no hint). */
  prefixLength: number;
  resolve(result: GenerateResult): void;
  reject(error: unknown): void;
  onAbort?: () => void;
  /** Resolved or rejected (an abort may reject a job that is still decoding). */
  settled?: boolean;
}

/** A job decoding on a sequence. */
interface JobLane extends Lane {
  job: Job;
  output: Token[];
  /** Where the choice trie stands (undefined: no trie, or off it). */
  node: ChoiceNode | undefined;
  started: number;
}

interface Slot {
  sequence: LlamaContextSequence;
  busy: boolean;
  lastUsed: number;
  /**
   * Lockstep: the snapshot key of the shared prefix this sequence holds as decoded from an empty
   * sequence (or restored from its snapshot), so a later request with that prefix keeps it.
   */
  cleanPrefix?: string | undefined;
}

interface Snapshot {
  file: string;
  length: number;
  ready: Promise<boolean>;
}

/** Snapshots below this many tokens are not worth a file round trip. */
const MIN_SNAPSHOT_TOKENS = 32;
/** Each snapshot is a file holding the prefix's KV cache (tens of MB for a 7B model and a long prefix). */
const MAX_SNAPSHOTS = 6;
/** Compiled grammars kept per backend. */
const MAX_GRAMMARS = 64;

// An explicit template for GGUFs that carry none (e.g. stories260K): node-llama-cpp would guess
// one from the name, and a guess would make the rendered prompt depend on a file name.
function fallbackChatWrapper(): ChatWrapper {
  return new GeneralChatWrapper();
}

export class LlamaBackend implements TatraBackend {
  readonly id: string;
  readonly contextSize: number;
  /** Name of the chat template in use (e.g. "Qwen", "ChatML", "General" for the fallback). */
  readonly chatWrapperName: string;
  /** True when the GGUF had no chat template and the fallback is used. */
  readonly usesFallbackTemplate: boolean;

  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private readonly snapshots = new Map<string, Snapshot>();
  private readonly prefixCache = new Map<string, Token[]>();
  private readonly tries = new Map<string, ChoiceTrie | null>();
  private snapshotDir: string | undefined;
  private snapshotCounter = 0;
  private readonly running = new Set<Promise<void>>();
  private readonly disposeController = new AbortController();
  private disposed = false;
  private clock = 0;
  /** Lockstep: the step loop while it runs. */
  private stepper: Promise<void> | undefined;
  private readonly counters: LlamaBackendStats = {
    requests: 0,
    evaluatedTokens: 0,
    reusedTokens: 0,
    restoredTokens: 0,
    generatedTokens: 0,
    prefixSnapshots: 0,
    prefixRestores: 0,
    steps: 0,
    ballastTokens: 0,
  };

  /** @internal use loadLlamaBackend() */
  constructor(
    readonly llama: Llama,
    readonly model: LlamaModel,
    readonly context: LlamaContext,
    readonly inspection: GgufInspection,
    private readonly chatWrapper: ChatWrapper,
    usesFallbackTemplate: boolean,
    private readonly reuse = true,
    readonly schedule: LlamaSchedule = 'lockstep',
  ) {
    this.id = `${inspection.path}#${inspection.headerHash.slice(0, 12)}`;
    this.contextSize = context.contextSize;
    this.chatWrapperName = chatWrapper.wrapperName;
    this.usesFallbackTemplate = usesFallbackTemplate;
    this.slots = [];
    for (let i = 0; i < context.totalSequences; i++) this.slots.push({ sequence: context.getSequence(), busy: false, lastUsed: 0 });
  }

  /**
   * Whether a request's output depends on the request alone: lockstep on the CPU. GPU kernels
   * (and their reductions) are not promised to be bit-stable, so a GPU build says false.
   */
  get deterministic(): boolean {
    return this.schedule === 'lockstep' && this.model.gpuLayers === 0;
  }

  /** Parallel sequences. */
  get sequences(): number {
    return this.slots.length;
  }

  /** Counters since load; copies, so a test can compare before and after. */
  stats(): LlamaBackendStats {
    return { ...this.counters };
  }

  async generate(requests: readonly GenerateRequest[], onResult?: GenerateResultListener): Promise<GenerateResult[]> {
    this.ensureNotDisposed();
    const jobs: Promise<GenerateResult>[] = [];
    // Render and check every prompt before queuing any, so an overflow fails the call before decoding.
    const prepared = requests.map((request) => {
      request.signal?.throwIfAborted();
      if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1)
        throw new UserError(`maxTokens must be a positive integer (got ${request.maxTokens})`);
      const tokens = this.renderTokens(request.prompt);
      const needed = tokens.length + request.maxTokens;
      if (needed > this.contextSize) throw new ContextOverflowError(needed, this.contextSize);
      return { request, tokens, prefixLength: this.sharedPrefixLength(request, tokens) };
    });
    // Compile grammars up front too: a bad grammar fails the call, not one sequence halfway.
    await Promise.all(prepared.map((p) => (p.request.grammar === undefined ? undefined : this.grammar(p.request.grammar))));
    prepared.forEach((p, index) => {
      const job = this.enqueue(p.request, p.tokens, p.prefixLength);
      jobs.push(onResult ? job.then((result) => (onResult(index, result), result)) : job);
    });
    return Promise.all(jobs);
  }

  async countPromptTokens(prompt: ChatPrompt): Promise<number> {
    this.ensureNotDisposed();
    return this.renderTokens(prompt).length;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.disposeController.abort();
    for (const job of this.queue.splice(0)) this.settle(job, () => job.reject(this.disposeController.signal.reason));
    await Promise.allSettled([...this.running, this.stepper]);
    if (this.snapshotDir) rmSync(this.snapshotDir, { recursive: true, force: true });
    await this.context.dispose();
    await this.model.dispose();
  }

  // -------------------------------------------------------------------------------------------

  private ensureNotDisposed(): void {
    if (this.disposed) throw new Error('this model backend has been disposed');
  }

  private history(prompt: ChatPrompt, user: string): ChatHistoryItem[] {
    const items: ChatHistoryItem[] = [];
    if (prompt.system !== '') items.push({ type: 'system', text: prompt.system });
    items.push({ type: 'user', text: user }, { type: 'model', response: prompt.assistantPrefix ? [prompt.assistantPrefix] : [] });
    return items;
  }

  private renderTokens(prompt: ChatPrompt, user = prompt.user): Token[] {
    const { contextText } = this.chatWrapper.generateContextState({ chatHistory: this.history(prompt, user) });
    return contextText.tokenize(this.model.tokenizer);
  }

  /** Tokens of `tokens` that belong to the shared prefix: the common prefix with the prompt rendered up to it. */
  private sharedPrefixLength(request: GenerateRequest, tokens: Token[]): number {
    const n = request.sharedUserPrefixLength ?? 0;
    if (n <= 0) return 0;
    const key = `${request.prompt.system}\u0000${request.prompt.user.slice(0, n)}`;
    let prefixTokens = this.prefixCache.get(key);
    if (!prefixTokens) {
      prefixTokens = this.renderTokens(request.prompt, request.prompt.user.slice(0, n));
      if (this.prefixCache.size >= 64) this.prefixCache.delete(this.prefixCache.keys().next().value as string);
      this.prefixCache.set(key, prefixTokens);
    }
    // The rendered prefix ends with the template's end of turn, which the full prompt does not
    // share; stop one token early as well, since the tokenizer may merge across the boundary.
    return Math.max(0, commonPrefix(prefixTokens, tokens) - 1);
  }

  private grammar(text: string): Promise<LlamaGrammar> {
    let grammar = this.grammars.get(text);
    if (grammar) {
      // Most recently used last, so eviction drops the oldest (paraphrase and example grammars
      // differ per input and per plan: a long job would otherwise pile them up).
      this.grammars.delete(text);
      this.grammars.set(text, grammar);
    } else {
      while (this.grammars.size >= MAX_GRAMMARS) {
        const oldest = this.grammars.keys().next().value as string;
        this.grammars.delete(oldest);
      }
      grammar = this.llama.createGrammar({ grammar: text }).catch((e: unknown) => {
        this.grammars.delete(text);
        throw new Error(`invalid GBNF grammar: ${e instanceof Error ? e.message : String(e)}`);
      });
      this.grammars.set(text, grammar);
    }
    return grammar;
  }

  /**
   * The choice trie of a literal-set grammar, built once per grammar and prompt ending (the
   * tokens a choice is spelled with may depend on what precedes it, so a trie built for another
   * prompt's ending would make the output depend on which request came first); null when the
   * grammar is not one.
   */
  private choiceTrie(grammar: string, context: readonly Token[]): ChoiceTrie | null {
    const ending = context.slice(-8);
    const key = `${ending.join(',')}\u0000${grammar}`;
    if (!this.tries.has(key)) {
      if (this.tries.size >= MAX_GRAMMARS) this.tries.delete(this.tries.keys().next().value as string);
      const choices = literalChoices(grammar);
      this.tries.set(key, choices ? ChoiceTrie.build(this.model, choices, ending) : null);
    }
    return this.tries.get(key) ?? null;
  }

  private enqueue(request: GenerateRequest, tokens: Token[], prefixLength: number): Promise<GenerateResult> {
    return new Promise<GenerateResult>((resolve, reject) => {
      const stopped = request.signal?.aborted ? request.signal : this.disposed ? this.disposeController.signal : null;
      if (stopped) {
        reject(stopped.reason);
        return;
      }
      const job: Job = { request, tokens, prefixLength, resolve, reject };
      if (request.signal) {
        job.onAbort = () => {
          const i = this.queue.indexOf(job);
          if (i >= 0) {
            this.queue.splice(i, 1);
            this.settle(job, () => reject(request.signal!.reason));
          }
          // A running job notices the abort between tokens.
        };
        request.signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      if (this.schedule === 'free') this.dispatch();
      else this.startStepping();
    });
  }

  private settle(job: Job, fn: () => void): void {
    if (job.settled) return;
    job.settled = true;
    if (job.onAbort) job.request.signal?.removeEventListener('abort', job.onAbort);
    fn();
  }

  // ----------------------------------------------------------------------------- free schedule

  /** Hands queued jobs to free sequences, each to the free sequence that already holds most of its prompt. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      const free = this.slots.filter((s) => !s.busy);
      if (free.length === 0) return;
      const job = this.queue.shift()!;
      let best = free[0]!;
      let bestCommon = -1;
      for (const slot of free) {
        const common = slot.sequence.compareContextTokens(job.tokens).firstDifferentIndex;
        if (common > bestCommon || (common === bestCommon && slot.lastUsed < best.lastUsed)) {
          best = slot;
          bestCommon = common;
        }
      }
      best.busy = true;
      best.lastUsed = ++this.clock;
      const run = this.run(best, job).finally(() => {
        best.busy = false;
        this.running.delete(run);
        if (!this.disposed) this.dispatch();
      });
      this.running.add(run);
    }
  }

  private async run(slot: Slot, job: Job): Promise<void> {
    const { tokens } = job;
    const started = performance.now();
    const sequence = slot.sequence;
    // The request's own cancel, else the backend's disposal: its signal's reason is what rejects.
    const throwIfStopped = () => {
      const signal = this.stoppedBy(job);
      if (signal) throw signal.reason;
    };
    try {
      throwIfStopped();
      if (!this.reuse) await sequence.clearHistory();
      const prefix = this.reuse ? await this.restoreSharedPrefix(sequence, job) : { decoded: 0, restored: 0 };
      // Keep the cached common prefix, but always decode at least the last prompt token: its
      // logits are what the first generated token is sampled from.
      const common = Math.min(sequence.compareContextTokens(tokens).firstDifferentIndex, tokens.length - 1);
      if (common < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: common, end: sequence.nextTokenIndex }]);
      this.counters.evaluatedTokens += tokens.length - common + prefix.decoded;
      this.counters.reusedTokens += common - prefix.decoded - prefix.restored;
      this.counters.restoredTokens += prefix.restored;

      const lane = await this.openLane(sequence, job, tokens.slice(common), started);
      try {
        for await (const token of lane.iterator) {
          throwIfStopped();
          if (!this.acceptToken(lane, token)) break;
        }
      } finally {
        await lane.iterator.return(undefined);
      }
      throwIfStopped();
      const result = this.resultOf(lane);
      this.settle(job, () => job.resolve(result));
    } catch (e) {
      const error = this.stoppedBy(job)?.reason ?? e;
      this.settle(job, () => job.reject(error));
    }
  }

  /** Starts decoding `evaluate` (the prompt's undecoded tail) with the request's sampling: seed, grammar, choice-trie bias. */
  private async openLane(sequence: LlamaContextSequence, job: Job, evaluate: Token[], started: number): Promise<JobLane> {
    const { request, tokens } = job;
    const grammar = request.grammar === undefined ? undefined : await this.grammar(request.grammar);
    const grammarEvaluationState = grammar ? new LlamaGrammarEvaluationState({ model: this.model, grammar }) : undefined;
    const trie = request.grammar === undefined ? null : this.choiceTrie(request.grammar, tokens);
    const temperature = request.temperature ?? 0;
    const lane: JobLane = { job, output: [], node: trie?.root, started, iterator: undefined as unknown as JobLane['iterator'] };
    lane.iterator = sequence.evaluate(evaluate, {
      temperature,
      // top-k stays at node-llama-cpp's 40 (as llama.cpp's own default): sorting Qwen's whole
      // vocabulary at every sampled token would cost more than decoding on small models.
      topP: temperature > 0 ? (request.topP ?? 1) : undefined,
      // Each request samples with its own sampler, seeded with its own seed.
      seed: temperature > 0 ? (request.seed ?? 0) : undefined,
      grammarEvaluationState,
      tokenBias: trie ? () => (lane.node ? trie.biasAt(lane.node) : noBias(this.model)) : undefined,
    });
    return lane;
  }

  /** Takes a generated token; false when the request is complete (end of generation, a complete choice, or maxTokens). */
  private acceptToken(lane: JobLane, token: Token): boolean {
    if (this.model.isEogToken(token)) return false;
    lane.output.push(token);
    if (lane.node) {
      lane.node = lane.node.children.get(token);
      // A complete choice that nothing extends: the grammar allows only the end now.
      if (lane.node?.terminal && lane.node.children.size === 0) return false;
    }
    return lane.output.length < lane.job.request.maxTokens;
  }

  private resultOf(lane: JobLane): GenerateResult {
    this.counters.generatedTokens += lane.output.length;
    this.counters.requests++;
    return {
      // The prompt's last tokens let SentencePiece tokenizers keep the output's leading space.
      text: this.model.detokenize(lane.output, false, lane.job.tokens.slice(-8)),
      promptTokens: lane.job.tokens.length,
      completionTokens: lane.output.length,
      ms: performance.now() - lane.started,
    };
  }

  /** The request's cancel, else the backend's disposal, when either happened. */
  private stoppedBy(job: Job): AbortSignal | null {
    return job.request.signal?.aborted ? job.request.signal : this.disposeController.signal.aborted ? this.disposeController.signal : null;
  }

  // ------------------------------------------------------------------------- lockstep schedule

  private startStepping(): void {
    if (this.stepper || this.disposed) return;
    this.stepper = runSteps({
      context: this.context,
      sequences: this.slots.map((slot) => slot.sequence),
      stopped: () => this.disposed,
      admit: (free) => this.admit(free),
      advance: (lane, outcome) => this.advance(lane, outcome),
      onStep: (ballast) => {
        this.counters.steps++;
        this.counters.ballastTokens += ballast;
      },
    })
      .catch((e: unknown) => {
        // A failure of the loop itself (not of one request): nothing queued can run.
        for (const job of this.queue.splice(0)) this.settle(job, () => job.reject(e));
      })
      .finally(() => {
        this.stepper = undefined;
        if (this.queue.length > 0) this.startStepping();
      });
  }

  /**
   * Starts queued jobs (first come, first served) on the free sequences: each on a free sequence
   * that holds its shared prefix as decoded from empty, if one does (nothing to restore), else on
   * the lowest free one.
   */
  private async admit(free: number[]): Promise<Map<number, JobLane>> {
    const started = new Map<number, JobLane>();
    const open = [...free];
    for (let job = this.queue.shift(); job && open.length > 0; job = open.length > 0 ? this.queue.shift() : undefined) {
      if (job.settled) continue;
      const key = this.prefixKey(job);
      const at = Math.max(0, open.findIndex((i) => key !== null && this.slots[i]!.cleanPrefix === key));
      const index = open[at]!;
      const lane = await this.startJob(this.slots[index]!, job);
      if (lane) {
        started.set(index, lane);
        open.splice(at, 1);
      }
    }
    return started;
  }

  /** Puts a job on a sequence: its prompt held, its first step ready; null when it failed or was cancelled (settled). */
  private async startJob(slot: Slot, job: Job): Promise<JobLane | null> {
    const started = performance.now();
    try {
      const stopped = this.stoppedBy(job);
      if (stopped) throw stopped.reason;
      await this.holdPromptBody(slot, job);
      return await this.openLane(slot.sequence, job, job.tokens.slice(-1), started);
    } catch (e) {
      slot.cleanPrefix = undefined;
      const error = this.stoppedBy(job)?.reason ?? e;
      this.settle(job, () => job.reject(error));
      return null;
    }
  }

  /** The shared prefix a job's prompt starts with, as a snapshot key; null when it has none worth a snapshot. */
  private prefixKey(job: Job): string | null {
    return this.reuse && job.prefixLength >= MIN_SNAPSHOT_TOKENS ? job.tokens.slice(0, job.prefixLength).join(',') : null;
  }

  /**
   * Makes `sequence` hold every prompt token but the last (which goes into the first step), always
   * computed the same way: the shared prefix decoded alone from an empty sequence (now, or earlier
   * and loaded from its snapshot), then the rest decoded alone in chunks of two or more tokens
   * (decodeInChunks). Of what a sequence held from an earlier request only such a prefix is kept:
   * measured, keeping other common prefixes (a chat template's start, another prompt's system
   * text) gave other text for some requests than decoding afresh, while prefixes decoded from empty
   * did not (test/model/llama-backend.test.ts).
   */
  private async holdPromptBody(slot: Slot, job: Job): Promise<void> {
    const { sequence } = slot;
    const body = job.tokens.slice(0, -1);
    const key = this.prefixKey(job);
    let keep = 0;
    let prefix = { decoded: 0, restored: 0 };
    if (key !== null && slot.cleanPrefix === key) {
      // The sequence holds this prefix as decoded from empty (or restored): keep it, drop the rest.
      keep = job.prefixLength;
      this.counters.reusedTokens += keep;
    } else if (key !== null) {
      prefix = await this.restoreSharedPrefix(sequence, job, 0);
      if (prefix.decoded + prefix.restored > 0) keep = job.prefixLength;
    }
    slot.cleanPrefix = keep > 0 ? (key ?? undefined) : undefined;
    if (body.length - keep === 1) keep--;
    if (keep === 0) await sequence.clearHistory();
    else if (keep < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
    await decodeInChunks(sequence, body.slice(keep), this.context.batchSize);
    this.counters.evaluatedTokens += job.tokens.length - keep + prefix.decoded;
    this.counters.restoredTokens += prefix.restored;
  }

  /** Takes one step's outcome for a lane; true when the lane is finished (settled, its sequence free). */
  private async advance(lane: JobLane, outcome: PromiseSettledResult<IteratorResult<Token, void>>): Promise<boolean> {
    const { job } = lane;
    const finish = async (settle: () => void): Promise<true> => {
      await lane.iterator.return(undefined).catch(() => undefined);
      this.settle(job, settle);
      return true;
    };
    const stopped = this.stoppedBy(job);
    if (job.settled || stopped) return finish(() => job.reject(stopped?.reason));
    if (outcome.status === 'rejected') return finish(() => job.reject(outcome.reason));
    if (!outcome.value.done && this.acceptToken(lane, outcome.value.value)) return false;
    const result = this.resultOf(lane);
    return finish(() => job.resolve(result));
  }

  // --------------------------------------------------------------------------- prefix snapshots

  /**
   * Makes `sequence` hold the job's shared prefix without decoding it again where another sequence
   * already did: the first job to need a prefix decodes it and writes a snapshot; later ones on
   * other sequences (also those running at the same moment) load the snapshot.
   */
  private async restoreSharedPrefix(sequence: LlamaContextSequence, job: Job, reusable = Infinity): Promise<{ decoded: number; restored: number }> {
    const none = { decoded: 0, restored: 0 };
    const length = job.prefixLength;
    if (length < MIN_SNAPSHOT_TOKENS) return none;
    // Already held, as far as it may be kept (`reusable`: lockstep keeps nothing a sequence held).
    const held = Math.min(sequence.compareContextTokens(job.tokens).firstDifferentIndex, reusable);
    if (held >= length) return none;
    const prefix = job.tokens.slice(0, length);
    const key = prefix.join(',');
    const existing = this.snapshots.get(key);
    if (existing) {
      if (!(await existing.ready) || !this.snapshots.has(key)) return none; // failed, or evicted while we waited
      try {
        // Replaces the sequence's whole state with exactly the prefix.
        await sequence.loadStateFromFile(existing.file, { acceptRisk: true });
      } catch {
        // Evicted and deleted between the check and the load: decode the prompt as usual.
        await sequence.clearHistory();
        return none;
      }
      this.counters.prefixRestores++;
      return { decoded: 0, restored: length };
    }
    const file = join(this.snapshotFolder(), `prefix-${++this.snapshotCounter}.bin`);
    let markReady!: (ok: boolean) => void;
    const snapshot: Snapshot = { file, length, ready: new Promise<boolean>((r) => (markReady = r)) };
    this.snapshots.set(key, snapshot);
    this.evictSnapshots();
    try {
      let common = Math.min(sequence.compareContextTokens(prefix).firstDifferentIndex, reusable);
      // Two or more tokens to decode (decodeInChunks), so the snapshot holds the numbers of a whole-prompt decode.
      if (length - common === 1) common--;
      if (common < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: common, end: sequence.nextTokenIndex }]);
      await decodeInChunks(sequence, prefix.slice(common), this.context.batchSize);
      await sequence.saveStateToFile(file);
      this.counters.prefixSnapshots++;
      markReady(true);
      return { decoded: length - common, restored: 0 };
    } catch (e) {
      this.snapshots.delete(key);
      markReady(false);
      throw e;
    }
  }

  private snapshotFolder(): string {
    // Named with this pid: a SIGKILLed process's snapshots are swept by the next one (processes.ts).
    this.snapshotDir ??= ownedTempDir('tatra-prefix-');
    return this.snapshotDir;
  }

  private evictSnapshots(): void {
    while (this.snapshots.size > MAX_SNAPSHOTS) {
      const [oldestKey, oldest] = this.snapshots.entries().next().value as [string, Snapshot];
      this.snapshots.delete(oldestKey);
      void oldest.ready.then(() => rmSync(oldest.file, { force: true }));
    }
  }
}

const emptyBiases = new WeakMap<LlamaModel, TokenBias>();
function noBias(model: LlamaModel): TokenBias {
  let bias = emptyBiases.get(model);
  if (!bias) {
    bias = new TokenBias(model.tokenizer);
    emptyBiases.set(model, bias);
  }
  return bias;
}

function commonPrefix(a: readonly Token[], b: readonly Token[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Validates the file (inspectGguf), loads the model on the process's Llama, picks its chat
 * template (the GGUF's own; the General fallback when it has none) and creates a context with
 * `sequences` parallel sequences.
 */
export async function loadLlamaBackend(opts: LoadLlamaBackendOptions): Promise<LlamaBackend> {
  const inspection = await inspectGgufOnce(opts.modelPath);
  opts.signal?.throwIfAborted();
  const sequences = opts.sequences ?? 4;
  if (!Number.isInteger(sequences) || sequences < 1 || sequences > 64)
    throw new UserError(`sequences must be an integer from 1 to 64 (got ${sequences})`);
  const trained = inspection.contextLength ?? 4096;
  const contextSize = opts.contextSize ?? Math.min(4096, trained);
  if (!Number.isInteger(contextSize) || contextSize < 64)
    throw new UserError(`context size must be an integer of at least 64 (got ${contextSize})`);
  const threads = opts.threads ?? defaultThreads();

  const llama = await getLlamaRuntime();
  const shape = { contextSize, sequences };
  let model: LlamaModel;
  try {
    model = await llama.loadModel({
      modelPath: opts.modelPath,
      gpuLayers: opts.gpuLayers === undefined || opts.gpuLayers === 'auto' ? loadGpuLayers(contextSize, sequences) : opts.gpuLayers,
      loadSignal: opts.signal,
    });
  } catch (e) {
    opts.signal?.throwIfAborted();
    throw await outOfMemoryError(e, llama, inspection, shape, 'load');
  }
  try {
    opts.signal?.throwIfAborted();
    const usesFallback = !inspection.hasChatTemplate;
    const chatWrapper = usesFallback ? fallbackChatWrapper() : resolveChatWrapper(model);
    const schedule = opts.schedule ?? 'lockstep';
    let context: LlamaContext;
    try {
      // The lockstep batch order reads the context's queue, so it needs the context it orders.
      const created: { context?: LlamaContext } = {};
      context = await model.createContext({
        contextSize,
        sequences,
        threads,
        createSignal: opts.signal,
        ...(schedule === 'lockstep' ? { batching: { itemPrioritizationStrategy: sequenceOrderStrategy(() => created.context) } } : {}),
      });
      created.context = context;
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw await outOfMemoryError(e, llama, inspection, shape, 'context');
    }
    return new LlamaBackend(llama, model, context, inspection, chatWrapper, usesFallback, opts.reuse ?? true, schedule);
  } catch (e) {
    await model.dispose();
    opts.signal?.throwIfAborted();
    throw e;
  }
}

/**
 * node-llama-cpp's InsufficientMemoryError, or a context llama.cpp could not allocate, as one
 * UserError naming the model, what it needed, what was free and what to change. Anything else
 * (a damaged file, a bug) is passed on unchanged.
 */
async function outOfMemoryError(e: unknown, llama: Llama, inspection: GgufInspection, shape: { contextSize: number; sequences: number }, stage: 'load' | 'context'): Promise<unknown> {
  // "Failed to create context": llama.cpp could not allocate what the resolver let through.
  const contextFailed = stage === 'context' && e instanceof Error && e.message === 'Failed to create context';
  if (!(e instanceof InsufficientMemoryError) && !contextFailed) return e;
  const name = basename(inspection.path);
  const tokens = `${shape.contextSize.toLocaleString('en-US')} tokens × ${shape.sequences} sequence${shape.sequences === 1 ? '' : 's'}`;
  const what = stage === 'load' ? `cannot load ${name}` : `cannot create a ${tokens} context for ${name}`;
  const shortfall = await memoryShortfall(inspection.path, llama, shape).catch(() => null);
  const figures = shortfall ? `: it needs about ${shortfall}` : ` (${errorMessage(e)})`;
  return new UserError(`${what}: not enough memory${figures}; use a shorter context (--context-size), fewer parallel sequences (--sequences / --concurrency), or a smaller model or quantisation`, 'insufficient_memory');
}
