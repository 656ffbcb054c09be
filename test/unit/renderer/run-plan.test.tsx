// @vitest-environment jsdom
// The plan beside Start is asked again when the settings change, and the plan asked before is
// dropped: its call's signal is aborted (the host stops walking the file for it), and its answer,
// should one still come, never replaces the newer plan's.
import { afterEach, expect, it, vi } from 'vitest';
import { act, cleanup, render, screen } from '@testing-library/react';
import type { CostPlan } from '../../../electron/common/plan';
import { type ApiClient, type CallOptions, setApi } from '../../../renderer/src/api/client';
import { RunPlan, type PlanRequest } from '../../../renderer/src/components/RunPlan';

afterEach(() => {
  cleanup();
  setApi(null);
  vi.useRealTimers();
});

const count = (n: number) => ({ min: n, max: n });
const plan = (calls: number): CostPlan =>
  ({
    rows: 10,
    calls: { total: count(calls), examples: count(0), paraphrases: count(0), evaluations: count(calls) },
    tokens: { prompt: count(100), completion: count(10) },
    tokensBasis: 'counted',
    seconds: null,
    basis: 'nothing measured',
    notes: [],
  }) as unknown as CostPlan;

const request = (r: number): PlanRequest => ({
  method: 'plans.job',
  input: { taskId: 'sst2', generator: 'g.gguf', evaluator: 'g.gguf', dataPath: '/d.csv', inputColumn: 'text', settings: { n: 1, k: 2, r, seed: 1, scope: 'run' } } as never,
});

it('drops the plan asked before when the settings change, and shows only the newer one', async () => {
  vi.useFakeTimers();
  const asked: { r: number; signal: AbortSignal | undefined; answer: (p: CostPlan) => void }[] = [];
  setApi({
    kind: 'browser',
    call: (_method: string, input: { settings: { r: number } }, options?: CallOptions) =>
      new Promise<CostPlan>((answer) => asked.push({ r: input.settings.r, signal: options?.signal, answer })),
  } as unknown as ApiClient);
  const props = { task: undefined, settings: { n: 1, k: 2, r: 3, scope: 'run' as const }, rows: 10, testId: 'plan' };

  const view = render(<RunPlan {...props} request={request(3)} />);
  await act(async () => void vi.advanceTimersByTime(400));
  expect(asked.map((a) => a.r)).toEqual([3]);
  expect(asked[0]!.signal?.aborted).toBe(false);

  view.rerender(<RunPlan {...props} request={request(5)} />);
  expect(asked[0]!.signal?.aborted).toBe(true);
  await act(async () => void vi.advanceTimersByTime(400));
  expect(asked.map((a) => a.r)).toEqual([3, 5]);
  expect(asked[1]!.signal?.aborted).toBe(false);

  // The dropped plan's answer lands after the newer one's: the newer one stays.
  await act(async () => asked[1]!.answer(plan(50)));
  await act(async () => asked[0]!.answer(plan(30)));
  expect(screen.getByTestId('plan').textContent).toMatch(/^50 model calls for 10 rows/);

  // Leaving the page drops the plan still asked for.
  view.rerender(<RunPlan {...props} request={request(7)} />);
  await act(async () => void vi.advanceTimersByTime(400));
  view.unmount();
  expect(asked[2]!.signal?.aborted).toBe(true);
});
