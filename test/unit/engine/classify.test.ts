import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryGenerationCache, classify, generateRunExamples, zeroShot } from '../../../electron/engine';
import { loadBuiltInTasks } from '../../../electron/tasks';
import { UserError, isAbortError } from '../../../electron/common/errors';
import { type TatraEvent, type TatraSettings, TatraResult } from '../../../electron/common/tatra';
import { ScriptedBackend, evaluatedCandidate, politeScript, requestStage, requestedLabel } from '../../helpers/scripted-backend';

const tasks = new Map((await loadBuiltInTasks(join(import.meta.dirname, '../../../tasks'))).map((t) => [t.id, t]));
const sst2 = tasks.get('sst2')!;
const settings: TatraSettings = { n: 2, k: 4, r: 3, seed: 5, scope: 'run' };

describe('classify with a scripted backend', () => {
  it('runs r runs of examples, paraphrases and evaluation, and votes', async () => {
    // Originals say positive, paraphrases negative in run 0 only.
    const backend = new ScriptedBackend(politeScript({ answer: (c) => (c.startsWith('Paraphrase') && c.includes('run0') ? 'negative' : 'positive') }));
    const result = await classify({ task: sst2, input: 'a fine film', settings, generator: backend, evaluator: backend });
    expect(() => TatraResult.parse(result)).not.toThrow();
    expect(result.label).toBe('positive');
    expect(result.confidence).toBe(1);
    expect(result.votes).toEqual({ negative: 0, positive: 9 });
    expect(result.runs).toHaveLength(3);
    for (const run of result.runs) {
      expect(run.examples).toHaveLength(4);
      expect(run.examples.filter((e) => e.label === 'positive')).toHaveLength(2);
      expect(run.paraphrases).toEqual(['Paraphrase 1 of a fine film', 'Paraphrase 2 of a fine film']);
      expect(run.predictions.map((p) => p.variant)).toEqual([0, 1, 2]);
      expect(run.fallback).toBeNull();
    }
    expect(result.stages.examples.calls).toBe(6);
    expect(result.stages.paraphrases.calls).toBe(3);
    expect(result.stages.evaluation.calls).toBe(9);
  });

  it('seeds: run j uses seed + 10000·j, label i adds i; sampling as the reference code', async () => {
    const backend = new ScriptedBackend(politeScript({ firstLabel: 'negative' }));
    await classify({ task: sst2, input: 'x y z', settings, generator: backend, evaluator: backend });
    const ex = backend.stage('examples');
    expect(ex.map((r) => [requestedLabel(r), r.seed])).toEqual([
      ['negative', 5], ['positive', 6],
      ['negative', 10005], ['positive', 10006],
      ['negative', 20005], ['positive', 20006],
    ]);
    expect(ex.every((r) => r.temperature === 0.6 && r.topP === 0.9 && r.grammar)).toBe(true);
    const para = backend.stage('paraphrases');
    expect(para.map((r) => r.seed)).toEqual([5, 10005, 20005]);
    expect(para.every((r) => r.temperature === 0.9 && r.topP === 0.95 && r.maxTokens === 256)).toBe(true);
    const ev = backend.stage('evaluation');
    expect(ev.every((r) => r.temperature === 0 && r.maxTokens === 4 && r.grammar === 'root ::= "negative" | "positive"')).toBe(true);
    // Every evaluation shares the run's examples as prefix.
    for (const r of ev) expect(r.prompt.user.slice(r.sharedUserPrefixLength).startsWith('Sentence: "')).toBe(true);
  });

  it('batches: all runs\' example calls in one generate and all paraphrase calls in another, sent together; then every evaluation', async () => {
    const backend = new ScriptedBackend(politeScript({ firstLabel: 'negative' }));
    await classify({ task: sst2, input: 'x', settings, generator: backend, evaluator: backend });
    const shapes = backend.batches.map((b) => [b.length, requestStage(b[0]!)]);
    expect(shapes).toHaveLength(3);
    expect(shapes.slice(0, 2)).toEqual(expect.arrayContaining([[6, 'examples'], [3, 'paraphrases']]));
    expect(shapes[2]).toEqual([9, 'evaluation']);
  });

  it('the two generator batches are in flight at the same time', async () => {
    // Each batch's first request waits until the other batch's has arrived: the two are in flight
    // together, or the test ends at its timeout.
    let inFlight = 0;
    let most = 0;
    let bothArrived!: () => void;
    const together = new Promise<void>((r) => (bothArrived = r));
    const script = politeScript({ firstLabel: 'negative' });
    const backend = new ScriptedBackend(async (req, ctx) => {
      if (ctx.index === 0) {
        inFlight++;
        most = Math.max(most, inFlight);
        if (inFlight === 2) bothArrived();
        await together;
        inFlight--;
      }
      return script(req, ctx);
    });
    await classify({ task: sst2, input: 'x', settings, generator: backend, evaluator: backend });
    expect(most).toBe(2);
  });

  it('emits events in order: run-starts, each run\'s examples and paraphrases as they are ready, predictions, done', async () => {
    const backend = new ScriptedBackend(politeScript({ firstLabel: 'negative' }));
    const events: TatraEvent[] = [];
    await classify({ task: sst2, input: 'x', settings: { ...settings, r: 2 }, generator: backend, evaluator: backend, onEvent: (e) => events.push(e) });
    const compact = events.map((e) => {
      if (e.type === 'examples') return `examples:${e.run}:${e.label}`;
      if (e.type === 'prediction') return `prediction:${e.run}:${e.prediction.variant}`;
      if (e.type === 'run-start' || e.type === 'paraphrases') return `${e.type}:${e.run}`;
      return e.type;
    });
    // Examples and paraphrases are generated concurrently and announced per run as they finish,
    // so the two kinds may interleave; everything else is ordered.
    expect(compact.slice(0, 2)).toEqual(['run-start:0', 'run-start:1']);
    const generated = compact.slice(2, 8);
    expect([...generated].sort()).toEqual(['examples:0:negative', 'examples:0:positive', 'examples:1:negative', 'examples:1:positive', 'paraphrases:0', 'paraphrases:1']);
    for (const run of [0, 1]) {
      // A run's label groups come together, in label order.
      const at = generated.indexOf(`examples:${run}:negative`);
      expect(generated[at + 1]).toBe(`examples:${run}:positive`);
    }
    expect([...compact.slice(8, 14)].sort()).toEqual(['prediction:0:0', 'prediction:0:1', 'prediction:0:2', 'prediction:1:0', 'prediction:1:1', 'prediction:1:2']);
    expect(compact.slice(14)).toEqual(['done']);
    const first = events.find((e) => e.type === 'run-start');
    expect(first).toEqual({ type: 'run-start', run: 0, seed: 5 });
  });

  it('announces a run\'s examples before the generator has finished the other runs', async () => {
    const log: string[] = [];
    const polite = politeScript({ firstLabel: 'negative' });
    const backend = new ScriptedBackend((req, ctx) => {
      if (ctx.stage === 'examples') log.push(`generate:examples:seed${req.seed}`);
      return polite(req, ctx);
    });
    await classify({
      task: sst2, input: 'x', settings: { ...settings, r: 2 }, generator: backend, evaluator: backend,
      onEvent: (e) => (e.type === 'examples' ? log.push(`event:examples:${e.run}:${e.label}`) : undefined),
    });
    // Run 1's seeds are 10000 above run 0's; its example calls come after run 0's event.
    const run0Event = log.indexOf('event:examples:0:positive');
    const run1Call = log.findIndex((l) => l.startsWith('generate:examples:seed1000'));
    expect(run0Event).toBeGreaterThan(-1);
    expect(run1Call).toBeGreaterThan(run0Event);
  });

  it('stops promptly on abort with an AbortError', async () => {
    const controller = new AbortController();
    // Aborted as soon as the first calls are sent, each of which would take an hour: the
    // classification ends only if it stops waiting for them (else the test's timeout fails it).
    const backend = new ScriptedBackend(politeScript({ firstLabel: 'negative' }), { delayMs: 3_600_000 });
    const generate = backend.generate.bind(backend);
    backend.generate = (requests, onResult) => {
      const sent = generate(requests, onResult);
      controller.abort();
      return sent;
    };
    const err = await classify({ task: sst2, input: 'x', settings, generator: backend, evaluator: backend, signal: controller.signal }).catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    // Examples and paraphrases were sent; evaluation never was.
    expect(backend.stage('evaluation')).toHaveLength(0);
  });

  it('an already aborted signal generates nothing', async () => {
    const backend = new ScriptedBackend(politeScript({}));
    const controller = new AbortController();
    controller.abort();
    await expect(classify({ task: sst2, input: 'x', settings, generator: backend, evaluator: backend, signal: controller.signal })).rejects.toBe(controller.signal.reason);
    expect(backend.requests).toHaveLength(0);
  });

  it('paraphrase fallbacks are recorded: padded and original', async () => {
    const backend = new ScriptedBackend((req, ctx) => {
      if (ctx.stage === 'paraphrases') return req.seed === 5 ? '1. only one' : '   \n';
      return politeScript({ firstLabel: 'positive' })(req, ctx);
    });
    const result = await classify({ task: sst2, input: 'orig text', settings: { ...settings, r: 2 }, generator: backend, evaluator: backend });
    expect(result.runs[0]!.paraphrases).toEqual(['only one', 'only one']);
    expect(result.runs[0]!.fallback).toEqual({ kind: 'padded', parsed: 1, wanted: 2 });
    expect(result.runs[1]!.paraphrases).toEqual(['orig text', 'orig text']);
    expect(result.runs[1]!.fallback).toEqual({ kind: 'original', parsed: 0, wanted: 2 });
    expect(result.fallbacks).toBe(2);
    // Identical prompts (padding, copies of the original) are greedy: evaluated once, still three votes each.
    expect(result.runs[1]!.predictions).toHaveLength(3);
    // Run 0: original + one distinct paraphrase; run 1: the original only.
    expect(result.stages.evaluation.calls).toBe(2 + 1);
  });

  it('filtered examples are counted per run and in total', async () => {
    const backend = new ScriptedBackend((req, ctx) => {
      if (ctx.stage === 'examples') {
        const label = requestedLabel(req)!;
        const other = label === 'positive' ? 'negative' : 'positive';
        return `Example1:\nSentence: "good ${label} ${req.seed}"\nLabel: ${label}\n\nExample2:\nSentence: "bad"\nLabel: ${other}`;
      }
      return politeScript({ firstLabel: 'positive' })(req, ctx);
    });
    const result = await classify({ task: sst2, input: 'x', settings: { ...settings, r: 1 }, generator: backend, evaluator: backend });
    expect(result.runs[0]!.examples).toHaveLength(2);
    expect(result.runs[0]!.filtered.wrongLabel).toBe(2);
    expect(result.filteredExamples).toBe(2);
  });

  it('a re-run with another evaluator reuses cached generator output byte for byte', async () => {
    const cache = new MemoryGenerationCache();
    const generator = new ScriptedBackend(politeScript({}), { id: 'gen-A' });
    const evalA = new ScriptedBackend(politeScript({ firstLabel: 'positive' }), { id: 'eval-A' });
    const evalB = new ScriptedBackend(politeScript({ firstLabel: 'negative' }), { id: 'eval-B' });
    const a = await classify({ task: sst2, input: 'x', settings, generator, evaluator: evalA, cache });
    const before = generator.requests.length;
    const b = await classify({ task: sst2, input: 'x', settings, generator, evaluator: evalB, cache });
    expect(generator.requests.length).toBe(before);
    expect(b.runs.map((r) => r.examples)).toEqual(a.runs.map((r) => r.examples));
    expect(b.runs.map((r) => r.paraphrases)).toEqual(a.runs.map((r) => r.paraphrases));
    expect(b.runs.every((r) => r.examplesCached && r.paraphrasesCached)).toBe(true);
    expect(b.stages.examples.calls).toBe(0);
    expect(a.label).toBe('positive');
    expect(b.label).toBe('negative');
    // Evaluators saw the same prompts.
    expect(evalA.requests.map((r) => r.prompt)).toEqual(evalB.requests.map((r) => r.prompt));
    // Another generator does not hit the cache.
    const other = new ScriptedBackend(politeScript({}), { id: 'gen-B' });
    await classify({ task: sst2, input: 'x', settings, generator: other, evaluator: evalA, cache });
    expect(other.stage('examples')).toHaveLength(6);
  });

  it('scope input keys examples by input; scope run shares them across inputs', async () => {
    const cache = new MemoryGenerationCache();
    const gen = new ScriptedBackend(politeScript({ firstLabel: 'positive' }));
    await classify({ task: sst2, input: 'one', settings, generator: gen, evaluator: gen, cache });
    await classify({ task: sst2, input: 'two', settings, generator: gen, evaluator: gen, cache });
    expect(gen.stage('examples')).toHaveLength(6);
    await classify({ task: sst2, input: 'one', settings: { ...settings, scope: 'input' }, generator: gen, evaluator: gen, cache });
    await classify({ task: sst2, input: 'two', settings: { ...settings, scope: 'input' }, generator: gen, evaluator: gen, cache });
    expect(gen.stage('examples')).toHaveLength(18);
  });

  it('examplesForRun supplies shared run-scope examples', async () => {
    const gen = new ScriptedBackend(politeScript({ firstLabel: 'positive' }));
    const shared = await Promise.all([0, 1, 2].map((run) => generateRunExamples({ task: sst2, settings, run, generator: gen })));
    const count = gen.requests.length;
    const events: TatraEvent[] = [];
    const result = await classify({ task: sst2, input: 'x', settings, generator: gen, evaluator: gen, examplesForRun: async (run) => shared[run]!, onEvent: (e) => events.push(e) });
    // The shared examples are still shown, run by run and label by label.
    expect(events.filter((e) => e.type === 'examples')).toHaveLength(shared.length * 2);
    expect(gen.stage('examples')).toHaveLength(count);
    expect(result.runs.map((r) => r.examples)).toEqual(shared.map((s) => s.examples));
    // The job paid for the shared examples once; a row must not count them again.
    expect(shared.reduce((a, s) => a + s.stats.calls, 0)).toBeGreaterThan(0);
    expect(result.stages.examples.calls).toBe(0);
    expect(result.stages.examples.completionTokens).toBe(0);
  });

  it('an input too long for the evaluator is a user error before anything is generated', async () => {
    const backend = new ScriptedBackend(politeScript({}), { contextSize: 64 });
    const err = (await classify({ task: sst2, input: 'word '.repeat(200), settings, generator: backend, evaluator: backend }).catch((e: unknown) => e)) as UserError;
    expect(err).toBeInstanceOf(UserError);
    expect(err.code).toBe('input_too_long');
    expect(err.message).toMatch(/needs \d+ tokens.*holds 64/);
    expect(backend.requests).toHaveLength(0);
  });

  it('bad settings and an empty input are user errors', async () => {
    const backend = new ScriptedBackend(politeScript({}));
    await expect(classify({ task: sst2, input: 'x', settings: { ...settings, n: -1 }, generator: backend, evaluator: backend })).rejects.toBeInstanceOf(UserError);
    await expect(classify({ task: sst2, input: '   ', settings, generator: backend, evaluator: backend })).rejects.toThrow(/empty/);
  });

  it('math: votes over extracted, normalised answers', async () => {
    const gsm = tasks.get('gsm8k')!;
    const backend = new ScriptedBackend(politeScript({
      inputName: 'Problem',
      answerName: 'Answer',
      answer: (c) => (c.startsWith('Paraphrase 1') ? 'so\nFinal Answer: 1200' : c.startsWith('Paraphrase 2') ? 'Final Answer: 7' : 'steps\nFinal Answer: 1,200'),
    }));
    const result = await classify({ task: gsm, input: 'How much?', settings: { ...settings, r: 2 }, generator: backend, evaluator: backend });
    expect(result.label).toBe('1200');
    expect(result.votes).toEqual({ '1200': 4, '7': 2 });
    expect(backend.stage('examples')).toHaveLength(2);
    expect(result.runs[0]!.examples.length).toBe(4);
    expect(backend.stage('evaluation')[0]!.grammar).toContain('Final Answer: ');
  });

  it('math: an answer cut off before its final line is finished by a second call and still votes', async () => {
    const gsm = tasks.get('gsm8k')!;
    const backend = new ScriptedBackend((req, ctx) => {
      const polite = politeScript({ inputName: 'Problem', answerName: 'Answer' });
      if (ctx.stage !== 'evaluation') return polite(req, ctx);
      // The continuation call: the turn so far is prefilled and only the answer may follow.
      if (req.prompt.assistantPrefix !== undefined) return ' 12';
      return evaluatedCandidate(req).startsWith('Paraphrase') ? 'long reasoning that ran out of tokens' : 'short\nFinal Answer: 12';
    });
    const result = await classify({ task: gsm, input: 'How much?', settings: { ...settings, n: 2, r: 1 }, generator: backend, evaluator: backend });
    const continuations = backend.requests.filter((r) => r.prompt.assistantPrefix !== undefined);
    expect(continuations).toHaveLength(2);
    for (const c of continuations) {
      expect(c.prompt.assistantPrefix).toBe('long reasoning that ran out of tokens\nFinal Answer:');
      expect(c.grammar).toMatch(/^root ::= " " answer/);
      expect(c.maxTokens).toBeLessThan(gsm.evaluatorMaxTokens);
    }
    expect(result.runs[0]!.predictions.map((p) => p.label)).toEqual(['12', '12', '12']);
    expect(result.runs[0]!.predictions[1]!.raw).toBe('long reasoning that ran out of tokens\nFinal Answer: 12');
    expect(result.votes).toEqual({ '12': 3 });
    // Three first calls and two continuations, all counted in the evaluation stage.
    expect(result.stages.evaluation.calls).toBe(3);
  });

  it('multiple choice: votes over option letters', async () => {
    const medqa = tasks.get('medqa')!;
    const backend = new ScriptedBackend((req, ctx) => {
      if (ctx.stage === 'examples') {
        const label = requestedLabel(req)!;
        return `Example1:\nQuestion: "Case ${req.seed}. A: a B: b C: c D: d E: e"\nAnswer: ${label}`;
      }
      if (ctx.stage === 'paraphrases') return 'p one\np two';
      return evaluatedCandidate(req) === 'p two' ? 'B' : 'D';
    });
    const result = await classify({ task: medqa, input: 'Q? A: 1 B: 2 C: 3 D: 4 E: 5', settings: { ...settings, k: 5, r: 1 }, generator: backend, evaluator: backend });
    expect(result.label).toBe('D');
    expect(result.votes).toEqual({ A: 0, B: 1, C: 0, D: 2, E: 0 });
    expect(result.runs[0]!.examples.map((e) => e.label).sort()).toEqual(['A', 'B', 'C', 'D', 'E']);
  });

  it('zeroShot: one greedy call with the instruction alone', async () => {
    const backend = new ScriptedBackend(() => 'positive');
    const out = await zeroShot({ task: sst2, input: 'fine "film"', evaluator: backend });
    expect(out.label).toBe('positive');
    expect(backend.requests).toHaveLength(1);
    expect(backend.requests[0]!.prompt.user).toBe(`Sentence: "fine 'film'"\nLabel:`);
    expect(backend.requests[0]!.temperature).toBe(0);
  });
});

describe('edges and caching', () => {
  it('k=0 and n=0: the original alone, no generator calls', async () => {
    const backend = new ScriptedBackend(() => 'positive');
    const result = await classify({ task: sst2, input: 'x', settings: { n: 0, k: 0, r: 2, seed: 1, scope: 'run' }, generator: backend, evaluator: backend });
    expect(backend.batches).toHaveLength(1);
    expect(backend.requests[0]!.prompt.user).toBe('Sentence: "x"\nLabel:');
    expect(result.runs.map((r) => r.predictions.length)).toEqual([1, 1]);
    expect(result.votes).toEqual({ negative: 0, positive: 2 });
  });

  it('generateRunExamples emits one examples event per label and is cached on a re-run', async () => {
    const cache = new MemoryGenerationCache();
    const gen = new ScriptedBackend(politeScript({}));
    const events: TatraEvent[] = [];
    const first = await generateRunExamples({ task: sst2, settings, run: 1, generator: gen, cache, onEvent: (e) => events.push(e) });
    expect(first.seed).toBe(10005);
    expect(first.cached).toBe(false);
    expect(events.map((e) => (e.type === 'examples' ? `${e.label}:${e.examples.length}:${e.cached}` : e.type))).toEqual(['negative:2:false', 'positive:2:false']);
    const again = await generateRunExamples({ task: sst2, settings, run: 1, generator: gen, cache });
    expect(again.cached).toBe(true);
    expect(again.examples).toEqual(first.examples);
    expect(gen.batches).toHaveLength(1);
    expect(cache.size).toBe(2);
  });

  it('cache keys change with every part that decides the output', async () => {
    const { generationCacheKey } = await import('../../../electron/engine');
    const base = { generator: 'g', taskHash: 'h', stage: 'examples' as const, label: 'positive', count: 2, seed: 1 };
    const key = generationCacheKey(base);
    const variants = [
      { ...base, generator: 'g2' },
      { ...base, taskHash: 'h2' },
      { ...base, stage: 'paraphrases' as const },
      { ...base, label: 'negative' },
      { ...base, count: 3 },
      { ...base, seed: 2 },
      { ...base, input: 'x' },
    ];
    for (const v of variants) expect(generationCacheKey(v)).not.toBe(key);
    expect(generationCacheKey({ ...base })).toBe(key);
  });
});

describe('small contexts', () => {
  it('the paraphrase budget shrinks to the room the generator has; too little room is input_too_long', async () => {
    const backend = new ScriptedBackend(politeScript({ firstLabel: 'positive' }), { contextSize: 300 });
    await classify({ task: sst2, input: 'short', settings: { ...settings, r: 1 }, generator: backend, evaluator: backend });
    const para = backend.stage('paraphrases')[0]!;
    const promptTokens = await backend.countPromptTokens(para.prompt);
    expect(para.maxTokens).toBe(300 - promptTokens - 1);
    expect(para.maxTokens).toBeLessThan(256);
    for (const r of backend.stage('examples')) expect(r.maxTokens).toBeLessThanOrEqual(300 - (await backend.countPromptTokens(r.prompt)) - 1);
    const small = new ScriptedBackend(politeScript({}), { contextSize: 200 });
    const tooSmall = (await classify({ task: sst2, input: 'short', settings, generator: small, evaluator: small }).catch((e: unknown) => e)) as UserError;
    expect(tooSmall.code).toBe('context_too_small');
    const tight = new ScriptedBackend(politeScript({}), { contextSize: 90 });
    const err = (await classify({ task: sst2, input: 'short', settings, generator: tight, evaluator: new ScriptedBackend(politeScript({})) }).catch((e: unknown) => e)) as UserError;
    expect(err.code).toBe('input_too_long');
    expect(err.message).toMatch(/paraphrase prompt needs \d+ tokens/);
  });
});
