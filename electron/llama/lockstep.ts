// The deterministic schedule over a context's sequences (see backend.ts for why). Every token is
// decoded in one of two ways, each the same whatever else is running:
// - a prompt's body (all but its last token) in pieces of 2 to MAX_PIECE tokens per sequence, the
//   prompts of several sequences in one batch, each padded after its real tokens with throwaway
//   tokens to the round's common share (then erased), so the batch is one ubatch;
// - the prompt's last token and every generated token in a step, in which a run of consecutive
//   sequences decodes exactly one token each in one batch (idle ones in the run a throwaway
//   "ballast" token), never fewer than two.
// llama.cpp's CPU kernels give a token the same numbers in any such arrangement (measured,
// bench/determinism-probe.ts), so a request's output is a function of the request alone, and a
// body a sequence decoded for an earlier request is as good as decoding it again.
import { waitForLockRelease } from 'lifecycle-utils';
import type { BatchingOptions, LlamaContext, LlamaContextSequence, PrioritizedBatchItem, Token } from 'node-llama-cpp';
import { queuedSequenceIds } from './internals';

/**
 * The most body tokens one sequence decodes in one ubatch. At 64 or more llama.cpp's CPU flash
 * attention switches to a tiled kernel (GGML_FA_TILE_Q in the llama.cpp node-llama-cpp 3.21.1
 * ships) that rounds differently, so a share of 63 or fewer keeps one kernel for every body token
 * whatever the chunking; pieces of 30 and of 63 give the same numbers, 64 and a single chunk other ones.
 */
export const MAX_PIECE = 63;

/** A request decoding on one sequence: its generator yields one token per step. */
export interface Lane {
  iterator: AsyncGenerator<Token, void, Token | Token[] | undefined>;
}

/** A point in a body where decoding pauses for its owner, e.g. the shared prefix is complete: snapshot it. */
export interface BodyStop {
  /** Offset into the admission's body tokens. */
  at: number;
  reached(): Promise<void>;
  /**
   * Admit again before decoding on: requests waiting for this stop (a snapshot of the shared prefix)
   * can then start, and their bodies join the rest of this one in the same rounds.
   */
  readmit?: boolean;
}

/** A request just put on a sequence: the body tokens the sequence has yet to decode, then its lane. */
export interface Admission<L extends Lane> {
  lane: L;
  /** Decoded in pieces before the lane's first step (which decodes the prompt's last token). */
  body: readonly Token[];
  /** In order of `at`; decoding pauses at each and awaits `reached` (no padding is held then). */
  stops: readonly BodyStop[];
  /** Called when the body is given up before the end (the lane cancelled or failed); stops not reached are not called. */
  abandon(): void;
}

/** What the loop needs from its owner (LlamaBackend). */
export interface LaneSource<L extends Lane> {
  readonly context: LlamaContext;
  readonly sequences: readonly LlamaContextSequence[];
  /** True once the owner is disposed: the loop stops and ends its lanes. */
  stopped(): boolean;
  /**
   * Starts queued requests on the free sequences `free`; returns them by sequence index. Which
   * request goes to which free sequence is the owner's choice: it does not change any output. A
   * request may be left queued for a later call (the loop calls again once the bodies admitted
   * now are decoded, before the next step).
   */
  admit(free: number[]): Promise<Map<number, Admission<L>>>;
  /** False when a lane's request was cancelled: its body is given up (advance settles it). */
  wanted(lane: L): boolean;
  /** Takes a lane's step outcome; true when the lane is finished and its sequence free again. */
  advance(lane: L, outcome: PromiseSettledResult<IteratorResult<Token, void>>): Promise<boolean>;
  /** Counts what the loop did. */
  onStep(ballastTokens: number): void;
  onBodyRound(paddingTokens: number): void;
}

/** A throwaway token (ballast, padding); any valid id does, its output is never used. */
const THROWAWAY_TOKEN = 0 as Token;

/**
 * The batching a lockstep context needs. Items in order of sequence id, each whole: llama.cpp
 * splits a batch over several KV streams into ubatches of consecutive, increasing sequence ids in
 * batch order (llama_batch_allocr::split_equal), so a step queued as 0, 3, 1, 2 (the order the
 * sequences' async paths happened to reach node-llama-cpp's queue) would decode sequence 3 in a
 * ubatch of its own. The strategy sees the queue's items in queue order and not their sequence, so
 * it reads the ids from the context's queue (an internal of node-llama-cpp, internals.ts; the
 * lockstep tests fail if this stops holding).
 */
export function lockstepBatching(context: () => LlamaContext | undefined): BatchingOptions {
  return {
    itemPrioritizationStrategy: ({ items, size }) => {
      const current = context();
      const queued = current ? queuedSequenceIds(current) : undefined;
      const order = items.map((item, i) => ({ item, sequence: queued?.length === items.length ? queued[i]! : i }));
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
    },
  };
}

/**
 * Runs until no lane is active and nothing is queued. Each round: free sequences take queued
 * requests and their bodies are decoded (admitting again while that frees requests to start), then
 * one step.
 */
export async function runSteps<L extends Lane>(source: LaneSource<L>): Promise<void> {
  const lanes: (L | null)[] = source.sequences.map(() => null);
  const bodies = new Map<number, Body<L>>();
  let failure: unknown = new Error('the model backend stopped');
  try {
    while (!source.stopped()) {
      await admitAndDecode(source, lanes, bodies);
      if (source.stopped()) break;
      if (lanes.every((lane) => lane === null)) return;
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
    for (const body of bodies.values()) body.admission.abandon();
    for (const lane of lanes) if (lane) await source.advance(lane, { status: 'rejected', reason: failure });
  }
}

interface Body<L extends Lane> {
  admission: Admission<L>;
  /** Body tokens decoded so far. */
  at: number;
  /** Stops not yet reached. */
  stops: BodyStop[];
}

async function admitAndDecode<L extends Lane>(source: LaneSource<L>, lanes: (L | null)[], bodies: Map<number, Body<L>>): Promise<void> {
  // Stopped (disposed) while bodies remain: decodeBodies returns at once, so without this check the
  // loop would spin on resolved promises and starve the event loop.
  while (!source.stopped()) {
    const free = lanes.flatMap((lane, i) => (lane === null ? [i] : []));
    const admitted = free.length > 0 ? await source.admit(free) : new Map<number, Admission<L>>();
    for (const [i, admission] of admitted) {
      lanes[i] = admission.lane;
      bodies.set(i, { admission, at: 0, stops: [...admission.stops] });
    }
    if (bodies.size === 0) return;
    await decodeBodies(source, lanes, bodies);
  }
}

/**
 * Decodes every body to its end in rounds of one ubatch, or until a `readmit` stop is reached; a
 * body whose lane is unwanted or fails is given up.
 */
async function decodeBodies<L extends Lane>(source: LaneSource<L>, lanes: (L | null)[], bodies: Map<number, Body<L>>): Promise<void> {
  const { context, sequences } = source;
  const giveUp = async (i: number, reason: unknown) => {
    const body = bodies.get(i)!;
    bodies.delete(i);
    body.admission.abandon();
    await source.advance(body.admission.lane, { status: 'rejected', reason });
    lanes[i] = null;
  };
  while (bodies.size > 0 && !source.stopped()) {
    let readmit = false;
    for (const [i, body] of [...bodies]) {
      // Stops at the current offset (a body that starts complete, or one just reached).
      while (body.stops[0] && body.stops[0].at <= body.at) {
        const stop = body.stops.shift()!;
        readmit ||= stop.readmit === true;
        try {
          await stop.reached();
        } catch (e) {
          await giveUp(i, e);
          break;
        }
      }
      if (!bodies.has(i)) continue;
      if (body.at >= body.admission.body.length) bodies.delete(i);
      else if (!source.wanted(body.admission.lane)) await giveUp(i, new Error('cancelled'));
    }
    if (bodies.size === 0 || readmit) break;
    // Every body takes part with its next piece (never past its next stop); all are padded to the
    // longest, so the batch is one ubatch with the same share per sequence.
    const share = Math.max(2, Math.min(MAX_PIECE, Math.floor(context.batchSize / bodies.size)));
    const pieces = [...bodies].map(([i, body]) => {
      const end = Math.min(body.stops[0]?.at ?? Infinity, body.admission.body.length);
      return { i, body, tokens: body.admission.body.slice(body.at, Math.min(end, body.at + share)) };
    });
    const width = Math.max(2, ...pieces.map((p) => p.tokens.length));
    // A sequence without room for the padding (its context nearly full) waits for a round of its own.
    const room = (i: number) => context.contextSize - 1 - sequences[i]!.nextTokenIndex;
    const fits = pieces.filter((p) => room(p.i) >= width);
    const round = fits.length > 0 ? fits : [pieces[0]!];
    const roundWidth = fits.length > 0 ? width : Math.max(round[0]!.tokens.length, Math.min(2, room(round[0]!.i)));
    await waitForLockRelease([context, 'context']);
    const starts = round.map((p) => sequences[p.i]!.nextTokenIndex);
    const outcomes = await Promise.allSettled(
      round.map((p) => sequences[p.i]!.evaluateWithoutGeneratingNewTokens([...p.tokens, ...Array<Token>(roundWidth - p.tokens.length).fill(THROWAWAY_TOKEN)])),
    );
    let padding = 0;
    for (const [k, p] of round.entries()) {
      const sequence = sequences[p.i]!;
      const end = starts[k]! + p.tokens.length;
      try {
        if (outcomes[k]!.status === 'rejected') throw (outcomes[k] as PromiseRejectedResult).reason;
        padding += roundWidth - p.tokens.length;
        if (sequence.nextTokenIndex > end) await sequence.eraseContextTokenRanges([{ start: end, end: sequence.nextTokenIndex }]);
        p.body.at += p.tokens.length;
      } catch (e) {
        await giveUp(p.i, e);
      }
    }
    source.onBodyRound(padding);
  }
}

/**
 * One step: every active lane asks for its next token, and every idle sequence between the lowest
 * and the highest active one decodes a ballast token, all queued in the same tick, so node-llama-cpp
 * dispatches them as one batch (of consecutive sequence ids: one ubatch). A lane alone is joined by
 * a neighbour's ballast that also asks for logits, so every matmul, the output layer's included,
 * has at least two columns.
 */
async function step<L extends Lane>(source: LaneSource<L>, lanes: readonly (L | null)[]): Promise<PromiseSettledResult<IteratorResult<Token, void>>[]> {
  const { context, sequences } = source;
  const active = lanes.flatMap((lane, i) => (lane ? [i] : []));
  let low = active[0]!;
  let high = active.at(-1)!;
  const alone = active.length === 1;
  if (alone && sequences.length > 1) {
    if (high + 1 < sequences.length) high++;
    else low--;
  }
  let logitsBallast = alone;
  // Keep ballast from filling a sequence: what a sequence holds beyond the ballast (its last
  // prompt, reused by a later request) stays unless the context is nearly full.
  for (let i = low; i <= high; i++) {
    const sequence = sequences[i]!;
    if (lanes[i] === null && sequence.nextTokenIndex + 2 >= sequence.contextSize) await sequence.clearHistory();
  }
  // node-llama-cpp resolves a step's tokens before its batch loop lets go of the context (it runs
  // after-batch work under the lock, then takes whatever is queued by then into another batch):
  // queue the next step only once the loop is done, so timing cannot split a step.
  await waitForLockRelease([context, 'context']);
  const ballasts: AsyncGenerator<Token, void, Token | Token[] | undefined>[] = [];
  const pending = lanes.map((lane, i): Promise<unknown> | undefined => {
    if (lane) return lane.iterator.next();
    if (i < low || i > high) return undefined;
    const sequence = sequences[i]!;
    if (logitsBallast) {
      logitsBallast = false;
      const ballast = sequence.evaluate([THROWAWAY_TOKEN], { temperature: 0 });
      ballasts.push(ballast);
      return ballast.next();
    }
    return sequence.evaluateWithoutGeneratingNewTokens([THROWAWAY_TOKEN]);
  });
  const outcomes = await Promise.allSettled(pending.map((p) => p ?? Promise.resolve()));
  // Ending a ballast whose step failed rejects with that same failure, which `outcomes` reports.
  for (const ballast of ballasts) await ballast.return(undefined).catch(() => undefined);
  source.onStep(high - low + 1 - active.length);
  return outcomes as PromiseSettledResult<IteratorResult<Token, void>>[];
}
