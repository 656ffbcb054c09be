import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  cleanParaphrases,
  exampleShapes,
  evaluationGrammar,
  evaluationPrompt,
  exampleGrammar,
  extractFinalAnswer,
  lenientMathCorrect,
  mapLabel,
  mathAnswersEqual,
  normaliseMathAnswer,
  padParaphrases,
  paraphraseGrammar,
  perLabelCounts,
  seededShuffle,
  strictMathCorrect,
  tallyVotes,
  validateExamples,
  type Vote,
} from '../../../electron/engine';
import { loadBuiltInTasks } from '../../../electron/tasks';
import { formatScriptedExamples } from '../../helpers/scripted-backend';

const tasks = new Map((await loadBuiltInTasks(join(import.meta.dirname, '../../../tasks'))).map((t) => [t.id, t]));
const sst2 = tasks.get('sst2')!;

describe('per-label counts (docs/method.md §4)', () => {
  it('k=16 over 2, 5 and 6 labels: k // |labels| each, the first k % |labels| one more', () => {
    expect(perLabelCounts(16, ['a', 'b']).map((c) => c.count)).toEqual([8, 8]);
    expect(perLabelCounts(16, ['a', 'b', 'c', 'd', 'e']).map((c) => c.count)).toEqual([4, 3, 3, 3, 3]);
    expect(perLabelCounts(16, ['a', 'b', 'c', 'd', 'e', 'f']).map((c) => c.count)).toEqual([3, 3, 3, 3, 2, 2]);
    expect(perLabelCounts(4, ['a', 'b', 'c', 'd', 'e', 'f']).map((c) => c.count)).toEqual([1, 1, 1, 1, 0, 0]);
  });
});

describe('diversity plan', () => {
  it('sentence counts cycle 1,2,1,3,2,1,3,2 and topics cycle through the pool', () => {
    const plan = exampleShapes(10, ['t1', 't2', 't3']);
    expect(plan.map((p) => p.sentences)).toEqual([1, 2, 1, 3, 2, 1, 3, 2, 1, 2]);
    expect(plan.map((p) => p.topic)).toEqual(['t1', 't2', 't3', 't1', 't2', 't3', 't1', 't2', 't3', 't1']);
    expect(plan.map((p) => p.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('example validation', () => {
  it('drops wrong-label, duplicate, malformed and empty examples and counts each', () => {
    const raw = [
      'Here you go:',
      'Example1:\nSentence: "A wonderful film."\nLabel: positive',
      'Example2:\nSentence: "Dull and slow."\nLabel: negative',
      'Example3:\nSentence: "a WONDERFUL film"\nLabel: positive',
      'Example4:\nSentence: "no label line here"',
      'Example5:\nSentence: ""\nLabel: positive',
      'Example6:\nSentence: "Loved every minute."\nLabel: Positive.',
    ].join('\n\n');
    const v = validateExamples(sst2, [{ label: 'positive', raw }], 16, 1);
    expect(v.filtered).toEqual({ wrongLabel: 1, duplicate: 1, malformed: 1, empty: 1, overK: 0 });
    expect(v.examples.map((e) => e.text).sort()).toEqual(['A wonderful film.', 'Loved every minute.']);
    expect(v.examples.every((e) => e.label === 'positive')).toBe(true);
  });

  it('pools the labels, shuffles with the seed and keeps at most k', () => {
    const mk = (label: string, n: number) => formatScriptedExamples('Sentence', 'Label', Array.from({ length: n }, (_, i) => ({ text: `${label} text ${i}`, label })));
    const outputs = [
      { label: 'negative', raw: mk('negative', 4) },
      { label: 'positive', raw: mk('positive', 4) },
    ];
    const a = validateExamples(sst2, outputs, 6, 7);
    const b = validateExamples(sst2, outputs, 6, 7);
    const c = validateExamples(sst2, outputs, 6, 8);
    expect(a.examples).toHaveLength(6);
    expect(a.filtered.overK).toBe(2);
    expect(a.examples).toEqual(b.examples);
    expect(c.examples.map((e) => e.text)).not.toEqual(a.examples.map((e) => e.text));
    expect(seededShuffle([1, 2, 3, 4, 5], 3)).toEqual(seededShuffle([1, 2, 3, 4, 5], 3));
  });

  it('multiple-choice examples must carry every option', () => {
    const medqa = tasks.get('medqa')!;
    const raw = [
      'Example1:\nQuestion: "A 30-year-old has fever. A: flu B: cold C: sepsis D: gout E: none"\nAnswer: C',
      'Example2:\nQuestion: "A 40-year-old has pain. A: x B: y C: z"\nAnswer: C',
    ].join('\n\n');
    const v = validateExamples(medqa, [{ label: 'C', raw }], 4, 1);
    expect(v.examples).toHaveLength(1);
    expect(v.filtered.malformed).toBe(1);
  });

  it('math examples keep their answers as labels', () => {
    const gsm = tasks.get('gsm8k')!;
    const raw = 'Example1:\nProblem: "Tom has 3 apples and buys 4. How many?"\nAnswer: 7\n\nExample2:\nProblem: "x"\nAnswer:';
    const v = validateExamples(gsm, [{ label: null, raw }], 4, 1);
    expect(v.examples).toEqual([{ text: 'Tom has 3 apples and buys 4. How many?', label: '7' }]);
    expect(v.filtered.empty).toBe(1);
  });
});

describe('tie-breaks (docs/method.md §9)', () => {
  const opts = { labels: ['negative', 'positive'], defaultLabel: 'negative' };
  const v = (run: number, variant: number, label: string | null): Vote => ({ run, variant, label });

  it('a clear majority needs no tie-break; confidence is the share', () => {
    const out = tallyVotes([v(0, 0, 'positive'), v(0, 1, 'positive'), v(0, 2, 'negative'), v(1, 0, null)], opts);
    expect(out).toMatchObject({ label: 'positive', tieBreak: 'none', votes: { negative: 1, positive: 2 } });
    expect(out.confidence).toBeCloseTo(2 / 3);
  });

  it('tie: the label the original got in the first run, when it is among the tied', () => {
    const out = tallyVotes([v(0, 0, 'positive'), v(0, 1, 'negative'), v(1, 0, 'negative'), v(1, 1, 'positive')], opts);
    expect(out).toMatchObject({ label: 'positive', tieBreak: 'first-original' });
  });

  it('first original not among the tied: the tied label the originals got most often', () => {
    const labels = { labels: ['a', 'b', 'c'], defaultLabel: 'a' };
    // a=2, b=2, c=1; run 0's original said c (not tied); originals across runs: c, b, b.
    const out = tallyVotes([v(0, 0, 'c'), v(0, 1, 'a'), v(0, 2, 'a'), v(1, 0, 'b'), v(2, 0, 'b')], labels);
    expect(out).toMatchObject({ label: 'b', tieBreak: 'originals-majority', tied: ['a', 'b'] });
  });

  it('then the default label, if tied', () => {
    const labels = { labels: ['a', 'b', 'c'], defaultLabel: 'b' };
    // a=2, b=2; originals all said c.
    const out = tallyVotes([v(0, 0, 'c'), v(0, 1, 'a'), v(0, 2, 'a'), v(0, 3, 'b'), v(0, 4, 'b')], labels);
    expect(out).toMatchObject({ label: 'b', tieBreak: 'default-label' });
  });

  it('then label order', () => {
    const labels = { labels: ['a', 'b', 'c'], defaultLabel: 'c' };
    const out = tallyVotes([v(0, 0, 'c'), v(0, 1, 'b'), v(0, 2, 'b'), v(0, 3, 'a'), v(0, 4, 'a')], labels);
    expect(out).toMatchObject({ label: 'a', tieBreak: 'label-order' });
  });

  it('the abstain label is counted but never wins', () => {
    const out = tallyVotes([v(0, 0, 'unsure'), v(0, 1, 'unsure'), v(0, 2, 'subjective')], { labels: ['objective', 'subjective'], defaultLabel: 'objective', abstainLabel: 'unsure' });
    expect(out).toMatchObject({ label: 'subjective', votes: { objective: 0, subjective: 1, unsure: 2 }, tieBreak: 'none' });
    expect(out.confidence).toBeCloseTo(1 / 3);
  });

  it('no valid vote: no label', () => {
    expect(tallyVotes([v(0, 0, null)], opts)).toMatchObject({ label: null, confidence: 0 });
  });

  it('math votes over answers, ties in order of appearance after the original rules', () => {
    const out = tallyVotes([v(0, 0, null), v(0, 1, '12'), v(0, 2, '7')], { labels: [] });
    expect(out).toMatchObject({ label: '12', tieBreak: 'label-order', votes: { '12': 1, '7': 1 } });
  });
});

describe('math answers', () => {
  it('normalises thousands separators, \\boxed{} and $', () => {
    expect(normaliseMathAnswer('1,234')).toBe('1234');
    expect(normaliseMathAnswer('\\boxed{12}')).toBe('12');
    expect(normaliseMathAnswer('$\\boxed{12}$')).toBe('12');
    expect(normaliseMathAnswer('$18.00')).toBe('18');
    expect(normaliseMathAnswer('\\frac{\\sqrt{3}}{2}')).toBe('\\frac{\\sqrt{3}}{2}');
    expect(normaliseMathAnswer('(1, 2)')).toBe('(1,2)');
  });

  it('equivalent numeric forms are equal', () => {
    expect(mathAnswersEqual('$\\frac{1}{2}$', '0.5')).toBe(true);
    expect(mathAnswersEqual('\\dfrac{1}{2}', '1/2')).toBe(true);
    expect(mathAnswersEqual('12.0', '12')).toBe(true);
    expect(mathAnswersEqual('1,200', '1200')).toBe(true);
    expect(mathAnswersEqual('0.5', '0.25')).toBe(false);
  });

  it('extracts the last Final Answer line, else the last \\boxed{}', () => {
    expect(extractFinalAnswer('3+4=7\nFinal Answer: 7')).toBe('7');
    expect(extractFinalAnswer('Final Answer: 1\nwait\nFinal Answer: $1,200$')).toBe('$1,200$');
    expect(extractFinalAnswer('so the answer is \\boxed{\\frac{1}{2}}.')).toBe('\\frac{1}{2}');
    expect(extractFinalAnswer('no answer here')).toBeNull();
  });

  it('strict and lenient scores are different things', () => {
    expect(strictMathCorrect('1,200', 'Final Answer: 1200')).toBe(true);
    expect(lenientMathCorrect('1,200', 'Final Answer: 1200')).toBe(false);
    expect(lenientMathCorrect('30', 'I think 30 or 40\nFinal Answer: 40')).toBe(true);
    expect(strictMathCorrect('30', 'I think 30 or 40\nFinal Answer: 40')).toBe(false);
  });
});

describe('paraphrases', () => {
  it('cleans bullets, numbering and quotes, and drops commentary and empty lines', () => {
    const raw = 'Here are the paraphrases:\n1. "A fine movie."\n- Quite a good film\n\n* 3) Paraphrase 3: It was nice\n“Truly enjoyable”';
    expect(cleanParaphrases(raw)).toEqual(['A fine movie.', 'Quite a good film', 'It was nice', 'Truly enjoyable']);
  });

  it('a truncated output loses its incomplete last line', () => {
    expect(cleanParaphrases('one full line\ntwo half li', { truncated: true })).toEqual(['one full line']);
  });

  it('pads by repeating the last one and records it; nothing parsed means copies of the original', () => {
    expect(padParaphrases(['a', 'b'], 4, 'orig')).toEqual({ paraphrases: ['a', 'b', 'b', 'b'], fallback: { kind: 'padded', parsed: 2, wanted: 4 } });
    expect(padParaphrases([], 2, 'orig')).toEqual({ paraphrases: ['orig', 'orig'], fallback: { kind: 'original', parsed: 0, wanted: 2 } });
    expect(padParaphrases(['a', 'b', 'c'], 2, 'orig')).toEqual({ paraphrases: ['a', 'b'], fallback: null });
    expect(padParaphrases(['a'], 0, 'orig')).toEqual({ paraphrases: [], fallback: null });
  });
});

describe('label mapping', () => {
  const labels = ['negative', 'positive'];
  it('is trimmed, case-insensitive, first matching label', () => {
    expect(mapLabel(' Positive. ', labels)).toBe('positive');
    expect(mapLabel('Label: negative', labels)).toBe('negative');
    expect(mapLabel('the sentiment is positive', labels)).toBe('positive');
    expect(mapLabel('neg', labels)).toBe('negative');
    expect(mapLabel('banana', labels)).toBeNull();
    expect(mapLabel('', labels)).toBeNull();
  });
});

describe('prompts and grammars', () => {
  it('double quotes in the input become single quotes in the classification prompt; the shared prefix is the examples', () => {
    const { prompt, sharedUserPrefixLength } = evaluationPrompt(sst2, [{ text: 'great', label: 'positive' }], 'he said "wow"');
    expect(prompt.user).toContain(`Sentence: "he said 'wow'"\nLabel:`);
    expect(prompt.user.slice(0, sharedUserPrefixLength)).toBe('Sentence: "great"\nLabel: positive\n\n');
    expect(prompt.system).toContain(sst2.instruction);
  });

  it('grammars name every rule they use and bound free text', () => {
    for (const task of tasks.values()) {
      for (const g of [exampleGrammar(task, task.kind === 'math' ? null : task.labels[0]!.name, exampleShapes(3, ['x'])), evaluationGrammar(task), paraphraseGrammar(3, 50)]) {
        const defined = new Set([...g.matchAll(/^(\w+) ::=/gm)].map((m) => m[1]));
        const body = g.replace(/"(?:[^"\\]|\\.)*"/g, '').replace(/\[(?:[^\]\\]|\\.)*\]/g, '');
        const used = new Set([...body.matchAll(/\b([a-z][a-z0-9]*)\b(?!\s*::=)/g)].map((m) => m[1]));
        for (const u of used) expect(defined.has(u), `${task.id}: ${u} in\n${g}`).toBe(true);
        expect(g).not.toMatch(/[*+]/);
      }
    }
    expect(evaluationGrammar(tasks.get('subj')!)).toBe('root ::= "objective" | "subjective" | "unsure"');
  });
});

describe('math answers: whole numbers', () => {
  it('long whole numbers stay exact; signs and leading zeros are tidied', () => {
    expect(normaliseMathAnswer('111111111111111')).toBe('111111111111111');
    expect(normaliseMathAnswer('111111111111111')).not.toBe(normaliseMathAnswer('111111111111112'));
    expect(normaliseMathAnswer('-007')).toBe('-7');
    expect(normaliseMathAnswer('+5.00')).toBe('5');
    expect(normaliseMathAnswer('-0')).toBe('0');
  });
});

describe('votes on answers that are Object.prototype names', () => {
  it('counts "constructor" and "__proto__" like any other answer', async () => {
    const { tallyVotes } = await import('../../../electron/engine/vote');
    const out = tallyVotes(
      [
        { run: 0, variant: 0, label: '__proto__' },
        { run: 0, variant: 1, label: 'constructor' },
        { run: 0, variant: 2, label: 'constructor' },
      ],
      { labels: [] },
    );
    expect(out.label).toBe('constructor');
    expect(out.votes['constructor']).toBe(2);
    expect(out.votes['__proto__']).toBe(1);
    expect(out.confidence).toBeCloseTo(2 / 3);
  });
});
