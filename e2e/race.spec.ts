// A raced comparison in the browser (docs/method.md §16, racing): two evaluators served by scripted
// OpenAI-compatible servers of known accuracy (95 % and 50 % on the rows' gold, decided per row
// from its number, the same for the original and its paraphrases), one generator, 200 rows raced in
// rounds of 20. The weak pairing is shown worse at 95 % after a few rounds and dropped: its page
// says after how many rows and why, the heat map greys it, the strong one runs every row. Screenshots
// at both widths and themes (e2e/artifacts/compare-raced-*.png).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { politeScript } from '../test/helpers/scripted-backend';
import { chatCompletion, fakeServer, json, type FakeServer, type RecordedRequest } from '../test/unit/remote/fake-server';
import { callApi, expect, openApp, test } from './fixtures';
import { lookAt } from './look';

const ROWS = 200;
const gold = (i: number) => (i % 2 === 0 ? 'positive' : 'negative');
/** Right on a share `accuracy` of the rows, which ones fixed by the row's number (a low-discrepancy sequence). */
const rightOn = (i: number, accuracy: number) => ((i * 0.6180339887) % 1) < accuracy;

/** An OpenAI-compatible server of model `id` that writes polite examples and paraphrases and labels row i right when rightOn(i, accuracy). */
function judge(id: string, accuracy: number): Promise<FakeServer> {
  const script = politeScript({
    answer: (candidate) => {
      const i = Number(/review (\d+)/.exec(candidate)?.[1] ?? 0);
      const right = gold(i);
      return rightOn(i, accuracy) ? right : right === 'positive' ? 'negative' : 'positive';
    },
  });
  return fakeServer({
    'GET /v1/models': { object: 'list', data: [{ id, object: 'model' }] },
    'POST /v1/chat/completions': async (req: RecordedRequest, res: Parameters<typeof json>[0]) => {
      const body = req.body as { messages: { role: string; content: string }[]; temperature: number; seed?: number };
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const request = { prompt: { system, user }, maxTokens: 1, temperature: body.temperature, ...(body.seed !== undefined ? { seed: body.seed } : {}) };
      const out = await script(request, { index: 0, batch: 0, stage: 'evaluation' });
      json(res, 200, chatCompletion(typeof out === 'string' ? out : out.text, id));
    },
  });
}

test('a raced comparison drops the pairing shown worse, says after how many rows and why, and greys it', async ({ page }) => {
  const strong = await judge('judge-strong', 0.95);
  const weak = await judge('judge-weak', 0.5);
  const dir = mkdtempSync(join(tmpdir(), 'tatra-e2e-race-'));
  try {
    const csv = join(dir, 'reviews.csv');
    writeFileSync(csv, `text,label\n${Array.from({ length: ROWS }, (_, i) => `"review ${i}: ${i % 2 === 0 ? 'a warm and funny film' : 'dull and far too long'}",${gold(i)}`).join('\n')}\n`);
    const spec = (s: FakeServer, id: string) => `openai+${s.origin}/v1#${id}`;
    const started = await callApi<{ id: string }>('experiments.start', {
      kind: 'compare',
      spec: {
        name: 'raced judges',
        taskId: 'sst2',
        dataPath: csv,
        inputColumn: 'text',
        goldColumn: 'label',
        generators: [spec(strong, 'judge-strong')],
        evaluators: [spec(strong, 'judge-strong'), spec(weak, 'judge-weak')],
        settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' },
        race: true,
      },
    });
    await openApp(page, `#/compare/${started.id}`);
    const detail = page.getByTestId('compare-detail');
    await expect(detail).toHaveAttribute('data-status', 'done', { timeout: 170_000 });
    // The weak pairing is dropped, with its reason; the strong one ran every row.
    const dropped = page.getByTestId('pair-row').filter({ hasText: 'judge-weak' });
    await expect(dropped.getByTestId('pair-status')).toHaveText('dropped');
    await expect(dropped.getByTestId('pair-dropped')).toHaveText(/^worse than .*judge-strong.* at 95 % after \d+ rows$/);
    const after = Number(/after (\d+) rows/.exec((await dropped.getByTestId('pair-dropped').textContent()) ?? '')![1]);
    expect(after).toBeLessThan(ROWS);
    expect(after % 20).toBe(0);
    await expect(page.getByTestId('pair-row').filter({ hasText: 'judge-strong' }).filter({ hasNotText: 'judge-weak' }).getByTestId('pair-status')).toHaveText('done');
    await expect(page.locator('[data-testid="heat-cell"][data-dropped="true"]')).toHaveCount(1);
    // Settled, the dropped pair at the rows it ran: the progress is whole, and the race says what it spared.
    await expect(page.getByTestId('compare-progress')).toContainText(`2 / 2 pairs`);
    await expect(page.getByTestId('compare-progress')).toContainText(`${ROWS + after} / ${(ROWS + after).toLocaleString('en-US')} rows`);
    await expect(page.getByTestId('compare-race')).toHaveText(new RegExp(`^Raced: \\d+ rounds? of 20 rows decided, 1 pair still in, 1 dropped: ${ROWS - after} rows not run\\.$`));
    const result = await callApi<{ race: { dropped: number; alive: number }; pairs: { rowsDone: number; dropped: { afterRows: number } | null }[] }>('experiments.get', { id: started.id });
    expect(result.race).toMatchObject({ dropped: 1, alive: 1 });
    expect(result.pairs.map((p) => p.rowsDone).sort((a, b) => a - b)).toEqual([after, ROWS]);
    await lookAt(page, 'compare-raced');
  } finally {
    await strong.close();
    await weak.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
