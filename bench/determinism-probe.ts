// What changes a request's numbers on llama.cpp's CPU backend: the measurements behind the lockstep
// schedule (electron/llama/lockstep.ts). One request ("the lane", on sequence 0) is greedily decoded
// for 20 steps beside other sequences in various arrangements; its top-3 probabilities at every step
// are compared with a reference arrangement. Any difference in the last bit shows.
//
//   npx tsx bench/determinism-probe.ts [--model FILE.gguf] [--threads 2]
//
// Default model: ../shared/models/stories260K.gguf (F32 weights: the kernel switch shows there; the
// Q8_0 synthetic models are less sensitive to it, but see the chunk sizes below). Prints one line per arrangement: IDENTICAL, or the
// first step that differs. Measured on this project's machines (2-core x86 with AVX-512):
//   alone vs beside 1 other               differs   (a one-token batch takes ggml's vec_dot path)
//   beside 1 vs beside 3                  IDENTICAL (two or more columns: tinyBLAS, per element the same)
//   beside 1 vs on sequence 2 of 4        IDENTICAL (the sequence a request runs on does not matter)
//   beside 1 vs prompts decoded together  IDENTICAL
//   beside 1 vs prompt in chunks 5 + rest IDENTICAL (chunk boundaries do not matter)
//   beside 1 vs other on sequence 4       differs   (a ubatch spans consecutive sequence ids only)
//   beside 1 vs the other stopping        differs   (then alone again)
//   beside 1 vs alone + ballast on seq 1  IDENTICAL (a throwaway token restores the two columns)
// Not a probe arrangement, measured by hand on the Q8_0 tiny synthetic model (a 298-token prompt,
// the probability of the next greedy token after it): the prompt in one chunk of 297, in 100+100+97,
// 200+97, 233+64 or beside another sequence's equal share all give 0.333581805229; in 243+54,
// 257+40 (also beside 40 throwaway tokens on another sequence) or 248+49 it is 0.3398 to 0.3457.
// A share under 64 tokens per sequence takes another kernel, so lockstep never lets other prompts
// change how a prompt is chunked (an earlier try decoded admitted prompts together in equal,
// padded rounds: texts changed; test/model/llama-backend.test.ts keeps that case).
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { waitForLockRelease } from 'lifecycle-utils';
import { getLlama, type LlamaContextSequence, type Token } from 'node-llama-cpp';

const { values } = parseArgs({ options: { model: { type: 'string', default: '../shared/models/stories260K.gguf' }, threads: { type: 'string', default: '2' } } });
const llama = await getLlama({ gpu: false });
const model = await llama.loadModel({ modelPath: resolve(values.model) });
const context = await model.createContext({ contextSize: 1024, sequences: 5, threads: Number(values.threads) });
const sequences = Array.from({ length: 5 }, () => context.getSequence());
const prompts = [
  'Once upon a time there was a little girl named Lily who loved to play',
  'The big dog ran to the park and saw a ball. He wanted',
  'Tom and Sam went to the store to buy some candy for',
  'One day a bird flew into the garden where',
].map((text) => model.tokenize(text, true));

interface Lane {
  sequence: LlamaContextSequence;
  prompt: Token[];
  steps: number;
}
interface Arrangement {
  /** Decode the lanes' prompts in one batch instead of one after another. */
  promptsTogether?: boolean;
  /** Decode the first lane's prompt as its first `chunk` tokens, then the rest. */
  chunk?: number;
  /** When one lane is left, a throwaway token on this sequence keeps the step at two tokens. */
  ballast?: number;
}

/** Greedy steps in lockstep (every lane's token of a step in one batch); the first lane's top-3 probabilities per step. */
async function probe(lanes: Lane[], how: Arrangement = {}): Promise<string[]> {
  for (const s of sequences) await s.clearHistory();
  const bodies = lanes.map((l) => l.prompt.slice(0, -1));
  if (how.promptsTogether) await Promise.all(lanes.map((l, i) => l.sequence.evaluateWithoutGeneratingNewTokens(bodies[i]!)));
  else {
    for (const [i, l] of lanes.entries()) {
      const cut = i === 0 && how.chunk ? how.chunk : 0;
      if (cut > 0) await l.sequence.evaluateWithoutGeneratingNewTokens(bodies[i]!.slice(0, cut));
      await l.sequence.evaluateWithoutGeneratingNewTokens(bodies[i]!.slice(cut));
    }
  }
  const iterators = lanes.map((l) => l.sequence.evaluateWithMetadata([l.prompt.at(-1)!], { probabilities: true }, { temperature: 0 })[Symbol.asyncIterator]());
  const out: string[] = [];
  for (let step = 0; ; step++) {
    const active = lanes.flatMap((l, i) => (step < l.steps ? [i] : []));
    if (active.length === 0) break;
    await waitForLockRelease([context, 'context']);
    const ballast = how.ballast !== undefined && active.length === 1 ? sequences[how.ballast]!.evaluate([prompts[0]![1]!], { temperature: 0 }) : undefined;
    const pending: Promise<unknown>[] = active.map((i) => iterators[i]!.next());
    if (ballast) pending.push(ballast.next());
    const results = await Promise.all(pending);
    await ballast?.return(undefined);
    if (active[0] === 0) {
      const first = results[0] as IteratorResult<{ probabilities?: Map<Token, number> }>;
      if (!first.done) out.push([...(first.value.probabilities ?? new Map<Token, number>())].slice(0, 3).map(([t, p]) => `${t}:${p}`).join(','));
    }
  }
  for (const it of iterators) await it.return?.(undefined);
  return out;
}

const lane = (i: number, steps = 20, on = i): Lane => ({ sequence: sequences[on]!, prompt: prompts[i]!, steps });
function compare(name: string, a: string[], b: string[]): void {
  const at = a.findIndex((x, i) => x !== b[i]);
  console.log(name.padEnd(40), at < 0 && a.length === b.length ? 'IDENTICAL' : `differs from step ${at < 0 ? Math.min(a.length, b.length) : at}`);
}

const alone = await probe([lane(0)]);
const beside1 = await probe([lane(0), lane(1)]);
compare('alone vs alone again', alone, await probe([lane(0)]));
compare('alone vs beside 1 other', alone, beside1);
compare('beside 1 vs beside 3', beside1, await probe([lane(0), lane(1), lane(2), lane(3)]));
compare('beside 1 vs on sequence 2 of 4', beside1, await probe([lane(0, 20, 2), lane(1, 20, 0), lane(2, 20, 1), lane(3)]));
compare('beside 1 vs prompts decoded together', beside1, await probe([lane(0), lane(1), lane(2)], { promptsTogether: true }));
compare('beside 1 vs prompt in chunks 5 + rest', beside1, await probe([lane(0), lane(1)], { chunk: 5 }));
compare('beside 1 vs other on sequence 4', beside1, await probe([lane(0), lane(1, 20, 4)]));
compare('beside 1 vs the other stopping at 5', beside1, await probe([lane(0), lane(1, 5)]));
compare('beside 1 vs the same + ballast on seq 1', beside1, await probe([lane(0), lane(1, 5)], { ballast: 1 }));
compare('beside 1 vs alone + ballast on seq 1', beside1, await probe([lane(0)], { ballast: 1 }));
await context.dispose();
await model.dispose();
