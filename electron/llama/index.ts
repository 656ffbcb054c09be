// Real local inference through node-llama-cpp: the process's Llama, GGUF validation, the
// TatraBackend implementation (held by the pool in hold/). Main-process code only (node-llama-cpp
// crashes in a renderer).
export { getLlamaRuntime, disposeLlamaRuntime, showLlamaWarnings, contentionWatch } from './runtime';
export { defaultThreads, threadsFor, THREADS_HELP } from './threads';
export { inspectGgufOnce, readGgufInfoOnce } from './inspection';
export { inspectGguf, type GgufInspection, type InspectGgufOptions, type GgufErrorCode } from './gguf';
export { planLoad, loadGpuLayers, readGpuFacts, parseGpuStandIn, type LoadPlan, type MemoryBudget } from './fit';
export { LlamaBackend } from './backend';
export { loadLlamaBackend, type LoadLlamaBackendOptions, type LlamaBackendKind } from './load-backend';
export type { LlamaBackendStats, LlamaBackendParts } from './backend-types';
