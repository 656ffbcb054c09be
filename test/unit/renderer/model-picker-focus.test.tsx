// @vitest-environment jsdom
// A model picker whose field has the focus keeps the text it had when it took it: the library
// arriving then (a busy server) no longer swaps the typed path for the model's name under the
// caret, where what is typed next landed beside the name ("TATRA synthetic tiny/models/…", a value
// that is no model; seen in e2e/pickers.spec under load). Once the field is left, the name shows.
import { afterEach, expect, it } from 'vitest';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { type ApiClient, setApi } from '../../../renderer/src/api/client';
import { ModelPicker } from '../../../renderer/src/components/ModelPicker';
import { useStore } from '../../../renderer/src/store';

afterEach(() => {
  cleanup();
  setApi(null);
});

it('keeps the focused field’s text when the library arrives, and names the model once the field is left', async () => {
  // The library and remote models are asked for and never answered here: the test says when they arrive.
  setApi({ kind: 'browser', call: () => new Promise(() => undefined), on: () => () => undefined, onAny: () => () => undefined } as unknown as ApiClient);
  const path = '/models/tiny.gguf';
  render(<ModelPicker label="Generator" value={path} onChange={() => undefined} testId="gen" />);
  const field = screen.getByTestId('gen') as HTMLInputElement;
  expect(field.value).toBe(path);
  act(() => field.focus());
  await act(async () => useStore.setState({ library: { models: [{ path, name: 'TATRA synthetic tiny', architecture: 'qwen2', parameters: 1e7, quantization: 'Q8_0', sizeBytes: 16e6 }] } as never }));
  expect(field.value).toBe(path);
  act(() => field.blur());
  expect(field.value).toBe('TATRA synthetic tiny');
  // Focused again, it keeps the name as shown; typing replaces it.
  act(() => field.focus());
  fireEvent.change(field, { target: { value: '/models/other.gguf' } });
  expect(field.value).toBe('/models/other.gguf');
});
