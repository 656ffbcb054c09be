// Backends are decorated one way (engine/backend.ts withGenerate): a job's meter, a sweep's shared
// evaluations and `tatra api`'s metrics each wrap what they are given and keep the model's own
// identity and promises, so they stack in any order and each counts what reaches it.
import { describe, expect, it } from 'vitest';
import { emptyUsage } from '../../../electron/common/plan';
import type { GenerateRequest } from '../../../electron/engine/backend';
import { sweepBackend } from '../../../electron/experiments/sweep-backends';
import { UsageMeter } from '../../../electron/jobs/usage';
import { Admission } from '../../../electron/service/admission';
import { ServiceMetrics } from '../../../electron/service/metrics';
import { ScriptedBackend } from '../../helpers/scripted-backend';

const request = (user: string): GenerateRequest => ({ prompt: { system: 's', user }, maxTokens: 4, stage: 'evaluation' });

async function counter(metrics: ServiceMetrics, name: string): Promise<number> {
  const m = (await metrics.registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.reduce((sum, v) => sum + v.value, 0) ?? 0;
}

describe('backend decorators', () => {
  it('stack: each keeps the model’s identity and promises and counts what reaches it', async () => {
    const model = new ScriptedBackend(() => 'positive', { id: 'scripted:m', contextSize: 2048 });
    const meter = new UsageMeter(emptyUsage(), null);
    const shared = new Map<string, string>();
    const metrics = new ServiceMetrics(new Admission({ maxQueue: 1, concurrency: 1 }));
    const backend = metrics.counted(sweepBackend(meter.wrap('evaluator', model), { get: (k) => shared.get(k), set: (k, v) => void shared.set(k, v) }), 'p', 'evaluator');

    expect([backend.id, backend.contextSize, backend.deterministic, backend.outputConstraint]).toEqual([model.id, model.contextSize, true, undefined]);
    expect(await backend.countPromptTokens({ system: 's', user: 'four' })).toBe(await model.countPromptTokens({ system: 's', user: 'four' }));

    const told: number[] = [];
    expect((await backend.generate([request('a'), request('b')], (i) => told.push(i))).map((r) => r.text)).toEqual(['positive', 'positive']);
    expect(told.sort()).toEqual([0, 1]);
    // The same greedy request again: the sweep's store answers it, so the model and the meter
    // beneath never see it, and the metrics above count it as answered.
    await backend.generate([request('a')]);
    expect(model.requests).toHaveLength(2);
    expect(meter.usage.calls.total).toBe(2);
    expect(await counter(metrics, 'tatra_api_model_calls_total')).toBe(3);
  });
});
