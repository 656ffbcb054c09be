// What changes a token's numbers on llama.cpp's CPU backend: the measurements behind the lockstep
// schedule (electron/llama/lockstep.ts). Prints one line per arrangement: IDENTICAL to its
// reference, or where it first differs (any difference in the last bit shows).
//
//   npx tsx bench/determinism-probe.ts [--model FILE.gguf] [--threads 2]
//
// Default: both the F32 stories260K (../shared/models/stories260K.gguf, when present) and the Q8_0
// tiny synthetic model. Two parts per model:
//
// Steps. One request ("the lane", on sequence 0) is greedily decoded for 20 steps beside other
// sequences in various arrangements; its top-3 probabilities at every step are compared with the
// lane beside one other sequence. Measured on this project's machines (2-core x86, AVX-512):
//   alone vs beside 1 other               differs   (a one-token batch takes ggml's vec_dot path)
//   beside 1 vs beside 3                  IDENTICAL (two or more columns: tinyBLAS, per element the same)
//   beside 1 vs on sequence 2 of 4        IDENTICAL (the sequence a request runs on does not matter)
//   beside 1 vs other on sequence 4       differs   (a ubatch spans consecutive sequence ids only)
//   beside 1 vs the other stopping        differs   (then alone again)
//   beside 1 vs alone + ballast on seq 1  IDENTICAL (a throwaway token restores the two columns)
//
// Prompt pieces. A ~180-token prompt's body is decoded in various ways, then the next-token
// probabilities after its last two tokens are compared with the body in pieces of 50. On the Q8_0
// model (head size 16, so flash attention may take its tiled kernel):
//   pieces of 30 / 63, on another sequence, beside another sequence's pieces, padded after its
//   real tokens with throwaway ones then erased, reusing a held prompt up to the common prefix
//   (then decoding the rest), the last token in a step of 4 sequences, a token decoded in a step
//   and then one more, 1 thread instead of 2                                      IDENTICAL
//   pieces of 64, one chunk                                                       differ
// (64 or more tokens of one sequence in a ubatch take the tiled kernel: GGML_FA_TILE_Q.) On F32
// stories260K (head size 8: no tiled kernel) every piece size agrees, and so do the other
// arrangements, except a one-token piece (one column: vec_dot) and the next-token numbers of a
// batch with one output row (here the reference's own 2-token tail, against 4 rows in a step);
// what a step leaves in the KV cache is the same ("a token decoded in a step, then one more").
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { waitForLockRelease } from 'lifecycle-utils';
import { getLlama, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel, type Token } from 'node-llama-cpp';
import { ensureSyntheticModel } from '../tools/synthetic-gguf';

const { values } = parseArgs({ options: { model: { type: 'string' }, threads: { type: 'string', default: '2' } } });
const threads = Number(values.threads);
const stories = resolve('../shared/models/stories260K.gguf');
const models = values.model ? [resolve(values.model)] : [...(existsSync(stories) ? [stories] : []), await ensureSyntheticModel('tiny')];
const llama = await getLlama({ gpu: false });

const top3 = (probabilities: Map<Token, number> | undefined) => [...(probabilities ?? new Map<Token, number>())].slice(0, 3).map(([t, p]) => `${t}:${p}`).join(',');

function compare(name: string, a: string[], b: string[]): void {
  const at = a.findIndex((x, i) => x !== b[i]);
  console.log(`  ${name.padEnd(52)} ${at < 0 && a.length === b.length ? 'IDENTICAL' : a.length === 1 ? 'differs' : `differs from step ${at < 0 ? Math.min(a.length, b.length) : at}`}`);
}

async function steps(model: LlamaModel): Promise<void> {
  const context = await model.createContext({ contextSize: 1024, sequences: 5, threads });
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
  /** Greedy steps in lockstep (every lane's token of a step in one batch); the first lane's top-3 probabilities per step. */
  async function probe(lanes: Lane[], ballastOn?: number): Promise<string[]> {
    for (const s of sequences) await s.clearHistory();
    for (const l of lanes) await l.sequence.evaluateWithoutGeneratingNewTokens(l.prompt.slice(0, -1));
    const iterators = lanes.map((l) => l.sequence.evaluateWithMetadata([l.prompt.at(-1)!], { probabilities: true }, { temperature: 0 })[Symbol.asyncIterator]());
    const out: string[] = [];
    for (let step = 0; ; step++) {
      const active = lanes.flatMap((l, i) => (step < l.steps ? [i] : []));
      if (active.length === 0) break;
      await waitForLockRelease([context, 'context']);
      const ballast = ballastOn !== undefined && active.length === 1 ? sequences[ballastOn]!.evaluate([prompts[0]![1]!], { temperature: 0 }) : undefined;
      const pending: Promise<unknown>[] = active.map((i) => iterators[i]!.next());
      if (ballast) pending.push(ballast.next());
      const results = await Promise.all(pending);
      await ballast?.return(undefined);
      if (active[0] === 0) {
        const first = results[0] as IteratorResult<{ probabilities?: Map<Token, number> }>;
        if (!first.done) out.push(top3(first.value.probabilities));
      }
    }
    for (const it of iterators) await it.return?.(undefined);
    return out;
  }
  const lane = (i: number, count = 20, on = i): Lane => ({ sequence: sequences[on]!, prompt: prompts[i]!, steps: count });
  console.log(' steps (the lane beside 1 other is the reference):');
  const alone = await probe([lane(0)]);
  const beside1 = await probe([lane(0), lane(1)]);
  compare('alone vs alone again', alone, await probe([lane(0)]));
  compare('alone vs beside 1 other', alone, beside1);
  compare('beside 1 vs beside 3', beside1, await probe([lane(0), lane(1), lane(2), lane(3)]));
  compare('beside 1 vs on sequence 2 of 4', beside1, await probe([lane(0, 20, 2), lane(1, 20, 0), lane(2, 20, 1), lane(3)]));
  compare('beside 1 vs other on sequence 4', beside1, await probe([lane(0), lane(1, 20, 4)]));
  compare('beside 1 vs the other stopping at 5', beside1, await probe([lane(0), lane(1, 5)]));
  compare('beside 1 vs the same + ballast on seq 1', beside1, await probe([lane(0), lane(1, 5)], 1));
  compare('beside 1 vs alone + ballast on seq 1', beside1, await probe([lane(0)], 1));
  await context.dispose();
}

async function pieces(model: LlamaModel, contextThreads: (n: number) => Promise<LlamaContext>): Promise<void> {
  const context = await contextThreads(threads);
  const sequences = Array.from({ length: 4 }, () => context.getSequence());
  const common = 'Classify the sentiment of the movie review sentence as negative or positive. ' + 'The acting was a quiet delight that carried the whole film along. '.repeat(12);
  const prompt = model.tokenize(`${common}Sentence: the pacing felt flat. Label:`);
  const earlier = model.tokenize(`${common}Sentence: the editing was inspired throughout, really. Label:`);
  const other = model.tokenize('Once upon a time there was a dog who liked to run around in the garden all day long. '.repeat(6));
  const body = prompt.slice(0, -2);
  const tail = prompt.slice(-2);
  const next = async (s: LlamaContextSequence, tokens: Token[]) => {
    const it = s.evaluateWithMetadata(tokens, { probabilities: true }, { temperature: 0 });
    const r = await it.next();
    await it.return(undefined as never);
    return top3((r.value as { probabilities?: Map<Token, number> }).probabilities);
  };
  /** In pieces of `size`, none of one token (the last two pieces share what would leave one). */
  const decode = async (s: LlamaContextSequence, tokens: Token[], size: number) => {
    for (let i = 0; i < tokens.length; ) {
      const n = tokens.length - i - size === 1 ? size - 1 : size;
      await s.evaluateWithoutGeneratingNewTokens(tokens.slice(i, i + n));
      i += n;
    }
  };
  /** One token per sequence in one batch; the top 3 of sequence 0's next token. */
  const step = async (tokens: Token[]) => {
    await waitForLockRelease([context, 'context']);
    const its = sequences.map((s, i) => s.evaluateWithMetadata([tokens[i]!], { probabilities: true }, { temperature: 0 }));
    const rs = await Promise.all(its.map((it) => it.next()));
    for (const it of its) await it.return(undefined as never);
    return top3((rs[0]!.value as { probabilities?: Map<Token, number> }).probabilities);
  };
  const fresh = async () => {
    for (const s of sequences) await s.clearHistory();
    for (const s of sequences.slice(1)) await s.evaluateWithoutGeneratingNewTokens(other.slice(0, 20));
  };
  const run = async (how: () => Promise<string>) => {
    await fresh();
    return [await how()];
  };
  const [s0] = sequences as [LlamaContextSequence];
  const o = other[20]!;
  console.log(` prompt pieces (${prompt.length} tokens; the body in pieces of 50 is the reference):`);
  const reference = await run(async () => (await decode(s0, body, 50), next(s0, tail)));
  for (const size of [30, 63, 64, 1000]) compare(size === 1000 ? 'one chunk' : `pieces of ${size}`, await run(async () => (await decode(s0, body, size), next(s0, tail))), reference);
  compare('pieces of 50, then the last body token alone', await run(async () => (await decode(s0, body.slice(0, -1), 50), await decode(s0, body.slice(-1), 50), next(s0, tail))), reference);
  compare('on sequence 2', await run(async () => (await sequences[2]!.clearHistory(), await decode(sequences[2]!, body, 50), next(sequences[2]!, tail))), reference);
  compare('beside another sequence, pieces of 40 each', await run(async () => {
    for (let i = 0; i < body.length; i += 40) {
      await waitForLockRelease([context, 'context']);
      await Promise.all([s0.evaluateWithoutGeneratingNewTokens(body.slice(i, i + 40)), sequences[1]!.evaluateWithoutGeneratingNewTokens(other.slice(0, 40))]);
    }
    return next(s0, tail);
  }), reference);
  compare('padded to 50 with throwaway tokens, erased', await run(async () => {
    for (let i = 0; i < body.length; i += 40) {
      const piece = body.slice(i, i + 40);
      const start = s0.nextTokenIndex;
      await s0.evaluateWithoutGeneratingNewTokens([...piece, ...other.slice(0, 50 - piece.length)]);
      await s0.eraseContextTokenRanges([{ start: start + piece.length, end: s0.nextTokenIndex }]);
    }
    return next(s0, tail);
  }), reference);
  compare('an earlier prompt held, kept up to the common prefix', await run(async () => {
    await decode(s0, earlier, 50);
    let lcp = 0;
    while (prompt[lcp] === earlier[lcp]) lcp++;
    await s0.eraseContextTokenRanges([{ start: lcp, end: s0.nextTokenIndex }]);
    await decode(s0, prompt.slice(lcp, -2), 50);
    return next(s0, tail);
  }), reference);
  compare('the last token in a step of 4 sequences', await run(async () => (await decode(s0, prompt.slice(0, -1), 50), step([prompt.at(-1)!, o, o, o]))), reference);
  // What a token decoded in a step leaves in the cache: one more token after it, in a step either way.
  const afterPiece = await run(async () => (await decode(s0, prompt, 50), step([o, o, o, o])));
  compare('a token decoded in a step, then one more', await run(async () => (await decode(s0, prompt.slice(0, -1), 50), await step([prompt.at(-1)!, o, o, o]), step([o, o, o, o]))), afterPiece);
  await context.dispose();
  const single = await contextThreads(threads === 1 ? 2 : 1);
  const s = single.getSequence();
  await decode(s, body, 50);
  compare(`${threads === 1 ? 2 : 1} thread${threads === 1 ? 's' : ''} instead of ${threads}`, [await next(s, tail)], reference);
  await single.dispose();
}

async function probeModel(llama: Llama, path: string): Promise<void> {
  console.log(path);
  const model = await llama.loadModel({ modelPath: path });
  try {
    await steps(model);
    await pieces(model, (n) => model.createContext({ contextSize: 1024, sequences: 4, threads: n }));
  } finally {
    await model.dispose();
  }
}

for (const path of models) await probeModel(llama, path);
await llama.dispose();
