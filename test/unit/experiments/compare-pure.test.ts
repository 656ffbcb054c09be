// Pair order and the result matrix: pure functions, pinned exactly.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { comparisonSpec, orderPairs, pendingPair } from '../../../electron/experiments';
import { ComparisonResult, ComparisonStartInput, ComparisonSummary, comparisonMatrix } from '../../../electron/common/contract/comparisons';
import { CellStatus, ExperimentHead } from '../../../electron/common/contract/experiment-progress';
import { JobStatus, JobSummary, StoredJobStatus } from '../../../electron/common/contract/jobs';
import { SweepJob, SweepStartInput, SweepSummary } from '../../../electron/common/contract/sweeps';

describe('orderPairs', () => {
  it('is generator-major, with the generator itself first among its evaluators', () => {
    expect(orderPairs(['/g1', '/g2'], ['/e', '/g2', '/g1'])).toEqual([
      { generator: '/g1', evaluator: '/g1' },
      { generator: '/g1', evaluator: '/e' },
      { generator: '/g1', evaluator: '/g2' },
      { generator: '/g2', evaluator: '/g2' },
      { generator: '/g2', evaluator: '/e' },
      { generator: '/g2', evaluator: '/g1' },
    ]);
  });
});

describe('comparisonSpec', () => {
  it('keeps remote models as written (a path of that name is no model), beside resolved GGUFs', () => {
    const remote = 'openai+http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B-Instruct';
    const spec = comparisonSpec({ taskId: 'sst2', dataPath: 'd.csv', generators: ['remote:a100', 'remote:a100', 'm.gguf'], evaluators: [` ${remote} `], settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' } });
    expect(spec.generators).toEqual(['remote:a100', resolve('m.gguf')]);
    expect(spec.evaluators).toEqual([remote]);
    expect(spec.dataPath).toBe(resolve('d.csv'));
  });

  it('dedupes and resolves paths, and rejects bad settings with one line', () => {
    const spec = comparisonSpec({ taskId: 'sst2', dataPath: 'd.csv', generators: ['/a.gguf', '/a.gguf'], evaluators: ['/b.gguf'], settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' } });
    expect(spec.generators).toEqual(['/a.gguf']);
    const pairs = orderPairs(spec.generators, spec.evaluators);
    expect(pairs).toHaveLength(1);
    // A pair before its job runs says a job's word for it, and counts rows as jobs do.
    expect(pendingPair(pairs[0]!)).toMatchObject({ status: 'queued', rowsDone: 0, rowsTotal: 0, elapsedMs: 0 });
    expect(() => comparisonSpec({ taskId: 'sst2', dataPath: 'd.csv', generators: [], evaluators: ['/b.gguf'], settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' } })).toThrow('invalid comparison: The generators must have at least one entry');
  });
});

describe('one vocabulary', () => {
  it('comparisons, sweeps and their cells say the words jobs say (failed, not error; queued, not pending), with one head', () => {
    expect(ComparisonResult.shape.status.options).toEqual(JobStatus.options);
    expect(ComparisonSummary.shape.status.options).toEqual(JobStatus.options);
    expect(SweepSummary.shape.status.options).toEqual(JobStatus.options);
    // A cell's words are a stored job's, and a raced cell's `dropped` (docs/method.md §16, racing).
    expect(CellStatus.options).toEqual([...StoredJobStatus.options, 'dropped']);
    expect(SweepJob.shape.status).toBe(CellStatus);
    expect(ComparisonResult.shape.pairs.element.shape.status).toBe(CellStatus);
    // The fields every kind's summary has, named alike: a job's words where a job has them.
    for (const key of Object.keys(ExperimentHead.shape)) {
      expect(SweepSummary.shape).toHaveProperty(key);
      expect(ComparisonSummary.shape).toHaveProperty(key);
    }
    for (const key of ['taskId', 'dataPath', 'createdAt', 'updatedAt', 'status', 'error', 'usage', 'budget', 'stoppedBy'] as const) expect(JobSummary.shape).toHaveProperty(key);
    for (const key of ['taskId', 'dataPath', 'inputColumn', 'goldColumn', 'labelMap', 'limit', 'concurrency', 'budget', 'price'] as const) {
      expect(ComparisonStartInput.shape).toHaveProperty(key);
      expect(SweepStartInput.shape).toHaveProperty(key);
    }
    expect(ComparisonResult.shape.pairs.element.shape).toHaveProperty('elapsedMs');
  });
});

describe('comparisonMatrix', () => {
  it('puts generators in rows and evaluators in columns, null where unfinished', () => {
    const spec = comparisonSpec({ taskId: 't', dataPath: '/d', generators: ['/a', '/b'], evaluators: ['/x', '/y'], settings: { n: 0, k: 0, r: 1, seed: 1, scope: 'run' } });
    const rec = { spec, pairs: orderPairs(spec.generators, spec.evaluators).map(pendingPair) };
    const set = (g: string, e: string, acc: number) => {
      const p = rec.pairs.find((q) => q.generator === g && q.evaluator === e)!;
      p.accuracy = acc;
      p.macroF1 = acc / 2;
    };
    set('/a', '/x', 0.9);
    set('/a', '/y', 0.8);
    set('/b', '/x', 0.7);
    expect(comparisonMatrix(rec)).toEqual([
      [0.9, 0.8],
      [0.7, null],
    ]);
    expect(comparisonMatrix(rec, 'macroF1')[0]).toEqual([0.45, 0.4]);
  });
});
