import { describe, expect, it } from 'vitest';
import type { TatraEvent, TatraResult } from '../../../electron/common/tatra';
import { applyEvent, emptyLive, leader, liveCounts, liveStage, liveVotes } from '../../../renderer/src/store/classifyLive';
import { formatHash, parseHash } from '../../../renderer/src/store/uiSlice';

const labels = ['negative', 'positive'];
const sst2 = { kind: 'classification' as const, labels: labels.map((name) => ({ name, style: [], topics: [] })) };
const ex = (text: string, label: string) => ({ text, label });

function fold(events: TatraEvent[]) {
  return events.reduce(applyEvent, emptyLive());
}

describe('live classify state', () => {
  const events: TatraEvent[] = [
    { type: 'run-start', run: 0, seed: 1 },
    { type: 'run-start', run: 1, seed: 10001 },
    { type: 'examples', run: 0, label: 'negative', examples: [ex('bad', 'negative')], cached: false },
    { type: 'examples', run: 0, label: 'positive', examples: [ex('good', 'positive')], cached: false },
    { type: 'examples', run: 1, label: 'negative', examples: [ex('awful', 'negative')], cached: true },
    { type: 'paraphrases', run: 0, paraphrases: ['p1'], fallback: null, cached: false },
    { type: 'prediction', run: 0, prediction: { variant: 1, label: 'positive', raw: ' positive' } },
    { type: 'prediction', run: 0, prediction: { variant: 0, label: 'positive', raw: ' positive' } },
    { type: 'prediction', run: 1, prediction: { variant: 0, label: null, raw: '???' } },
  ];

  it('groups examples by run and label, and places predictions by variant', () => {
    const s = fold(events);
    expect(s.runs.map((r) => [r.run, r.seed])).toEqual([
      [0, 1],
      [1, 10001],
    ]);
    expect(s.runs[0]!.examplesByLabel).toEqual({ negative: [ex('bad', 'negative')], positive: [ex('good', 'positive')] });
    expect(s.runs[1]!.examplesCached).toBe(true);
    expect(s.runs[0]!.paraphrases).toEqual(['p1']);
    expect(s.runs[0]!.predictions.map((p) => p?.variant)).toEqual([0, 1]);
    expect(s.applied).toBe(events.length);
  });

  it('counts valid votes only, every label present, and names the leader', () => {
    const s = fold(events);
    const votes = liveVotes(s, labels);
    expect(votes).toEqual({ negative: 0, positive: 2 });
    expect(leader(votes, labels)).toBe('positive');
    expect(leader({ negative: 0, positive: 0 }, labels)).toBeNull();
    expect(leader({ negative: 2, positive: 2 }, labels)).toBe('negative');
    expect(liveCounts(s, 1, 2)).toEqual({ received: 3, expected: 4 });
  });

  it('replaying the same examples event does not duplicate examples', () => {
    const once = fold(events.slice(0, 3));
    const twice = applyEvent(once, events[2]!);
    expect(twice.runs[0]!.examplesByLabel.negative).toHaveLength(1);
  });

  it('takes the final votes from the result once done', () => {
    const result = { label: 'positive', votes: { positive: 3 }, confidence: 1 } as unknown as TatraResult;
    const s = applyEvent(fold(events), { type: 'done', result });
    expect(liveVotes(s, labels)).toEqual({ negative: 0, positive: 3 });
    expect(liveStage(s, { n: 1, k: 2, r: 2 }, sst2)).toEqual({ text: 'Done', calls: { done: 10, total: 10 }, fraction: 1 });
  });

  it('counts progress in model calls and names the stages still outstanding', () => {
    // r=2 runs of 2 example calls (one per label), 1 paraphrase call and 2 evaluations: 10 calls.
    const shape = { n: 1, k: 2, r: 2 };
    expect(liveStage(emptyLive(), shape, sst2)).toEqual({ text: 'Loading models…', calls: { done: 0, total: 10 }, fraction: 0 });
    const writing = fold(events.slice(0, 4));
    expect(liveStage(writing, shape, sst2)).toMatchObject({ text: 'Writing examples and paraphrases', calls: { done: 2, total: 10 } });
    const s = fold(events);
    // Run 0's paraphrases are in while run 1 still owes an example and its paraphrases.
    const stage = liveStage(s, shape, sst2);
    expect(stage).toMatchObject({ text: 'Writing examples and paraphrases', calls: { done: 7, total: 10 } });
    expect(stage.fraction).toBeCloseTo(7 / 10);
    const more = fold([...events, { type: 'examples', run: 1, label: 'positive', examples: [], cached: true }]);
    expect(liveStage(more, shape, sst2).text).toBe('Writing paraphrases');
    const evaluating = applyEvent(more, { type: 'paraphrases', run: 1, paraphrases: ['q1'], fallback: null, cached: false });
    expect(liveStage(evaluating, shape, sst2)).toMatchObject({ text: 'Evaluating', calls: { done: 9, total: 10 } });
  });
});

describe('hash routes', () => {
  it('round-trips views and ids, falling back to Classify', () => {
    expect(parseHash('#/evaluate/job%201')).toEqual({ view: 'evaluate', id: 'job 1' });
    expect(formatHash({ view: 'evaluate', id: 'job 1' })).toBe('#/evaluate/job%201');
    expect(parseHash('')).toEqual({ view: 'classify' });
    expect(parseHash('#/nonsense')).toEqual({ view: 'classify' });
    expect(parseHash('#/tasks')).toEqual({ view: 'tasks' });
  });
});
