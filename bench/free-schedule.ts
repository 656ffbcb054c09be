// The schedule the benches compare lockstep with, kept out of the app (a LlamaBackend subclass,
// loaded only from bench/): `free`, the backend's schedule before lockstep. Requests are dispatched
// as sequences free up and node-llama-cpp batches whatever is queued in one tick into one
// llama_decode; each sequence keeps its KV cache between requests, a request goes to the free
// sequence sharing the longest token prefix with its prompt, and only the rest is decoded (the
// shared prefix from a snapshot when another sequence decoded it). Timing decides the batches, so
// the same seed can give other text: not reproducible, hence `deterministic` false.
import type { LlamaContextSequence } from 'node-llama-cpp';
import { LlamaBackend, loadLlamaBackend, type LoadLlamaBackendOptions } from '../electron/llama';
import { MIN_SNAPSHOT_TOKENS } from '../electron/llama/backend';
import type { Generation } from '../electron/llama/backend-types';

export type LlamaSchedule = 'lockstep' | 'free';

export class FreeScheduleBackend extends LlamaBackend {
  /** node-llama-cpp's default batching (maximumParallelism), as before lockstep. */
  static override batching(): undefined {
    return undefined;
  }

  private readonly busy = new Set<number>();
  private readonly lastUsed = new Map<number, number>();
  private clock = 0;

  override get deterministic(): boolean {
    return false;
  }

  /** Hands queued generations to free sequences, each to the free sequence that already holds most of its prompt. */
  protected override schedule(): void {
    const sequences = this.contextSequences;
    while (this.queue.length > 0 && !this.disposed) {
      const free = sequences.flatMap((_, i) => (this.busy.has(i) ? [] : [i]));
      if (free.length === 0) return;
      const generation = this.queue.shift()!;
      let best = free[0]!;
      let bestCommon = -1;
      for (const i of free) {
        const common = sequences[i]!.compareContextTokens(generation.tokens).firstDifferentIndex;
        if (common > bestCommon || (common === bestCommon && (this.lastUsed.get(i) ?? 0) < (this.lastUsed.get(best) ?? 0))) {
          best = i;
          bestCommon = common;
        }
      }
      this.busy.add(best);
      this.lastUsed.set(best, ++this.clock);
      const run = this.run(sequences[best]!, generation).finally(() => {
        this.busy.delete(best);
        this.running.delete(run);
        this.schedule();
      });
      this.running.add(run);
    }
  }

  private async run(sequence: LlamaContextSequence, generation: Generation): Promise<void> {
    const { tokens } = generation;
    const started = performance.now();
    // The request's own cancel, else the backend's disposal: its signal's reason is what rejects.
    const throwIfStopped = () => {
      const signal = this.stoppedBy(generation);
      if (signal) throw signal.reason;
    };
    try {
      throwIfStopped();
      if (!this.reuse) await sequence.clearHistory();
      const prefix = this.reuse ? await this.restoreSharedPrefix(sequence, generation) : { decoded: 0, restored: 0 };
      // Keep the cached common prefix, but always decode at least the last prompt token: its
      // logits are what the first generated token is sampled from.
      const common = Math.min(sequence.compareContextTokens(tokens).firstDifferentIndex, tokens.length - 1);
      if (common < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: common, end: sequence.nextTokenIndex }]);
      this.counters.evaluatedTokens += tokens.length - common + prefix.decoded;
      this.counters.reusedTokens += common - prefix.decoded - prefix.restored;
      this.counters.restoredTokens += prefix.restored;

      const lane = await this.openLane(sequence, generation, tokens.slice(common), started);
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
      this.settle(generation, () => generation.resolve(result));
    } catch (e) {
      const error = this.stoppedBy(generation)?.reason ?? e;
      this.settle(generation, () => generation.reject(error));
    }
  }

  /**
   * Makes `sequence` hold the generation's shared prefix without decoding it again where another sequence
   * already did: the first generation to need a prefix decodes it and writes a snapshot; later ones on
   * other sequences (also those running at the same moment) load the snapshot.
   */
  private async restoreSharedPrefix(sequence: LlamaContextSequence, generation: Generation): Promise<{ decoded: number; restored: number }> {
    const none = { decoded: 0, restored: 0 };
    const length = generation.prefixLength;
    const key = this.prefixKey(generation);
    if (key === null || length < MIN_SNAPSHOT_TOKENS) return none;
    const held = sequence.compareContextTokens(generation.tokens).firstDifferentIndex;
    if (held >= length) return none;
    const existing = this.snapshots.get(key);
    if (existing) {
      if (!(await existing.ready)) return none;
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
    const writing = this.snapshots.begin(key, length);
    try {
      const common = sequence.compareContextTokens(generation.tokens.slice(0, length)).firstDifferentIndex;
      if (common < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: common, end: sequence.nextTokenIndex }]);
      await sequence.evaluateWithoutGeneratingNewTokens(generation.tokens.slice(common, length));
      await sequence.saveStateToFile(writing.file);
      this.counters.prefixSnapshots++;
      writing.finish(true);
      return { decoded: length - common, restored: 0 };
    } catch (e) {
      writing.finish(false);
      throw e;
    }
  }
}

/** loadLlamaBackend for a schedule: lockstep (the app's) or free (this file's). */
export function loadScheduled(opts: LoadLlamaBackendOptions, schedule: LlamaSchedule): Promise<LlamaBackend> {
  return schedule === 'free' ? loadLlamaBackend(opts, FreeScheduleBackend) : loadLlamaBackend(opts);
}
