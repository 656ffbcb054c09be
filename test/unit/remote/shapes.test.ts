// Request shapes for the servers that cannot run here (vLLM, Ollama, OpenAI, LM Studio). Each fake
// server answers discovery and generation with responses RECORDED FROM THE SERVERS' DOCUMENTATION
// (the URL is beside each fixture), and the test pins what the backend sends: the documented
// constrained-output fields, sampling fields, and how the answer is read back. llama-server itself
// is tested for real in test/model/remote-llama-server.test.ts.
import { describe, expect, it } from 'vitest';
import { connectRemoteBackend } from '../../../electron/remote';
import { paraphraseGrammar } from '../../../electron/engine/grammar';
import { chatCompletion, fakeServerScope, json, type FakeServer } from './fake-server';

const LABELS = 'root ::= "negative" | "positive"';
const prompt = { system: 'You classify sentiment.', user: 'Text: "a gorgeous film"\nAnswer:' };

const { serve, track } = fakeServerScope();

function generations(s: FakeServer, path: string): Record<string, unknown>[] {
  return s.requests.filter((r) => r.method === 'POST' && r.path === path).map((r) => r.body as Record<string, unknown>);
}

// https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html (GET /v1/models, /version, /tokenize)
const VLLM_MODEL = 'Qwen/Qwen2.5-3B-Instruct';
const vllmModels = {
  object: 'list',
  data: [{ id: VLLM_MODEL, object: 'model', created: 1735689600, owned_by: 'vllm', root: VLLM_MODEL, parent: null, max_model_len: 32768, permission: [] }],
};

describe('vLLM (fixtures from docs.vllm.ai)', () => {
  it('≥ 0.12: a label set goes as structured_outputs.choice, other grammars as structured_outputs.grammar; top_k, seed and max_tokens pass through', async () => {
    const s = await serve({
      'GET /v1/models': vllmModels,
      'GET /version': { version: '0.12.0' },
      'POST /tokenize': { count: 37, max_model_len: 32768, tokens: [1, 2, 3] },
      // docs.vllm.ai/en/latest/features/structured_outputs: "the output will be exactly one of the choices"
      'POST /v1/chat/completions': chatCompletion('positive', VLLM_MODEL),
    });
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: VLLM_MODEL });
    track(b);
    expect(b.kind).toBe('vllm');
    expect(b.version).toBe('0.12.0');
    expect(b.constrainedMode).toBe('structured-outputs');
    expect(b.contextSize).toBe(32768);
    expect(b.deterministic).toBe(false);
    const [label, lines] = await b.generate([
      { prompt, grammar: LABELS, maxTokens: 4 },
      { prompt, grammar: paraphraseGrammar(2, 60), maxTokens: 120, temperature: 0.7, topP: 0.9, seed: 7 },
    ]);
    expect(label).toMatchObject({ text: 'positive', promptTokens: 21, completionTokens: 2 });
    expect(lines?.text).toBe('positive');
    const [a, c] = generations(s, '/v1/chat/completions');
    expect(a).toMatchObject({
      model: VLLM_MODEL,
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      max_tokens: 4,
      temperature: 0,
      top_k: 40,
      structured_outputs: { choice: ['negative', 'positive'] },
    });
    expect(a).not.toHaveProperty('guided_choice');
    expect(a).not.toHaveProperty('seed');
    expect(c).toMatchObject({ temperature: 0.7, top_p: 0.9, seed: 7, max_tokens: 120, structured_outputs: { grammar: paraphraseGrammar(2, 60) } });
    // The token count comes from vLLM's own /tokenize with the chat messages.
    expect(await b.countPromptTokens(prompt)).toBe(37);
    expect(generations(s, '/tokenize')[0]).toMatchObject({ model: VLLM_MODEL, messages: [{ role: 'system' }, { role: 'user' }], add_generation_prompt: true });
  });

  it('before 0.12: guided_choice and guided_grammar (removed in v0.12.0); an assistant prefix is continued', async () => {
    const s = await serve({
      'GET /v1/models': vllmModels,
      'GET /version': { version: '0.8.5' },
      'POST /v1/chat/completions': chatCompletion(' 42', VLLM_MODEL),
    });
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: VLLM_MODEL });
    track(b);
    expect(b.constrainedMode).toBe('guided');
    await b.generate([{ prompt, grammar: LABELS, maxTokens: 4 }]);
    await b.generate([{ prompt: { ...prompt, assistantPrefix: 'Final Answer:' }, grammar: 'root ::= " " answer\nanswer ::= [0-9]+', maxTokens: 8 }]);
    const [a, c] = generations(s, '/v1/chat/completions');
    expect(a).toMatchObject({ guided_choice: ['negative', 'positive'] });
    expect(a).not.toHaveProperty('structured_outputs');
    expect(c).toMatchObject({
      guided_grammar: 'root ::= " " answer\nanswer ::= [0-9]+',
      add_generation_prompt: false,
      continue_final_message: true,
      messages: [{ role: 'system' }, { role: 'user' }, { role: 'assistant', content: 'Final Answer:' }],
    });
  });
});

// https://github.com/ollama/ollama/blob/main/docs/api.md (GET /api/version, POST /api/chat with "format"),
// https://github.com/ollama/ollama/blob/main/docs/openai.md (GET /v1/models)
describe('Ollama (fixtures from the Ollama API docs)', () => {
  it('label sets go to /api/chat with format = a JSON schema and options; the JSON answer is unwrapped; other grammars are free and counted as unconstrained', async () => {
    const s = await serve({
      'GET /v1/models': { object: 'list', data: [{ id: 'llama3.2:latest', object: 'model', created: 1733011200, owned_by: 'library' }] },
      'GET /api/version': { version: '0.5.1' },
      'POST /api/chat': (req: { body: unknown }, res: Parameters<typeof json>[0]) => {
        const body = req.body as { format?: unknown };
        json(res, 200, {
          model: 'llama3.2',
          created_at: '2024-12-09T16:45:04.380923Z',
          message: { role: 'assistant', content: body.format ? '{"answer": "negative"}' : 'one line\nanother line' },
          done: true,
          total_duration: 4648158584,
          prompt_eval_count: 26,
          eval_count: 8,
        });
      },
    });
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'llama3.2:latest' });
    track(b);
    expect(b.kind).toBe('ollama');
    expect(b.version).toBe('0.5.1');
    expect(b.constrainedMode).toBe('ollama-format');
    const [label, free] = await b.generate([
      { prompt, grammar: LABELS, maxTokens: 4, temperature: 0.5, seed: 3 },
      { prompt, grammar: paraphraseGrammar(2, 60), maxTokens: 50 },
    ]);
    expect(label).toMatchObject({ text: 'negative', promptTokens: 26, completionTokens: 8 });
    expect(free?.text).toBe('one line\nanother line');
    const [a, c] = generations(s, '/api/chat');
    expect(a).toEqual({
      model: 'llama3.2:latest',
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      stream: false,
      options: { temperature: 0.5, top_p: 1, seed: 3, num_predict: 4, top_k: 40 },
      format: { type: 'object', properties: { answer: { type: 'string', enum: ['negative', 'positive'] } }, required: ['answer'], additionalProperties: false },
    });
    expect(c).not.toHaveProperty('format');
    expect(b.stats()).toMatchObject({ constrainedOutputs: 1, unconstrainedOutputs: 1 });
  });
});

// https://platform.openai.com/docs/api-reference/models/list and .../chat/create (response_format json_schema),
// https://lmstudio.ai/docs/app/api/endpoints/rest (GET /api/v0/models)
describe('OpenAI and LM Studio (fixtures from their API docs)', () => {
  it('OpenAI: response_format json_schema (strict) for a label set, max_completion_tokens, the key as a Bearer header', async () => {
    const s = await serve({
      'GET /v1/models': { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1686935002, owned_by: 'openai' }] },
      'POST /v1/chat/completions': chatCompletion('{"answer":"positive"}', 'gpt-4o-mini'),
    });
    // The kind is overridable: the fake cannot be api.openai.com.
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'gpt-4o-mini', kind: 'openai', constrained: 'json-schema', key: 'sk-test-secret' });
    track(b);
    const [r] = await b.generate([{ prompt, grammar: LABELS, maxTokens: 4 }]);
    expect(r?.text).toBe('positive');
    const [a] = generations(s, '/v1/chat/completions');
    expect(a).toMatchObject({
      model: 'gpt-4o-mini',
      max_completion_tokens: 4,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { answer: { type: 'string', enum: ['negative', 'positive'] } }, required: ['answer'], additionalProperties: false } },
      },
    });
    expect(a).not.toHaveProperty('max_tokens');
    // No logit_bias: OpenAI's API cannot say which token ids spell the labels (no tokenize endpoint).
    expect(a).not.toHaveProperty('logit_bias');
    expect(s.requests.map((q) => q.path)).not.toContain('/tokenize');
    expect(s.requests.every((q) => q.authorization === 'Bearer sk-test-secret')).toBe(true);
    // The key is not part of anything the backend describes.
    expect(JSON.stringify(b.describe())).not.toContain('sk-test-secret');
  });

  it('LM Studio is detected from /api/v0/models (with its context length) and gets response_format json_schema', async () => {
    const s = await serve({
      'GET /v1/models': { object: 'list', data: [{ id: 'qwen2.5-7b-instruct', object: 'model', owned_by: 'organization_owner' }] },
      'GET /api/v0/models': {
        object: 'list',
        data: [{ id: 'qwen2.5-7b-instruct', object: 'model', type: 'llm', publisher: 'lmstudio-community', arch: 'qwen2', compatibility_type: 'gguf', quantization: 'Q4_K_M', state: 'loaded', max_context_length: 32768 }],
      },
      'POST /v1/chat/completions': chatCompletion('{"answer":"negative"}', 'qwen2.5-7b-instruct'),
    });
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'qwen2.5-7b-instruct' });
    track(b);
    expect(b.kind).toBe('lmstudio');
    expect(b.contextSize).toBe(32768);
    const [r] = await b.generate([{ prompt, grammar: LABELS, maxTokens: 4 }]);
    expect(r?.text).toBe('negative');
    expect(generations(s, '/v1/chat/completions')[0]).toMatchObject({ max_tokens: 4, response_format: { type: 'json_schema' } });
    // LM Studio takes logit_bias, but its HTTP API has no tokenizer to find the labels' token ids.
    expect(generations(s, '/v1/chat/completions')[0]).not.toHaveProperty('logit_bias');
  });

  it('an unknown OpenAI-compatible server gets free text and the outputs are recorded as unconstrained', async () => {
    const s = await serve({
      'GET /v1/models': { object: 'list', data: [{ id: 'm', object: 'model' }] },
      'POST /v1/chat/completions': chatCompletion('Positive.', 'm'),
    });
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'm' });
    track(b);
    expect(b.kind).toBe('openai-compatible');
    expect(b.constrained).toBe(false);
    const [r] = await b.generate([{ prompt, grammar: LABELS, maxTokens: 4 }]);
    expect(r?.text).toBe('Positive.');
    const body = generations(s, '/v1/chat/completions')[0]!;
    for (const field of ['grammar', 'structured_outputs', 'guided_choice', 'response_format', 'format']) expect(body).not.toHaveProperty(field);
    expect(b.stats()).toMatchObject({ constrainedOutputs: 0, unconstrainedOutputs: 1 });
  });
});
