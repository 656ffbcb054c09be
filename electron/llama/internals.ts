// node-llama-cpp's private members, reached here and nowhere else (docs/architecture.md §8).
//
// The llama layer relies on four members node-llama-cpp marks @internal, each for a reason its
// public API leaves no other way to serve:
//   Llama._bindings.AddonSampler   the native sampler class, pooled (samplers.ts)
//   LlamaModel._model              the addon's model a pooled sampler belongs to (samplers.ts)
//   LlamaContext._queuedDecodes    the sequence of each queued decode, for lockstep's batch order (lockstep.ts)
//   GgufInsights._resolveSimulatorSource  turned off to plan for another backend's GPU (fit.ts)
// They were read against one version, NODE_LLAMA_CPP_PINNED (package.json pins the same, and a
// test holds the two equal). When the process's Llama starts (runtime.ts), checkLlamaInternals
// refuses another installed version, or a member gone, with one line: what a newer release moved
// would otherwise show as a sampler that is never reused, a batch order that is no longer
// deterministic, or a plan measured on the wrong device. Members that live on instances are
// checked where they are first reached, with the same line.
import type { GgufInsights, Llama, LlamaContext, LlamaModel } from 'node-llama-cpp';
import { nodeLlamaCpp } from './module';
import { UserError } from '../common/errors';

/** The node-llama-cpp version whose internals this module was checked against. */
export const NODE_LLAMA_CPP_PINNED = '3.21.1';

/** The addon's sampler as node-llama-cpp's LlamaSampler uses it. */
export interface NativeSampler {
  applyConfig(config: object): void;
  dispose(): void;
}
export type NativeSamplerClass = new (model: object) => NativeSampler;

interface Bindings {
  AddonSampler: NativeSamplerClass;
}

/** The one line for an installed node-llama-cpp whose internals are not the ones this module reads. */
export function internalsChanged(version: string, missing: string | null): UserError {
  const what = missing === null ? `node-llama-cpp ${version} is installed` : `node-llama-cpp ${version} has no ${missing}`;
  return new UserError(
    `${what}, but TATRA Studio relies on internals of node-llama-cpp ${NODE_LLAMA_CPP_PINNED} (native samplers, lockstep batch order, GPU fit plans): install node-llama-cpp ${NODE_LLAMA_CPP_PINNED}`,
    'llama_internals',
  );
}

/**
 * Refuses (with internalsChanged's line) a version other than the pinned one, or the first member
 * `present` says is missing. The check itself, apart from where its facts come from.
 */
export function checkInternals(version: string, present: Record<string, boolean>): void {
  if (version !== NODE_LLAMA_CPP_PINNED) throw internalsChanged(version, null);
  const missing = Object.entries(present).find(([, ok]) => !ok)?.[0];
  if (missing !== undefined) throw internalsChanged(version, missing);
}

let installedVersion: string | undefined;

/** The installed node-llama-cpp's version, for the line of a member found missing on an instance. */
function versionForLine(): string {
  return installedVersion ?? 'as installed';
}

/** Checks the installed version and the members reachable before any model loads (runtime.ts). */
export async function checkLlamaInternals(llama: Llama): Promise<void> {
  const { GgufInsights, getModuleVersion } = await nodeLlamaCpp();
  installedVersion = await getModuleVersion();
  const bindings = (llama as unknown as { _bindings?: Partial<Bindings> })._bindings;
  const insights = GgufInsights.prototype as unknown as { _resolveSimulatorSource?: unknown };
  checkInternals(installedVersion, {
    'Llama._bindings.AddonSampler': typeof bindings?.AddonSampler === 'function',
    'GgufInsights._resolveSimulatorSource': typeof insights._resolveSimulatorSource === 'function',
  });
}

/** The process's native bindings, whose sampler class samplers.ts swaps for its pool (once per Llama). */
export function samplerBindings(llama: Llama): Bindings {
  return (llama as unknown as { _bindings: Bindings })._bindings;
}

/** The addon's model behind a loaded LlamaModel (a pooled sampler works with its own model only). */
export function nativeModel(model: LlamaModel): object {
  const native = (model as unknown as { _model?: object })._model;
  if (typeof native !== 'object' || native === null) throw internalsChanged(versionForLine(), 'LlamaModel._model');
  return native;
}

/** The sequence id of each decode the context has queued, in queue order. */
export function queuedSequenceIds(context: LlamaContext): number[] {
  const queued = (context as unknown as { _queuedDecodes?: { sequenceId: number }[] })._queuedDecodes;
  if (!Array.isArray(queued)) throw internalsChanged(versionForLine(), 'LlamaContext._queuedDecodes');
  return queued.map((q) => q.sequenceId);
}

/**
 * Makes `insights` estimate from the header's tensor sizes instead of simulating the model on the
 * process's own backend: node-llama-cpp's own fallback wherever no simulator source resolves.
 */
export function withoutSimulation(insights: GgufInsights): void {
  (insights as unknown as { _resolveSimulatorSource: () => Promise<null> })._resolveSimulatorSource = async () => null;
}
