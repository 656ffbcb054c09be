// Loading a GGUF into a LlamaBackend: the file validated and vouched for, the context sized to
// what memory allows (refused in one line when it cannot fit), the chat template picked, and the
// backend (or a subclass: bench/ runs another schedule that way) built from the parts.
import { basename } from 'node:path';
import type { BatchingOptions, Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';
import { isInsufficientMemory } from './module';
import { UserError, errorMessage } from '../common/errors';
import { LlamaBackend } from './backend';
import type { LlamaBackendParts } from './backend-types';
import { chatWrapperFor } from './chat-template';
import { contextBeyondMemory, loadGpuLayers, memoryShortfall } from './fit';
import { type GgufInspection } from './gguf';
import { inspectGgufOnce } from './inspection';
import { clearLlamaErrors, contentionWatch, getLlamaRuntime, llamaLoadReason } from './runtime';
import { defaultThreads } from './threads';
import { vouchForModel } from './trial-load';

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
   * Reuse what sequences hold and shared-prefix snapshots between requests (default true). False
   * decodes every prompt from scratch: only for measuring what reuse saves.
   */
  reuse?: boolean;
}


/** LlamaBackend or a subclass, for loadLlamaBackend: how to build one, and the batching its context needs. */
export interface LlamaBackendKind<B extends LlamaBackend = LlamaBackend> {
  new (parts: LlamaBackendParts): B;
  /** Batching options for the context, which the strategy may read back through `context`. */
  batching(context: () => LlamaContext | undefined): BatchingOptions | undefined;
}

/**
 * Validates the file (inspectGguf), loads the model on the process's Llama, picks its chat
 * template (the GGUF's own; the General fallback when it has none) and creates a context with
 * `sequences` parallel sequences, for a LlamaBackend (or `kind`, a subclass: bench/ runs another
 * schedule that way).
 */
export async function loadLlamaBackend<B extends LlamaBackend = LlamaBackend>(opts: LoadLlamaBackendOptions, kind?: LlamaBackendKind<B>): Promise<B> {
  const Kind = (kind ?? LlamaBackend) as LlamaBackendKind<B>;
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

  // llama.cpp aborts the process on hyperparameters it dislikes: a file is loaded here only once
  // a child has loaded it (trial-load.ts).
  await vouchForModel(opts.modelPath, opts.signal ? { signal: opts.signal } : {});
  const llama = await getLlamaRuntime();
  const shape = { contextSize, sequences };
  // A context beyond all the memory free is refused before the load, in milliseconds (fit.ts).
  const beyond = await contextBeyondMemory(opts.modelPath, llama, shape);
  if (beyond) throw await outOfMemoryError(beyond, llama, inspection, shape, 'context');
  let model: LlamaModel;
  clearLlamaErrors();
  try {
    model = await llama.loadModel({
      modelPath: opts.modelPath,
      gpuLayers: opts.gpuLayers === undefined || opts.gpuLayers === 'auto' ? loadGpuLayers(contextSize, sequences) : opts.gpuLayers,
      loadSignal: opts.signal,
    });
  } catch (e) {
    opts.signal?.throwIfAborted();
    const oom = await outOfMemoryError(e, llama, inspection, shape, 'load');
    if (oom !== e) throw oom;
    // A file our reader let through that llama.cpp still refuses (hyperparameters it checks
    // itself): one line with its reason, not "Failed to load model" between its log lines.
    const reason = llamaLoadReason();
    throw new UserError(`cannot load ${opts.modelPath}: llama.cpp refused it (${reason ?? errorMessage(e)})`, 'gguf_invalid');
  }
  try {
    opts.signal?.throwIfAborted();
    const usesFallbackTemplate = !inspection.hasChatTemplate;
    const chatWrapper = chatWrapperFor(model, inspection);
    let context: LlamaContext;
    // Up to `threads`, fewer while other processes keep cores busy (contention.ts). The budget is
    // held at `threads` while the context is created (node-llama-cpp caps a context's threads at
    // the budget of that moment), and for good with one sequence: its steps are one token of one
    // sequence, whose attention llama.cpp splits by thread once the sequence is long, so there the
    // thread count must not change.
    const pinned = contentionWatch()?.pin(threads);
    try {
      // The batch order may read the context's queue, so it gets the context it orders.
      const created: { context?: LlamaContext } = {};
      const batching = Kind.batching(() => created.context);
      context = await model.createContext({ contextSize, sequences, threads: { ideal: threads, min: sequences === 1 ? threads : 1 }, createSignal: opts.signal, ...(batching ? { batching } : {}) });
      created.context = context;
    } catch (e) {
      pinned?.();
      if (opts.signal?.aborted) throw e;
      throw await outOfMemoryError(e, llama, inspection, shape, 'context');
    }
    if (pinned && sequences === 1) context.onDispose.createListener(pinned);
    else pinned?.();
    return new Kind({ llama, model, context, inspection, chatWrapper, usesFallbackTemplate, reuse: opts.reuse ?? true });
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
  if (!isInsufficientMemory(e) && !contextFailed) return e;
  const name = basename(inspection.path);
  const tokens = `${shape.contextSize.toLocaleString('en-US')} tokens × ${shape.sequences} sequence${shape.sequences === 1 ? '' : 's'}`;
  const what = stage === 'load' ? `cannot load ${name}` : `cannot create a ${tokens} context for ${name}`;
  // The estimate asks node-llama-cpp's resolver for the same shape: where no GPU layer count fits
  // it refuses with the same InsufficientMemoryError, and the message goes without figures.
  const shortfall = await memoryShortfall(inspection.path, llama, shape).catch((estimate: unknown) => {
    if (isInsufficientMemory(estimate)) return null;
    throw estimate;
  });
  const figures = shortfall ? `: it needs ${shortfall}` : ` (${errorMessage(e)})`;
  return new UserError(`${what}: not enough memory${figures}; use a shorter context (--context-size), fewer parallel sequences (--sequences / --concurrency), or a smaller model or quantisation`, 'insufficient_memory');
}
