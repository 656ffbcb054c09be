// TatraBackend on node-llama-cpp: one model, one context with a pool of parallel sequences, and a
// queue in front of it, so every caller (the rows of an evaluation running at once, generator and
// evaluator sharing the file) shares the same sequences.
//
// Why this shape:
// - Deterministic: a request's output is a function of the request alone, whatever else is
//   queued, ran before, or the timing (lockstep.ts runs the sequences). llama.cpp's CPU kernels are
//   not invariant to how tokens are grouped, but the variation has a few causes, each measured
//   (bench/determinism-probe.ts) and each avoided:
//   - a matmul over one token column takes ggml's vec_dot path, over two or more tinyBLAS, which
//     rounds differently: no ubatch has one token, nor one output row;
//   - flash attention takes a tiled kernel once a sequence has 64 or more tokens in a ubatch:
//     prompts are decoded in pieces of at most MAX_PIECE (63) tokens per sequence;
//   - with one KV stream per sequence a ubatch only spans consecutive sequence ids and shares its
//     tokens equally among them: pieces are padded to one share, steps run over consecutive ids.
//   Then a token's numbers depend only on the tokens before it in its sequence (not on the piece
//   or step it was decoded in, the other sequences, or the thread count), so what a sequence holds
//   from an earlier request is exactly what decoding it again would give: a request keeps the part
//   of its prompt its sequence holds (llama-server's prompt cache, but exact), and snapshots of a
//   shared prefix are loaded into other sequences.
// - A shared prefix (the evaluator's instruction and examples, `sharedUserPrefixLength`) is decoded
//   once and snapshotted (snapshots.ts); other sequences load the snapshot instead of decoding it.
// - The whole prompt is always tokenized as one text, so the tokens (and the output) never depend
//   on the prefix hint; the hint only decides what is worth snapshotting.
// - The schedule bench/ compares against (`free`: batches as timing allows) is not here: it lives
//   in bench/free-schedule.ts, a subclass, so nothing in the app can run it.
import type {
  BatchingOptions,
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
  Token,
  TokenBias,
} from 'node-llama-cpp';
import { loadedNodeLlamaCpp } from './module';
import { ContextOverflowError, type ChatPrompt, type GenerateRequest, type GenerateResult, type GenerateResultListener, type LoadedBackend } from '../engine/backend';
import { onAbort } from '../common/abort';
import { Listeners } from '../common/listeners';
import { UserError } from '../common/errors';
import { ChoiceTrie, literalChoices } from './choices';
import { type GgufInspection } from './gguf';
import { llamaBackendId } from './inspection';
import { renderPromptTokens } from './chat-template';
import { lockstepBatching, runSteps, type Admission, type BodyStop } from './lockstep';
import { PrefixSnapshots } from './snapshots';
import { forgetModelSamplers } from './samplers';
import type { Generation, GenerationLane, LlamaBackendParts, LlamaBackendStats } from './backend-types';


/** Snapshots below this many tokens are not worth a file round trip. */
export const MIN_SNAPSHOT_TOKENS = 32;
/** Compiled grammars kept per backend. */
const MAX_GRAMMARS = 64;


export class LlamaBackend implements LoadedBackend {
  readonly id: string;
  readonly contextSize: number;
  /** Name of the chat template in use (e.g. "Qwen", "ChatML", "General" for the fallback). */
  readonly chatWrapperName: string;
  /** True when the GGUF had no chat template and the fallback is used. */
  readonly usesFallbackTemplate: boolean;
  readonly llama: Llama;
  readonly model: LlamaModel;
  readonly context: LlamaContext;
  readonly inspection: GgufInspection;

  /** The batching a context for this class needs: lockstep's order (lockstep.ts). */
  static batching(context: () => LlamaContext | undefined): BatchingOptions | undefined {
    return lockstepBatching(context);
  }

  protected readonly reuse: boolean;
  protected readonly queue: Generation[] = [];
  protected readonly snapshots = new PrefixSnapshots();
  protected readonly disposeController = new AbortController();
  protected disposed = false;
  /** Work that dispose() waits for: the step loop while it runs. */
  protected readonly running = new Set<Promise<unknown>>();
  protected readonly counters: LlamaBackendStats = {
    requests: 0,
    evaluatedTokens: 0,
    reusedTokens: 0,
    restoredTokens: 0,
    generatedTokens: 0,
    prefixSnapshots: 0,
    prefixRestores: 0,
    steps: 0,
    ballastTokens: 0,
    promptRounds: 0,
    paddingTokens: 0,
  };
  private readonly stepListeners = new Listeners();
  private readonly chatWrapper: ChatWrapper;
  /** The context's sequences, by index. */
  protected readonly contextSequences: readonly LlamaContextSequence[];
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private readonly prefixCache = new Map<string, Token[]>();
  private readonly tries = new Map<string, ChoiceTrie | null>();
  /** The step loop while it runs. */
  private stepper: Promise<void> | undefined;
  /**
   * With one sequence: how many leading tokens it holds were decoded in pieces (its last prompt's
   * body). Its steps have no neighbour to join, so they are one-token ubatches (vec_dot, other
   * numbers): what they leave is not kept.
   */
  private readonly piecesEnd = new WeakMap<LlamaContextSequence, number>();

  /** @internal use loadLlamaBackend() */
  constructor(parts: LlamaBackendParts) {
    ({ llama: this.llama, model: this.model, context: this.context, inspection: this.inspection, chatWrapper: this.chatWrapper, reuse: this.reuse } = parts);
    this.id = llamaBackendId(this.inspection);
    this.contextSize = this.context.contextSize;
    this.chatWrapperName = this.chatWrapper.wrapperName;
    this.usesFallbackTemplate = parts.usesFallbackTemplate;
    this.contextSequences = Array.from({ length: this.context.totalSequences }, () => this.context.getSequence());
  }

  /**
   * Whether a request's output depends on the request alone: on the CPU. GPU kernels (and their
   * reductions) are not promised to be bit-stable, so a GPU build says false.
   */
  get deterministic(): boolean {
    return this.model.gpuLayers === 0;
  }

  /** Parallel sequences. */
  get sequences(): number {
    return this.context.totalSequences;
  }

  /** Counters since load; copies, so a test can compare before and after. */
  stats(): LlamaBackendStats {
    return { ...this.counters };
  }

  /** Calls `listener` after each generation step and each round of prompt pieces (read stats() in it); returns its removal. */
  onStep(listener: () => void): () => void {
    return this.stepListeners.add(listener);
  }

  async generate(requests: readonly GenerateRequest[], onResult?: GenerateResultListener): Promise<GenerateResult[]> {
    this.ensureNotDisposed();
    const generations: Promise<GenerateResult>[] = [];
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
      const generation = this.enqueue(p.request, p.tokens, p.prefixLength);
      generations.push(onResult ? generation.then((result) => (onResult(index, result), result)) : generation);
    });
    return Promise.all(generations);
  }

  async countPromptTokens(prompt: ChatPrompt): Promise<number> {
    this.ensureNotDisposed();
    return this.renderTokens(prompt).length;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.disposeController.abort();
    for (const generation of this.queue.splice(0)) this.settle(generation, () => generation.reject(this.disposeController.signal.reason));
    await Promise.allSettled([...this.running]);
    this.snapshots.dispose();
    await this.context.dispose();
    forgetModelSamplers(this.llama, this.model);
    await this.model.dispose();
  }

  // -------------------------------------------------------------------------------------------

  private ensureNotDisposed(): void {
    if (this.disposed) throw new Error('this model backend has been disposed');
  }

  private renderTokens(prompt: ChatPrompt, user = prompt.user): Token[] {
    return renderPromptTokens(this.chatWrapper, this.model, prompt, user);
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
      // differ per input and per example shapes: a long evaluation job would otherwise pile them up).
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
      const generation: Generation = { request, tokens, prefixLength, resolve, reject };
      if (request.signal) {
        generation.forgetAbort = onAbort(request.signal, () => {
          const i = this.queue.indexOf(generation);
          if (i >= 0) {
            this.queue.splice(i, 1);
            this.settle(generation, () => reject(request.signal!.reason));
          }
          // A running generation notices the abort between tokens.
        });
      }
      this.queue.push(generation);
      this.schedule();
    });
  }

  protected settle(generation: Generation, fn: () => void): void {
    if (generation.settled) return;
    generation.settled = true;
    generation.forgetAbort?.();
    fn();
  }

  /** Starts decoding `evaluate` (the prompt's undecoded tail) with the request's sampling: seed, grammar, choice-trie bias. */
  protected async openLane(sequence: LlamaContextSequence, generation: Generation, evaluate: Token[], started: number): Promise<GenerationLane> {
    const { request, tokens } = generation;
    const grammar = request.grammar === undefined ? undefined : await this.grammar(request.grammar);
    const grammarEvaluationState = grammar ? new (loadedNodeLlamaCpp().LlamaGrammarEvaluationState)({ model: this.model, grammar }) : undefined;
    const trie = request.grammar === undefined ? null : this.choiceTrie(request.grammar, tokens);
    const temperature = request.temperature ?? 0;
    const lane: GenerationLane = { generation, output: [], node: trie?.root, started, iterator: undefined as unknown as GenerationLane['iterator'] };
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
  protected acceptToken(lane: GenerationLane, token: Token): boolean {
    if (this.model.isEogToken(token)) return false;
    lane.output.push(token);
    if (lane.node) {
      lane.node = lane.node.children.get(token);
      // A complete choice that nothing extends: the grammar allows only the end now.
      if (lane.node?.terminal && lane.node.children.size === 0) return false;
    }
    return lane.output.length < lane.generation.request.maxTokens;
  }

  protected resultOf(lane: GenerationLane): GenerateResult {
    this.counters.generatedTokens += lane.output.length;
    this.counters.requests++;
    return {
      // The prompt's last tokens let SentencePiece tokenizers keep the output's leading space.
      text: this.model.detokenize(lane.output, false, lane.generation.tokens.slice(-8)),
      promptTokens: lane.generation.tokens.length,
      completionTokens: lane.output.length,
      ms: performance.now() - lane.started,
    };
  }

  /** The request's cancel, else the backend's disposal, when either happened. */
  protected stoppedBy(generation: Generation): AbortSignal | null {
    return generation.request.signal?.aborted ? generation.request.signal : this.disposeController.signal.aborted ? this.disposeController.signal : null;
  }

  /** The shared prefix a generation's prompt starts with, as a snapshot key; null when it has none worth a snapshot. */
  protected prefixKey(generation: Generation): string | null {
    return this.reuse && generation.prefixLength >= MIN_SNAPSHOT_TOKENS ? generation.tokens.slice(0, generation.prefixLength).join(',') : null;
  }

  // ------------------------------------------------------------------------- lockstep schedule

  /** Called whenever a generation is queued: runs the step loop (lockstep.ts) unless it is running. */
  protected schedule(): void {
    if (this.stepper || this.disposed) return;
    const stepper = runSteps({
      context: this.context,
      sequences: this.contextSequences,
      stopped: () => this.disposed,
      admit: (free) => this.admit(free),
      wanted: (lane) => !lane.generation.settled && this.stoppedBy(lane.generation) === null,
      advance: (lane, outcome) => this.advance(lane, outcome),
      onStep: (ballast) => {
        this.counters.steps++;
        this.counters.ballastTokens += ballast;
        this.stepListeners.call();
      },
      onBodyRound: (padding) => {
        this.counters.promptRounds++;
        this.counters.paddingTokens += padding;
        this.stepListeners.call();
      },
    })
      .catch((e: unknown) => {
        // A failure of the loop itself (not of one request): nothing queued can run.
        for (const generation of this.queue.splice(0)) this.settle(generation, () => generation.reject(e));
      })
      .finally(() => {
        this.stepper = undefined;
        this.running.delete(stepper);
        if (this.queue.length > 0) this.schedule();
      });
    this.stepper = stepper;
    this.running.add(stepper);
  }

  /**
   * Starts queued generations (first come, first served) on the free sequences, each on the free sequence
   * that holds the longest part of its prompt. A generation whose shared prefix another sequence is
   * decoding right now waits in the queue for its snapshot (the loop admits again once that is done).
   */
  private async admit(free: number[]): Promise<Map<number, Admission<GenerationLane>>> {
    const started = new Map<number, Admission<GenerationLane>>();
    const open = [...free];
    const waiting: Generation[] = [];
    while (open.length > 0 && this.queue.length > 0) {
      const generation = this.queue.shift()!;
      if (generation.settled) continue;
      let at = 0;
      let keep = -1;
      for (const [k, i] of open.entries()) {
        const held = this.held(this.contextSequences[i]!, generation);
        if (held > keep) [at, keep] = [k, held];
      }
      const key = this.prefixKey(generation);
      const snapshot = key === null ? undefined : this.snapshots.get(key);
      if (snapshot && !snapshot.settled && keep < generation.prefixLength) {
        waiting.push(generation);
        continue;
      }
      const index = open[at]!;
      const admission = await this.startGeneration(this.contextSequences[index]!, generation, keep);
      if (admission) {
        started.set(index, admission);
        open.splice(at, 1);
      }
    }
    this.queue.unshift(...waiting);
    return started;
  }

  /** How much of the generation's prompt (but its last token) `sequence` holds: what it may keep. */
  private held(sequence: LlamaContextSequence, generation: Generation): number {
    if (!this.reuse) return 0;
    const limit = this.contextSequences.length === 1 ? (this.piecesEnd.get(sequence) ?? 0) : Infinity;
    return Math.min(sequence.compareContextTokens(generation.tokens).firstDifferentIndex, generation.tokens.length - 1, limit);
  }

  /**
   * Puts a generation on a sequence: keeps what the sequence holds of its prompt, restores its shared
   * prefix from a snapshot when that gives more, and leaves the rest of the body (all but the last
   * token) to be decoded in pieces, with a stop at the end of a shared prefix that has no snapshot
   * yet, to write one; the last token goes into the lane's first step. Null when it failed or was
   * cancelled (settled).
   */
  private async startGeneration(sequence: LlamaContextSequence, generation: Generation, held: number): Promise<Admission<GenerationLane> | null> {
    const started = performance.now();
    const body = generation.tokens.slice(0, -1);
    const stops: BodyStop[] = [];
    let snapshotting: { finish(ok: boolean): void } | undefined;
    try {
      const stopped = this.stoppedBy(generation);
      if (stopped) throw stopped.reason;
      let keep = held;
      let restored = false;
      const key = this.prefixKey(generation);
      const snapshot = key === null ? undefined : this.snapshots.get(key);
      if (key !== null && keep < generation.prefixLength && snapshot) {
        // Settled: admit() holds back a generation whose snapshot is still being written.
        if (await snapshot.ready) {
          restored = await this.restore(sequence, snapshot.file);
          keep = restored ? generation.prefixLength : 0;
        }
      } else if (key !== null && keep < generation.prefixLength) {
        const writing = this.snapshots.begin(key, generation.prefixLength);
        snapshotting = writing;
        stops.push({
          at: generation.prefixLength - keep,
          readmit: true,
          reached: async () => {
            await sequence.saveStateToFile(writing.file);
            this.counters.prefixSnapshots++;
            writing.finish(true);
          },
        });
      }
      if (restored) {
        this.counters.restoredTokens += keep;
        this.counters.prefixRestores++;
      } else {
        this.counters.reusedTokens += keep;
      }
      if (keep === 0) await sequence.clearHistory();
      else if (keep < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: keep, end: sequence.nextTokenIndex }]);
      this.counters.evaluatedTokens += generation.tokens.length - keep;
      this.piecesEnd.set(sequence, body.length);
      const lane = await this.openLane(sequence, generation, generation.tokens.slice(-1), started);
      return { lane, body: body.slice(keep), stops, abandon: () => snapshotting?.finish(false) };
    } catch (e) {
      snapshotting?.finish(false);
      const error = this.stoppedBy(generation)?.reason ?? e;
      this.settle(generation, () => generation.reject(error));
      return null;
    }
  }

  /** Replaces the sequence's state with a snapshot; false (the sequence emptied) when the file is gone (evicted meanwhile). */
  private async restore(sequence: LlamaContextSequence, file: string): Promise<boolean> {
    try {
      await sequence.loadStateFromFile(file, { acceptRisk: true });
      return true;
    } catch {
      await sequence.clearHistory();
      return false;
    }
  }

  /** Takes one step's outcome for a lane; true when the lane is finished (settled, its sequence free). */
  private async advance(lane: GenerationLane, outcome: PromiseSettledResult<IteratorResult<Token, void>>): Promise<boolean> {
    const { generation } = lane;
    const finish = async (settle: () => void): Promise<true> => {
      // Ending an evaluation that failed or was stopped rejects with that same reason, which
      // `settle` passes on to the request.
      await lane.iterator.return(undefined).catch(() => undefined);
      this.settle(generation, settle);
      return true;
    };
    const stopped = this.stoppedBy(generation);
    if (generation.settled || stopped) return finish(() => generation.reject(stopped?.reason));
    if (outcome.status === 'rejected') return finish(() => generation.reject(outcome.reason));
    if (!outcome.value.done && this.acceptToken(lane, outcome.value.value)) return false;
    const result = this.resultOf(lane);
    return finish(() => generation.resolve(result));
  }
}

const emptyBiases = new WeakMap<LlamaModel, TokenBias>();
function noBias(model: LlamaModel): TokenBias {
  let bias = emptyBiases.get(model);
  if (!bias) {
    bias = new (loadedNodeLlamaCpp().TokenBias)(model.tokenizer);
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
