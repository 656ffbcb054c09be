// One node-llama-cpp `Llama` per process: it owns the native backend, the thread budget and the
// GPU; loading it twice wastes memory and splits the thread budget (docs/architecture.md, "node-llama-cpp").
import { availableParallelism } from 'node:os';
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import { watchContention, type ContentionWatch } from './contention';
import { defaultThreads } from './threads';

// llama.cpp warns about this on every load of a real Qwen2 vocabulary; it is harmless and would
// drown the warnings that matter.
const knownNoise = [/control-looking token/];

let runtime: Promise<Llama> | undefined;
let contention: ContentionWatch | undefined;

// llama.cpp warns on many loads of ordinary models ("load: bad special token …"); printed on every
// CLI run they read as something being wrong. Warnings are shown on request (`tatra --verbose`,
// or TATRA_VERBOSE=1 for the app and `tatra serve`); errors always are.
let showWarnings = process.env.TATRA_VERBOSE === '1';

/** Whether llama.cpp's warnings reach stderr from now on; its errors always do. */
export function showLlamaWarnings(show: boolean): void {
  showWarnings = show;
}

/**
 * The process's Llama: gpu "auto" (CUDA, then Vulkan, then CPU; $TATRA_GPU=off forces CPU),
 * prebuilt binaries only (never compiles), errors (and with showLlamaWarnings, warnings) logged to
 * stderr, `maxThreads` = all cores, fewer while other processes keep cores busy (contention.ts);
 * contexts created by LlamaBackend ask for defaultThreads() unless given `threads`.
 */
export function getLlamaRuntime(): Promise<Llama> {
  runtime ??= createRuntime();
  return runtime;
}

function createRuntime(): Promise<Llama> {
  const cap = Math.max(defaultThreads(), availableParallelism());
  return getLlama({
    gpu: process.env.TATRA_GPU === 'off' ? false : 'auto',
    build: 'never',
    logLevel: LlamaLogLevel.warn,
    // The cap shared by all contexts; each context still asks for defaultThreads() unless told otherwise.
    maxThreads: cap,
    logger(level, message) {
      const severe = level === LlamaLogLevel.error || level === LlamaLogLevel.fatal;
      if (!severe && (!showWarnings || knownNoise.some((r) => r.test(message)))) return;
      process.stderr.write(`[llama] ${message.trimEnd()}\n`);
    },
  }).then(
    (llama) => {
      contention = watchContention(llama, cap);
      return llama;
    },
    (e: unknown) => {
      runtime = undefined;
      throw e;
    },
  );
}

/** The process's contention watch (none before getLlamaRuntime() has resolved, nor after disposal). */
export function contentionWatch(): ContentionWatch | undefined {
  return contention;
}

/** Disposes the process's Llama (and with it every model and context). The next call loads a fresh one. */
export async function disposeLlamaRuntime(): Promise<void> {
  const current = runtime;
  runtime = undefined;
  contention?.stop();
  contention = undefined;
  if (current) await (await current).dispose();
}
