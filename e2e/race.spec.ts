// A raced comparison in the browser (docs/method.md §16, racing): two evaluators served by scripted
// OpenAI-compatible servers of known accuracy (95 % and 50 % on the rows' gold, decided per row
// from its number, the same for the original and its paraphrases), one generator, 200 rows raced in
// rounds of 20. The weak pairing is shown worse at 95 % after a few rounds and dropped: its page
// says after how many rows and why, the heat map greys it, the strong one runs every row. Screenshots
// at both widths and themes (e2e/artifacts/compare-raced-*.png).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { judgeServer, writeRaceCsv } from '../test/helpers/judges';
import { callApi, expect, openApp, test } from './fixtures';
import { lookAt } from './look';

const ROWS = 200;

test('a raced comparison drops the pairing shown worse, says after how many rows and why, and greys it', async ({ page }) => {
  const strong = await judgeServer('judge-strong', 0.95);
  const weak = await judgeServer('judge-weak', 0.5);
  const dir = mkdtempSync(join(tmpdir(), 'tatra-e2e-race-'));
  try {
    const csv = join(dir, 'reviews.csv');
    writeRaceCsv(csv, ROWS);
    const started = await callApi<{ id: string }>('experiments.start', {
      kind: 'compare',
      spec: {
        name: 'raced judges',
        taskId: 'sst2',
        dataPath: csv,
        inputColumn: 'text',
        goldColumn: 'label',
        generators: [strong.spec],
        evaluators: [strong.spec, weak.spec],
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
