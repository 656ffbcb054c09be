// TatraBackend on node-llama-cpp: one model, one context with a pool of parallel sequences, and a
// queue in front of it, so every caller (the rows of an evaluation running at once, generator and
// evaluator sharing the file) shares the same sequences.
//
// Why this shape:
// - Requests dispatched in the same tick are decoded together: node-llama-cpp batches the tokens
//   of all sequences queued in one tick into one llama_decode (NODE-LLAMA-CPP.md).
// - Each sequence keeps its KV cache between requests. A request goes to the free sequence whose
//   cache shares the longest token prefix with its prompt, and only the rest is evaluated.
// - A shared prefix (the evaluator's instruction and examples, `sharedUserPrefixLength`) is
//   evaluated once and snapshotted; other sequences load the snapshot instead of evaluating it.
//   node-llama-cpp 3.21.1 has no sequence-to-sequence copy (the internal
//   `_copyStateFromOtherSequence` arrived later), so the snapshot goes through its public
//   saveStateToFile/loadStateFromFile (~1 ms for 300 tokens of a tiny model, NODE-LLAMA-CPP.md).
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
import { inspectGguf, type GgufInspection } from './gguf';
import { ownedTempDir } from '../processes';
import { getLlamaRuntime } from './runtime';
import { defaultThreads } from './threads';
import { loadGpuLayers, memoryShortfall } from './fit';

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
}

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
}

interface Job {
  request: GenerateRequest;
  tokens: Token[];
  /** Tokens of the shared prefix within `tokens` (0: no hint). */
  prefixLength: number;
  resolve(result: GenerateResult): void;
  reject(error: unknown): void;
  onAbort?: () => void;
}

interface Slot {
  sequence: LlamaContextSequence;
  busy: boolean;
  lastUsed: number;
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
  private readonly counters: LlamaBackendStats = {
    requests: 0,
    evaluatedTokens: 0,
    reusedTokens: 0,
    restoredTokens: 0,
    generatedTokens: 0,
    prefixSnapshots: 0,
    prefixRestores: 0,
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
  ) {
    this.id = `${inspection.path}#${inspection.headerHash.slice(0, 12)}`;
    this.contextSize = context.contextSize;
    this.chatWrapperName = chatWrapper.wrapperName;
    this.usesFallbackTemplate = usesFallbackTemplate;
    this.slots = [];
    for (let i = 0; i < context.totalSequences; i++) this.slots.push({ sequence: context.getSequence(), busy: false, lastUsed: 0 });
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
    await Promise.allSettled([...this.running]);
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
        this.tries.delete(oldest);
      }
      grammar = this.llama.createGrammar({ grammar: text }).catch((e: unknown) => {
        this.grammars.delete(text);
        throw new Error(`invalid GBNF grammar: ${e instanceof Error ? e.message : String(e)}`);
      });
      this.grammars.set(text, grammar);
    }
    return grammar;
  }

  /** The choice trie of a literal-set grammar, built once per grammar; null when the grammar is not one. */
  private choiceTrie(grammar: string, context: readonly Token[]): ChoiceTrie | null {
    if (!this.tries.has(grammar)) {
      const choices = literalChoices(grammar);
      this.tries.set(grammar, choices ? ChoiceTrie.build(this.model, choices, context.slice(-8)) : null);
    }
    return this.tries.get(grammar) ?? null;
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
      this.dispatch();
    });
  }

  private settle(job: Job, fn: () => void): void {
    if (job.onAbort) job.request.signal?.removeEventListener('abort', job.onAbort);
    fn();
  }

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
    const { request, tokens } = job;
    const started = performance.now();
    const sequence = slot.sequence;
    // The request's own cancel, else the backend's disposal: its signal's reason is what rejects.
    const stopped = (): AbortSignal | null => (request.signal?.aborted ? request.signal : this.disposeController.signal.aborted ? this.disposeController.signal : null);
    const throwIfStopped = () => {
      const signal = stopped();
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

      const grammar = request.grammar === undefined ? undefined : await this.grammar(request.grammar);
      const grammarEvaluationState = grammar ? new LlamaGrammarEvaluationState({ model: this.model, grammar }) : undefined;
      const trie = request.grammar === undefined ? null : this.choiceTrie(request.grammar, tokens);
      let node: ChoiceNode | undefined = trie?.root;
      const temperature = request.temperature ?? 0;
      const output: Token[] = [];
      const iterator = sequence.evaluate(tokens.slice(common), {
        temperature,
        // top-k stays at node-llama-cpp's 40 (as llama.cpp's own default): sorting Qwen's whole
        // vocabulary at every sampled token would cost more than decoding on small models.
        topP: temperature > 0 ? (request.topP ?? 1) : undefined,
        seed: temperature > 0 ? (request.seed ?? 0) : undefined,
        grammarEvaluationState,
        tokenBias: trie ? () => (node ? trie.biasAt(node) : noBias(this.model)) : undefined,
      });
      try {
        for await (const token of iterator) {
          throwIfStopped();
          if (this.model.isEogToken(token)) break;
          output.push(token);
          if (node) {
            node = node.children.get(token);
            // A complete choice that nothing extends: the grammar allows only the end now.
            if (node?.terminal && node.children.size === 0) break;
          }
          if (output.length >= request.maxTokens) break;
        }
      } finally {
        await iterator.return(undefined);
      }
      throwIfStopped();
      this.counters.generatedTokens += output.length;
      this.counters.requests++;
      const result: GenerateResult = {
        // The prompt's last tokens let SentencePiece tokenizers keep the output's leading space.
        text: this.model.detokenize(output, false, tokens.slice(-8)),
        promptTokens: tokens.length,
        completionTokens: output.length,
        ms: performance.now() - started,
      };
      this.settle(job, () => job.resolve(result));
    } catch (e) {
      const error = stopped()?.reason ?? e;
      this.settle(job, () => job.reject(error));
    }
  }

  /**
   * Makes `sequence` hold the job's shared prefix without decoding it again where another sequence
   * already did: the first job to need a prefix decodes it and writes a snapshot; later ones on
   * other sequences (also those running at the same moment) load the snapshot.
   */
  private async restoreSharedPrefix(sequence: LlamaContextSequence, job: Job): Promise<{ decoded: number; restored: number }> {
    const none = { decoded: 0, restored: 0 };
    const length = job.prefixLength;
    if (length < MIN_SNAPSHOT_TOKENS) return none;
    if (sequence.compareContextTokens(job.tokens).firstDifferentIndex >= length) return none;
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
      const common = sequence.compareContextTokens(prefix).firstDifferentIndex;
      if (common < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: common, end: sequence.nextTokenIndex }]);
      await sequence.evaluateWithoutGeneratingNewTokens(prefix.slice(common));
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
  const inspection = await inspectGguf(opts.modelPath);
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
    let context: LlamaContext;
    try {
      context = await model.createContext({ contextSize, sequences, threads, createSignal: opts.signal });
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw await outOfMemoryError(e, llama, inspection, shape, 'context');
    }
    return new LlamaBackend(llama, model, context, inspection, chatWrapper, usesFallback, opts.reuse ?? true);
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
