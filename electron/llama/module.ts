// node-llama-cpp, loaded on first use rather than when a face starts. Importing it takes about
// 450 ms here (its own dependencies and the addon's loader), which every command that runs no
// model paid before doing anything (`tatra jobs show`, `jobs list`, `--version`, `tatra serve`
// before its first model). Every value the llama layer takes from it comes through here; its
// types are imported as types, which cost nothing at run time (docs/architecture.md §8).
import type * as NodeLlamaCppModule from 'node-llama-cpp';

type NodeLlamaCpp = typeof NodeLlamaCppModule;

let loaded: NodeLlamaCpp | null = null;
let loading: Promise<NodeLlamaCpp> | null = null;

/** node-llama-cpp, imported on the first call (every later one gets the same module). */
export function nodeLlamaCpp(): Promise<NodeLlamaCpp> {
  loading ??= import('node-llama-cpp').then((m) => (loaded = m));
  return loading;
}

/**
 * node-llama-cpp for code that runs only once a Llama or a model exists (getLlamaRuntime imported
 * it to make them): a call before that is a fault in the caller, said as one.
 */
export function loadedNodeLlamaCpp(): NodeLlamaCpp {
  if (!loaded) throw new Error('node-llama-cpp was used before the llama runtime loaded it (llama/module.ts)');
  return loaded;
}

/** Whether `e` is node-llama-cpp's InsufficientMemoryError: never, while nothing has loaded node-llama-cpp to throw one. */
export function isInsufficientMemory(e: unknown): boolean {
  return loaded !== null && e instanceof loaded.InsufficientMemoryError;
}
