// One node-llama-cpp `Llama` per process: it owns the native backend, the thread budget and the
// GPU; loading it twice wastes memory and splits the thread budget (docs/architecture.md, "node-llama-cpp").
import { availableParallelism } from 'node:os';
import { format } from 'node:util';
import type { Llama } from 'node-llama-cpp';
import { nodeLlamaCpp } from './module';
import { watchContention, type ContentionWatch } from './contention';
import { checkLlamaInternals } from './internals';
import { poolNativeSamplers } from './samplers';
import { defaultThreads } from './threads';
import { UserError, errorMessage } from '../common/errors';

// llama.cpp warns about this on every load of a real Qwen2 vocabulary; it is harmless and would
// drown the warnings that matter.
const knownNoise = [/control-looking token/];

let runtime: Promise<Llama> | undefined;
let contention: ContentionWatch | undefined;

// llama.cpp logs on many loads of ordinary models ("load: bad special token …"), and a model it
// refuses gets several lines of its own words around ours. Its log lines reach stderr only on
// request (`tatra --verbose`, or TATRA_VERBOSE=1 for the app and `tatra serve`); otherwise its
// errors are kept (the last few), and a load that fails says the reason in its one line
// (llamaLoadReason).
let showWarnings = process.env.TATRA_VERBOSE === '1';
const recentErrors: string[] = [];
const KEPT_ERRORS = 20;

/** Whether llama.cpp's log lines (warnings and errors) reach stderr from now on. */
export function showLlamaWarnings(show: boolean): void {
  showWarnings = show;
}

/** Forgets the llama.cpp errors kept so far (before a load, so its reason is its own). */
export function clearLlamaErrors(): void {
  recentErrors.length = 0;
}

/**
 * Why llama.cpp refused a model, from the errors it logged since clearLlamaErrors(): its
 * "error loading model: …" reason when it gave one, else its first error, without the function
 * names; null when it logged none.
 */
export function llamaLoadReason(): string | null {
  const lines = recentErrors.map((l) => l.trim()).filter((l) => l !== '');
  const explicit = lines.map((l) => /error loading model:\s*(.+)$/i.exec(l)?.[1]).find((r) => r !== undefined);
  const first = explicit ?? lines[0];
  if (first === undefined) return null;
  const reason = first.replace(/^(\w+(::\w+)*:\s*)+/, '').replace(/\s+/g, ' ').trim();
  return reason.length > 200 ? `${reason.slice(0, 199)}…` : reason;
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

/**
 * Runs `start` with node-llama-cpp's own console lines kept instead of printed: while it finds its
 * binary it reports one it could not load with console.error and a stack, which is also what a
 * terminal's Ctrl-C at that moment produces (its binary test child dies with the process group).
 * A failure becomes one line with its first reason; on success they are shown only on request.
 */
async function keepingLibraryLines<T>(start: () => Promise<T>): Promise<T> {
  const kept: string[] = [];
  const { error, warn, log } = console;
  const keep =
    (print: (...a: unknown[]) => void) =>
    (...args: unknown[]): void => {
      const text = format(...args);
      if (text.includes('[node-llama-cpp]')) kept.push(text);
      else print.apply(console, args);
    };
  console.error = keep(error);
  console.warn = keep(warn);
  console.log = keep(log);
  try {
    const value = await start();
    if (showWarnings) for (const line of kept) process.stderr.write(`${line}\n`);
    return value;
  } catch (e) {
    // eslint-disable-next-line no-control-regex
    const first = kept.map((l) => l.replace(/\u001b\[[0-9;]*m/g, '').replace(/^\[node-llama-cpp\]\s*/, '').split('\n')[0]!.trim()).find((l) => l !== '');
    throw new UserError(`cannot start llama.cpp: ${first ?? errorMessage(e)}`, 'llama_unavailable');
  } finally {
    console.error = error;
    console.warn = warn;
    console.log = log;
  }
}

/**
 * $TATRA_GPU: unset or "auto" lets node-llama-cpp pick (CUDA, Vulkan, CPU); "off" forces the CPU;
 * "cuda" or "vulkan" asks for that backend even where its libraries are not found in the usual
 * places (a GPU server with CUDA in an unusual prefix): it then fails loudly rather than run on CPU.
 */
export function gpuChoice(value: string | undefined): false | 'auto' | 'cuda' | 'vulkan' {
  if (value === 'off') return false;
  if (value === 'cuda' || value === 'vulkan') return value;
  return 'auto';
}

function createRuntime(): Promise<Llama> {
  const cap = Math.max(defaultThreads(), availableParallelism());
  return keepingLibraryLines(async () => {
    const { getLlama, LlamaLogLevel } = await nodeLlamaCpp();
    return getLlama({
    gpu: gpuChoice(process.env.TATRA_GPU),
    build: 'never',
    logLevel: LlamaLogLevel.warn,
    // The cap shared by all contexts; each context still asks for defaultThreads() unless told otherwise.
    maxThreads: cap,
    logger(level, message) {
      const severe = level === LlamaLogLevel.error || level === LlamaLogLevel.fatal;
      if (severe) {
        recentErrors.push(message);
        if (recentErrors.length > KEPT_ERRORS) recentErrors.shift();
      }
      if (!showWarnings || knownNoise.some((r) => r.test(message))) return;
      process.stderr.write(`[llama] ${message.trimEnd()}\n`);
    },
  });
  })
    .then(async (llama) => {
      // The internals the layer relies on are the ones it was checked against (internals.ts).
      await checkLlamaInternals(llama).catch(async (e: unknown) => {
        await llama.dispose();
        throw e;
      });
      // Native samplers reused, not left to the garbage collector (samplers.ts).
      poolNativeSamplers(llama);
      contention = watchContention(llama, cap);
      return llama;
    })
    .catch((e: unknown) => {
      // Refused, not remembered: the next call tries again.
      runtime = undefined;
      throw e;
    });
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
