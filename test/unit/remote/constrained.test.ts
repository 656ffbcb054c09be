// What a classification result records about constrained decoding when the models are remote: a
// server that offers none ("generic" OpenAI-compatible) sends free text, which the engine parses
// and validates as it does every output, and the result says the outputs were unconstrained; a
// server offering a JSON-schema enum holds only the label answers. The fake server answers like a
// polite model (test/helpers/scripted-backend.ts) so the run is well-formed even without a grammar.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify } from '../../../electron/engine';
import { TatraResult } from '../../../electron/common/tatra';
import { ConstrainedMode, ServerKind } from '../../../electron/common/remote';
import { connectRemoteBackend } from '../../../electron/remote';
import { outputConstraintFor } from '../../../electron/remote/shapes';
import { loadBuiltInTasks } from '../../../electron/tasks';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { chatCompletion, fakeServerScope, json, type FakeServer, type RecordedRequest } from './fake-server';

const tasks = new Map((await loadBuiltInTasks(join(import.meta.dirname, '../../../tasks'))).map((t) => [t.id, t]));
const sst2 = tasks.get('sst2')!;

const { serve, track } = fakeServerScope();

/** A chat-completions server answering like a polite model; `wrap` puts the answer in {"answer": …} when a JSON schema was asked. */
async function politeServer(extra: Record<string, unknown> = {}): Promise<FakeServer> {
  const script = politeScript({ answer: () => 'positive' });
  return serve({
    'GET /v1/models': { object: 'list', data: [{ id: 'm', object: 'model' }] },
    ...extra,
    'POST /v1/chat/completions': async (req: RecordedRequest, res: Parameters<typeof json>[0]) => {
      const body = req.body as { messages: { role: string; content: string }[]; temperature: number; top_p?: number; seed?: number; response_format?: unknown };
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const out = await script({ prompt: { system, user }, maxTokens: 1, temperature: body.temperature, ...(body.top_p !== undefined ? { topP: body.top_p } : {}), ...(body.seed !== undefined ? { seed: body.seed } : {}) }, { index: 0, batch: 0, stage: 'evaluation' });
      const text = typeof out === 'string' ? out : out.text;
      json(res, 200, chatCompletion(body.response_format ? JSON.stringify({ answer: text }) : text, 'm'));
    },
  });
}

const CONSTRAINT_FIELDS = ['grammar', 'structured_outputs', 'guided_choice', 'guided_grammar', 'response_format', 'format'];

describe('results record how outputs were constrained', () => {
  it('a generic OpenAI-compatible server: free text, parsed and validated; the result says generator and evaluator were unconstrained', async () => {
    const s = await politeServer();
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'm' });
    track(b);
    expect(b.kind).toBe('openai-compatible');
    const result = await classify({ task: sst2, input: 'a fine film', settings: { n: 2, k: 4, r: 2, seed: 1, scope: 'run' }, generator: b, evaluator: b });
    expect(() => TatraResult.parse(result)).not.toThrow();
    expect(result.constrained).toEqual({ generator: 'none', evaluator: 'none' });
    // Parsed and validated as usual: well-formed answers still vote.
    expect(result.label).toBe('positive');
    expect(result.votes).toEqual({ negative: 0, positive: 6 });
    for (const run of result.runs) expect(run.examples).toHaveLength(4);
    const bodies = s.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as Record<string, unknown>);
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) for (const field of CONSTRAINT_FIELDS) expect(body).not.toHaveProperty(field);
  });

  it('LM Studio (response_format json_schema, label sets only): the evaluator is held to a JSON-schema enum, the generator is free', async () => {
    const s = await politeServer({
      // https://lmstudio.ai/docs/app/api/endpoints/rest (GET /api/v0/models)
      'GET /api/v0/models': { object: 'list', data: [{ id: 'm', object: 'model', type: 'llm', state: 'loaded', max_context_length: 8192 }] },
    });
    const b = await connectRemoteBackend({ urls: [`${s.origin}/v1`], model: 'm' });
    track(b);
    expect(b.kind).toBe('lmstudio');
    const result = await classify({ task: sst2, input: 'a fine film', settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' }, generator: b, evaluator: b });
    expect(result.constrained).toEqual({ generator: 'none', evaluator: 'json-schema' });
    expect(result.label).toBe('positive');
  });

  it('in-process backends (no outputConstraint) hold every output to the grammar', async () => {
    const backend = new ScriptedBackend(politeScript({ answer: () => 'negative' }));
    const result = await classify({ task: sst2, input: 'x', settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' }, generator: backend, evaluator: backend });
    expect(result.constrained).toEqual({ generator: 'grammar', evaluator: 'grammar' });
  });

  it('math tasks: a label-only server leaves the evaluator free too (its answer grammar is not a label set)', async () => {
    const math = [...tasks.values()].find((t) => t.kind === 'math');
    expect(math).toBeDefined();
    const remoteLike = new ScriptedBackend(politeScript({ mathAnswer: '4', answer: () => 'Final Answer: 4' }));
    Object.assign(remoteLike, { outputConstraint: outputConstraintFor('lmstudio', 'json-schema') });
    const result = await classify({ task: math!, input: 'What is 2 + 2?', settings: { n: 0, k: 2, r: 1, seed: 1, scope: 'run' }, generator: remoteLike, evaluator: remoteLike });
    expect(result.constrained).toEqual({ generator: 'none', evaluator: 'none' });
  });

  it('per kind and mode, as the requests are shaped', () => {
    const table = Object.fromEntries(
      ServerKind.options.flatMap((kind) => ConstrainedMode.options.map((mode) => [`${kind}/${mode}`, outputConstraintFor(kind, mode)])),
    );
    expect(table['llama-server/gbnf']).toEqual({ grammar: 'grammar', choice: 'grammar' });
    expect(table['vllm/structured-outputs']).toEqual({ grammar: 'grammar', choice: 'choice' });
    expect(table['vllm/guided']).toEqual({ grammar: 'grammar', choice: 'choice' });
    expect(table['ollama/ollama-format']).toEqual({ grammar: 'none', choice: 'json-schema' });
    expect(table['openai/json-schema']).toEqual({ grammar: 'none', choice: 'json-schema' });
    expect(table['lmstudio/json-schema']).toEqual({ grammar: 'none', choice: 'json-schema' });
    // An override Ollama's API does not take is not pretended: free text.
    expect(table['ollama/json-schema']).toEqual({ grammar: 'none', choice: 'none' });
    for (const kind of ServerKind.options) expect(table[`${kind}/none`]).toEqual({ grammar: 'none', choice: 'none' });
  });
});
