// The deterministic schedule over a context's sequences (see backend.ts for why): prompts are
// decoded alone, in chunks of two or more tokens; generation goes in steps in which every sequence
// decodes exactly one token in one batch, idle sequences a throwaway "ballast" token. Then every
// token of a request is computed by the same kernels whatever else is running, so its output is a
// function of the request alone.
import { waitForLockRelease } from 'lifecycle-utils';
import type { CustomBatchingPrioritizationStrategy, LlamaContext, LlamaContextSequence, PrioritizedBatchItem, Token } from 'node-llama-cpp';

/** A request decoding on one sequence: its generator yields one token per step. */
export interface Lane {
  iterator: AsyncGenerator<Token, void, Token | Token[] | undefined>;
}

/** What the step loop needs from its owner (LlamaBackend). */
export interface LaneSource<L extends Lane> {
  readonly context: LlamaContext;
  readonly sequences: readonly LlamaContextSequence[];
  /** True once the owner is disposed: the loop stops and ends its lanes. */
  stopped(): boolean;
  /**
   * Starts queued requests on the free sequences `free` (their prompts decoded one after another,
   * alone); returns the lanes started, by sequence index. Which request goes to which free sequence
   * is the owner's choice: it does not change any output.
   */
  admit(free: number[]): Promise<Map<number, L>>;
  /** Takes a lane's step outcome; true when the lane is finished and its sequence free again. */
  advance(lane: L, outcome: PromiseSettledResult<IteratorResult<Token, void>>): Promise<boolean>;
  /** Counts what the loop did. */
  onStep(ballastTokens: number): void;
}

/**
 * Decodes `tokens` onto the end of `sequence` in pieces the context's batch holds, none of one
 * token unless there is only one (a one-token piece would take the single-column kernels and so
 * compute other numbers for that token than a longer piece does).
 */
export async function decodeInChunks(sequence: LlamaContextSequence, tokens: readonly Token[], batchSize: number): Promise<void> {
  let at = 0;
  while (at < tokens.length) {
    let size = Math.min(batchSize, tokens.length - at);
    if (tokens.length - at - size === 1) size--;
    await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(at, at + size));
    at += size;
  }
}

/**
 * The batch order for a lockstep context: by sequence id, each item whole while the batch has room.
 * llama.cpp splits a batch over several KV streams into ubatches of consecutive, increasing sequence
 * ids in batch order (llama_batch_allocr::split_equal), so a step queued as 0, 3, 1, 2 (the order
 * the sequences' async paths happened to reach node-llama-cpp's queue) would decode sequence 3 in
 * a ubatch of its own. The strategy sees the queue's items in queue order and not their sequence,
 * so it reads the ids from the context's queue (node-llama-cpp 3.21.1, pinned; the lockstep tests
 * fail if this stops holding).
 */
export function sequenceOrderStrategy(context: () => LlamaContext | undefined): CustomBatchingPrioritizationStrategy {
  return ({ items, size }) => {
    const queued = (context() as unknown as { _queuedDecodes?: { sequenceId: number }[] } | undefined)?._queuedDecodes;
    const order = items.map((item, i) => ({ item, sequence: queued?.length === items.length ? queued[i]!.sequenceId : i }));
    order.sort((a, b) => a.sequence - b.sequence);
    let room = size;
    const out: PrioritizedBatchItem[] = [];
    for (const { item } of order) {
      const processAmount = Math.min(item.tokens.length, room);
      if (processAmount <= 0) break;
      out.push({ item, processAmount });
      room -= processAmount;
    }
    return out;
  };
}

/** A token idle sequences decode in a step; any valid id does, its output is thrown away. */
const BALLAST_TOKEN = 0 as Token;

/**
 * Runs steps until no lane is active and nothing is queued. Each round: free sequences take queued
 * requests (prompts decoded one after another, nothing else decoding), then one step.
 */
export async function runSteps<L extends Lane>(source: LaneSource<L>): Promise<void> {
  const lanes: (L | null)[] = source.sequences.map(() => null);
  let failure: unknown = new Error('the model backend stopped');
  try {
    while (!source.stopped()) {
      const free = lanes.flatMap((lane, i) => (lane === null ? [i] : []));
      if (free.length > 0) for (const [i, lane] of await source.admit(free)) lanes[i] = lane;
      const active = lanes.filter((lane): lane is L => lane !== null);
      if (active.length === 0) return;
      const outcomes = await step(source, lanes);
      for (const [i, lane] of lanes.entries()) {
        if (lane && (await source.advance(lane, outcomes[i]!))) lanes[i] = null;
      }
    }
  } catch (e) {
    failure = e;
    throw e;
  } finally {
    // Stopped (disposed) or failed: the lanes still decoding end with that (advance settles them).
    for (const lane of lanes) if (lane) await source.advance(lane, { status: 'rejected', reason: failure });
  }
}

/**
 * One step: every active lane asks for its next token, every idle sequence decodes a ballast token,
 * all queued in the same tick, so node-llama-cpp dispatches them as one batch the moment the last
 * sequence has queued (it does not wait when every sequence has a decode queued). With one lane
 * alone, one ballast token also asks for logits, so the output layer still multiplies two columns.
 */
async function step<L extends Lane>(source: LaneSource<L>, lanes: readonly (L | null)[]): Promise<PromiseSettledResult<IteratorResult<Token, void>>[]> {
  const { context, sequences } = source;
  const activeCount = lanes.filter((lane) => lane !== null).length;
  let logitsBallast = activeCount === 1;
  // Keep ballast from filling a sequence: what a sequence holds beyond the ballast (its last
  // prompt, reused by a later request) stays unless the context is nearly full.
  for (const [i, sequence] of sequences.entries()) {
    if (lanes[i] === null && sequence.nextTokenIndex + 2 >= sequence.contextSize) await sequence.clearHistory();
  }
  // node-llama-cpp resolves a step's tokens before its batch loop lets go of the context (it runs
  // after-batch work under the lock, then takes whatever is queued by then into another batch):
  // queue the next step only once the loop is done, so timing cannot split a step.
  await waitForLockRelease([context, 'context']);
  const ballasts: AsyncGenerator<Token, void, Token | Token[] | undefined>[] = [];
  const pending = lanes.map((lane, i): Promise<unknown> => {
    if (lane) return lane.iterator.next();
    const sequence = sequences[i]!;
    if (logitsBallast) {
      logitsBallast = false;
      const ballast = sequence.evaluate([BALLAST_TOKEN], { temperature: 0 });
      ballasts.push(ballast);
      return ballast.next();
    }
    return sequence.evaluateWithoutGeneratingNewTokens([BALLAST_TOKEN]);
  });
  const outcomes = await Promise.allSettled(pending);
  for (const ballast of ballasts) await ballast.return(undefined).catch(() => undefined);
  source.onStep(lanes.length - activeCount);
  return outcomes as PromiseSettledResult<IteratorResult<Token, void>>[];
}
