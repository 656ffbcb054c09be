// Native samplers reused instead of left to the garbage collector.
//
// node-llama-cpp (3.21.1, internals.ts) creates a native sampler (its addon's AddonSampler) for every evaluation
// it runs: each generation, and also each prompt piece and each ballast token the lockstep schedule
// decodes (lockstep.ts), though those sample nothing. Each one allocates a candidates buffer the
// size of the vocabulary (1.7 MiB for Qwen's 151,936 tokens) that its dispose() leaves allocated:
// only the garbage collector's finalizer frees it, and V8 does not know the buffer is there, so it
// sees no reason to collect. A service answering requests grew by gigabytes between collections
// (bench/api-soak.ts). Here the process's Llama hands native samplers out from a pool per model:
// one node-llama-cpp disposes is reset and kept for the next evaluation, so there are never more
// of them than were in use at once.
//
// A reused sampler must sample exactly as a new one (same seed, same tokens). node-llama-cpp applies
// its whole configuration before every sample, and the addon rebuilds each part whose setting
// changed; the only part with state of its own that an unchanged setting keeps is the seeded
// random draw (and XTC's, seeded alike). Resetting applies an empty configuration, which frees
// every part that has settings (greedy stays, as in a new sampler) and lets go of the grammar
// state, then seeds the draw twice with different seeds, so whatever seed the next user asks for,
// its draw is new: either created for it, or created by the reset and never used.
import type { Llama, LlamaModel } from 'node-llama-cpp';
import { nativeModel, samplerBindings, type NativeSampler, type NativeSamplerClass } from './internals';

/**
 * Idle samplers kept per model at most. In use at once: a generation's own, and one more per
 * sequence decoding a prompt piece or a ballast token (at most 64 sequences per context), so a
 * backend never needs more; beyond it a sampler is disposed and left to the collector as before.
 */
const MAX_IDLE = 160;

export interface SamplerPoolStats {
  /** Native samplers created since the pool was installed. */
  created: number;
  /** Evaluations that got a pooled sampler instead of a new one. */
  reused: number;
  /** Samplers idle in the pool now. */
  idle: number;
  /** Samplers handed out and not yet given back. */
  inUse: number;
}

class SamplerPool {
  /** Idle samplers by the addon's model object (a sampler works with its own model only). */
  private readonly idle = new WeakMap<object, NativeSampler[]>();
  /** Models gone (unloaded): their samplers are disposed for good when given back. */
  private readonly gone = new WeakSet<object>();
  private readonly pooled = new WeakSet<NativeSampler>();
  private readonly counts = { created: 0, reused: 0, idle: 0, inUse: 0 };

  constructor(private readonly Native: NativeSamplerClass) {}

  take(model: object): NativeSampler {
    this.counts.inUse++;
    const sampler = this.idle.get(model)?.pop();
    if (sampler) {
      this.counts.idle--;
      this.pooled.delete(sampler);
      this.counts.reused++;
      return sampler;
    }
    const created = new this.Native(model);
    this.counts.created++;
    const dispose = created.dispose.bind(created);
    // node-llama-cpp calls this once it is done with the sampler (under its sampling lock). The
    // class's method is read-only: the instance gets its own.
    Object.defineProperty(created, 'dispose', { value: () => this.giveBack(model, created, dispose) });
    return created;
  }

  /** Disposes a model's idle samplers; those still in use are disposed when given back. */
  forget(model: object): void {
    this.gone.add(model);
    const list = this.idle.get(model) ?? [];
    this.idle.delete(model);
    this.counts.idle -= list.length;
    for (const sampler of list) disposeNative(sampler);
  }

  stats(): SamplerPoolStats {
    return { ...this.counts };
  }

  private giveBack(model: object, sampler: NativeSampler, dispose: () => void): void {
    if (this.pooled.has(sampler)) return;
    this.counts.inUse--;
    let list = this.idle.get(model);
    if (this.gone.has(model) || (list?.length ?? 0) >= MAX_IDLE) {
      dispose();
      return;
    }
    try {
      sampler.applyConfig({});
      sampler.applyConfig({ seed: 0 });
      sampler.applyConfig({ seed: 1 });
    } catch {
      dispose();
      return;
    }
    if (!list) this.idle.set(model, (list = []));
    list.push(sampler);
    this.pooled.add(sampler);
    this.counts.idle++;
  }
}

function disposeNative(sampler: NativeSampler): void {
  Object.getPrototypeOf(sampler).dispose.call(sampler);
}

const pools = new WeakMap<Llama, SamplerPool>();

/**
 * Makes every evaluation on `llama` take its native sampler from a pool (once per Llama). Relies
 * on node-llama-cpp's internals (internals.ts): LlamaSampler builds `new _bindings.AddonSampler(model)`
 * and disposes it when the evaluation ends; test/model/llama-samplers.test.ts fails if that changes.
 */
export function poolNativeSamplers(llama: Llama): void {
  if (pools.has(llama)) return;
  const bindings = samplerBindings(llama);
  const pool = new SamplerPool(bindings.AddonSampler);
  pools.set(llama, pool);
  // A Proxy keeps the class's static functions (grammar checks node-llama-cpp calls on it).
  bindings.AddonSampler = new Proxy(bindings.AddonSampler, {
    construct: (_target, args: unknown[]) => pool.take(args[0] as object),
  });
}

/** Disposes the idle samplers of a model being unloaded. */
export function forgetModelSamplers(llama: Llama, model: LlamaModel): void {
  pools.get(llama)?.forget(nativeModel(model));
}

/** The pool's counters for `llama` (null before poolNativeSamplers). */
export function samplerPoolStats(llama: Llama): SamplerPoolStats | null {
  return pools.get(llama)?.stats() ?? null;
}
