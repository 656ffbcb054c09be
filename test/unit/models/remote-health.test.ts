// A server's health as the app shows it: up (serves the model), answering but not serving the
// model asked for (a wrong id, not a dead server), or down; a server probed before any model id
// is known is up with the ids it serves. Against a real HTTP server speaking the OpenAI API.
import { describe, expect, it } from 'vitest';
import { endpointHealth, refusingEndpoint } from '../../../electron/models/remote-health';
import { fakeServerScope } from '../remote/fake-server';

const scope = fakeServerScope();

describe('endpoint health', () => {
  it('tells a wrong model id from a server that is down, and probes a server without a model id', async () => {
    const server = await scope.serve({ 'GET /v1/models': { object: 'list', data: [{ id: 'qwen', object: 'model' }] } });
    const url = `${server.origin}/v1`;
    const served = await endpointHealth(url, 'qwen', {});
    expect(served).toMatchObject({ up: true, answers: true, error: null });
    const wrong = await endpointHealth(url, 'llama', {});
    expect(wrong).toMatchObject({ up: false, answers: true });
    expect(wrong.error).toContain('qwen');
    const bare = await endpointHealth(url, '', {});
    expect(bare).toMatchObject({ up: true, answers: true });
    expect(bare.probe?.models).toEqual(['qwen']);
    await server.close();
    const gone = await endpointHealth(url, 'qwen', { timeoutMs: 1000 });
    expect(gone).toMatchObject({ up: false, answers: false });
    // Adding refuses what answers but will not serve; what is merely unreachable is kept.
    expect(refusingEndpoint([served, wrong])).toBe(wrong);
    expect(refusingEndpoint([served, gone])).toBeUndefined();
  });
});
