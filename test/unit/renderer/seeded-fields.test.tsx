// @vitest-environment jsdom
// The saved settings reach a view after its first render. They seed the fields the user has not
// touched and never overwrite one already typed in (a late settings.get used to replace a typed
// model path and run settings), in Classify and in Evaluate's settings step.
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppSettings } from '../../../electron/common/contract/settings';
import { createApiClient, setApi } from '../../../renderer/src/api/client';
import { unknownMethodTransport } from '../../helpers/unknown-transport';
import { useStore } from '../../../renderer/src/store';
import { ClassifyView } from '../../../renderer/src/views/ClassifyView';
import { EvaluateView } from '../../../renderer/src/views/EvaluateView';

const transport = unknownMethodTransport;

const saved: AppSettings = {
  theme: 'system',
  generator: '/models/saved-generator.gguf',
  evaluator: '/models/saved-evaluator.gguf',
  tatra: { n: 7, k: 6, r: 5, seed: 42, scope: 'input' },
  modelsDirs: [],
};

beforeAll(() => setApi(createApiClient(transport)));
beforeEach(() => useStore.setState({ settings: null }));
afterEach(cleanup);
afterAll(() => setApi(null));

const field = (id: string) => screen.getByTestId(id) as HTMLInputElement;

describe.each([
  ['classify', () => <ClassifyView />, 'classify-generator'],
  ['eval', () => <EvaluateView />, 'eval-generator'],
])('%s: saved settings arriving late', (prefix, view, generatorId) => {
  it('seed the untouched fields and keep what the user typed', () => {
    render(view());
    fireEvent.change(field(generatorId), { target: { value: '/models/typed.gguf' } });
    fireEvent.change(field(`${prefix}-n`), { target: { value: '3' } });
    act(() => useStore.setState({ settings: saved }));
    expect(field(generatorId).value).toBe('/models/typed.gguf');
    expect(field(`${prefix}-n`).value).toBe('3');
    // Untouched: from the saved settings.
    expect(field(`${prefix}-k`).value).toBe('6');
    expect(field(`${prefix}-r`).value).toBe('5');
    expect(field(`${prefix}-seed`).value).toBe('42');
    expect((screen.getByTestId(`${prefix}-scope`) as HTMLSelectElement).value).toBe('input');
  });

  it('fill every field when nothing was typed, and a later save does not reset a typed field', () => {
    render(view());
    act(() => useStore.setState({ settings: saved }));
    expect(field(generatorId).value).toBe('/models/saved-generator.gguf');
    expect(field(`${prefix}-n`).value).toBe('7');
    fireEvent.change(field(`${prefix}-k`), { target: { value: '2' } });
    act(() => useStore.setState({ settings: { ...saved, tatra: { ...saved.tatra, k: 8 } } }));
    expect(field(`${prefix}-k`).value).toBe('2');
  });
});
