// A column picked in step 2 shows as picked while the file is read again for it (a large file, a
// busy host), instead of the select snapping back to the last column until the answer lands; and
// nothing starts on the last column's gold mapping meanwhile.
import { afterEach, expect, it } from 'vitest';
import { type ApiClient, setApi } from '../../../renderer/src/api/client';
import { createAppStore } from '../../../renderer/src/store';

afterEach(() => setApi(null));

const preview = (goldColumn: string | null) => ({
  path: '/data/rows.jsonl',
  format: 'jsonl',
  columns: ['input', 'solution'],
  sample: [{ input: 'a fine film', solution: 'positive' }],
  rowCount: 1,
  emptyInputs: 0,
  inputColumn: 'input',
  goldColumn,
  goldValues: goldColumn ? [{ value: 'positive', count: 1, suggested: 'positive' }] : [],
});

/** A store whose file has been read once, its gold column "solution"; each later read waits for its answer. */
async function previewedOnSolution() {
  const answers: ((v: unknown) => void)[] = [];
  setApi({ kind: 'browser', call: () => new Promise((resolve) => answers.push(resolve)) } as unknown as ApiClient);
  const store = createAppStore();
  store.getState().setDraft({ path: '/data/rows.jsonl' });
  const first = store.getState().previewData();
  answers[0]!(preview('solution'));
  await first;
  return { store, answers };
}

it('the picked gold column is the draft’s at once, and the draft is marked as being read until the answer', async () => {
  const { store, answers } = await previewedOnSolution();
  expect(store.getState().draft).toMatchObject({ goldColumn: 'solution', previewing: false });

  const none = store.getState().previewData(undefined, { goldColumn: null });
  expect(answers).toHaveLength(2);
  expect(store.getState().draft).toMatchObject({ goldColumn: null, previewing: true });
  answers[1]!(preview(null));
  await none;
  expect(store.getState().draft).toMatchObject({ goldColumn: null, previewing: false });
});

it('of two reads of the file in flight, the later pick’s answer stands, whichever lands last', async () => {
  const { store, answers } = await previewedOnSolution();

  // "none", then "solution" again before the first answer: the answers land in the other order.
  const none = store.getState().previewData(undefined, { goldColumn: null });
  const again = store.getState().previewData(undefined, { goldColumn: 'solution' });
  expect(store.getState().draft).toMatchObject({ goldColumn: 'solution', previewing: true });
  answers[2]!(preview('solution'));
  await again;
  expect(store.getState().draft).toMatchObject({ goldColumn: 'solution', previewing: false });
  store.getState().setDraft({ labelMap: { positive: '' } });
  answers[1]!(preview(null));
  await none;
  expect(store.getState().draft).toMatchObject({ goldColumn: 'solution', previewing: false, labelMap: { positive: '' } });
});
