// llama-server label sets: the choices' tokens (from its /tokenize, recorded from the real server on
// the synthetic Qwen-vocabulary model) are biased and the choices are stop words, with the grammar
// kept, so a label answer costs one decoding step per label token instead of a grammar pass over
// the whole vocabulary at every step (the in-process backend's trick, llama/choices.ts).
import { describe, expect, it } from 'vitest';
import { CHOICE_BIAS, choiceTokensFrom, llamaServerCompletion, readAnswer } from '../../../electron/remote/shapes';

const LABELS = 'root ::= "negative" | "positive"';
// POST /tokenize {"content": …, "with_pieces": true} on llama-server (b-bundle of node-llama-cpp 3.21.1).
const positive = { tokens: [{ id: 30487, piece: 'positive' }] };
const negative = { tokens: [{ id: 42224, piece: 'negative' }] };
const subjective = { tokens: [{ id: 11501, piece: 'subject' }, { id: 533, piece: 'ive' }] };
const objective = { tokens: [{ id: 84511, piece: 'objective' }] };

describe('choiceTokensFrom', () => {
  it('every token of every choice, and the choices as stop words when none occurs inside another', () => {
    expect(choiceTokensFrom(['negative', 'positive'], [negative, positive])).toEqual({ choices: ['negative', 'positive'], tokens: [30487, 42224], stop: true });
    expect(choiceTokensFrom(['objective', 'subjective'], [objective, subjective])).toEqual({ choices: ['objective', 'subjective'], tokens: [533, 11501, 84511], stop: true });
  });

  it('no stop words when a choice occurs inside another (a match would not be a whole answer)', () => {
    const bad = { tokens: [{ id: 7, piece: 'bad' }] };
    const notBad = { tokens: [{ id: 8, piece: 'not' }, { id: 9, piece: ' bad' }] };
    expect(choiceTokensFrom(['bad', 'not bad'], [bad, notBad])).toMatchObject({ stop: false, tokens: [7, 8, 9] });
  });

  it('null when the pieces do not spell the choice back, or a piece is raw bytes', () => {
    expect(choiceTokensFrom(['negative', 'positive'], [negative, { tokens: [{ id: 6785, piece: ' positive' }] }])).toBeNull();
    expect(choiceTokensFrom(['é'], [{ tokens: [{ id: 1, piece: [195] }, { id: 2, piece: [169] }] }])).toBeNull();
    expect(choiceTokensFrom(['negative'], [{ tokens: [] }])).toBeNull();
    expect(choiceTokensFrom(['negative', 'positive'], [negative])).toBeNull();
  });
});

describe('llama-server /completion for a label set', () => {
  const req = { prompt: { system: '', user: 'Text: "fine"' }, grammar: LABELS, maxTokens: 4 };

  it('biases the choice tokens, stops at a whole choice, keeps the grammar; the stop word is the answer', () => {
    const choice = choiceTokensFrom(['negative', 'positive'], [negative, positive]);
    const call = llamaServerCompletion('<|im_start|>user\nText: "fine"<|im_end|>\n<|im_start|>assistant\n', req, choice);
    expect(call.body).toMatchObject({ grammar: LABELS, n_predict: 4, cache_prompt: true, logit_bias: [[30487, CHOICE_BIAS], [42224, CHOICE_BIAS]], stop: ['negative', 'positive'] });
    expect(CHOICE_BIAS).toBe(100);
    // llama-server leaves the matched stop word out of content and names it in stopping_word.
    const answer = readAnswer(call, { content: '', stop: true, stop_type: 'word', stopping_word: 'positive', tokens_predicted: 1, tokens_evaluated: 31 });
    expect(answer).toEqual({ text: 'positive', promptTokens: 31, completionTokens: 1 });
  });

  it('without known tokens (or for any other grammar) the request is the grammar alone, and content is read as is', () => {
    const call = llamaServerCompletion('prompt', req, null);
    expect(call.body).not.toHaveProperty('logit_bias');
    expect(call.body).not.toHaveProperty('stop');
    expect(readAnswer(call, { content: 'negative', stop_type: 'eos', stopping_word: '', tokens_predicted: 4, tokens_evaluated: 31 })?.text).toBe('negative');
    const free = llamaServerCompletion('prompt', { ...req, grammar: undefined }, choiceTokensFrom(['negative', 'positive'], [negative, positive]));
    expect(free.body).not.toHaveProperty('logit_bias');
    expect(free.body).not.toHaveProperty('grammar');
  });
});
