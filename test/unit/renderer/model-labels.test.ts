// The app names models as every face does (common/model-spec.ts modelLabel): a job's or a
// sweep's models in the lists and headers, a GGUF by its file's name, a remote model by its
// library name or its model and server (an inline spec showed as "v1#m" before).
import { describe, expect, it } from 'vitest';
import { modelPairText } from '../../../renderer/src/components/RunSetup';

describe('modelPairText', () => {
  it('labels each kind of spec, one name when one model does both', () => {
    expect(modelPairText('/m/qwen2.5-7b.gguf', '/m/qwen2.5-7b.gguf')).toBe('qwen2.5-7b');
    expect(modelPairText('remote:vllm-a100', '/m/phi.gguf')).toBe('remote:vllm-a100 → phi');
    expect(modelPairText('openai+http://gpu1:8000/v1#Qwen/Qwen2.5-7B?inflight=64', 'openai+http://gpu1:8000/v1#Qwen/Qwen2.5-7B?inflight=64')).toBe('Qwen/Qwen2.5-7B @ gpu1:8000');
  });
});
