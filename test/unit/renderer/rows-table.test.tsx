// @vitest-environment jsdom
// The rows table when its filter changes while the last filter's rows are on their way: the
// answer for the last filter lands after the new one's and is dropped (its call aborted), so the
// count and rows shown are the new filter's (row-pages.ts holds the reads).
import { afterEach, expect, it } from 'vitest';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { type ApiClient, type CallOptions, setApi } from '../../../renderer/src/api/client';
import { RowsTable } from '../../../renderer/src/components/RowsTable';

afterEach(() => {
  cleanup();
  setApi(null);
});

it('another filter while the last one’s rows are on their way shows the new filter’s count, whichever answer lands last', async () => {
  const asked: { filter: string; signal: AbortSignal | undefined; answer(total: number): void }[] = [];
  setApi({
    kind: 'browser',
    call: (_method: string, input: { filter: string }, options?: CallOptions) =>
      new Promise((resolve) => asked.push({ filter: input.filter, signal: options?.signal, answer: (total) => resolve({ total, rows: [] }) })),
  } as unknown as ApiClient);
  render(<RowsTable jobId="j1" labels={['negative', 'positive']} refreshKey="running:3" />);
  expect(asked.map((a) => a.filter)).toEqual(['all']);
  fireEvent.click(screen.getByTestId('filter-wrong'));
  expect(asked.map((a) => a.filter)).toEqual(['all', 'wrong']);
  expect(asked[0]!.signal?.aborted).toBe(true);
  await act(async () => asked[1]!.answer(40));
  await act(async () => asked[0]!.answer(1000));
  expect(screen.getByTestId('rows-total').textContent).toBe('40 rows');
});
