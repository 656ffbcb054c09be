// A small sweep through the experiment page: upload and map a CSV, set a 2 n × 2 k × 2 r × 2 seeds
// grid, run it, and see the accuracy lines with std bands, the k × n heat map, the cost scatter,
// the points table and what sharing saved; export the CSV. And a sweep stopped by its budget is
// cancelled from its page, as a comparison is.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownedTempDir } from '../electron/processes';
import type { SweepResult } from '../electron/common/contract/sweeps';
import { answerTo, callApi, expect, openApp, shot, test } from './fixtures';
import { lookAt } from './look';

const REVIEWS = ['a wonderful, moving film', 'a dull mess', 'great acting and a clever script', 'boring and far too long', 'I loved every minute of it', 'the plot makes no sense'];

// Removed after the tests; one left by a killed run is swept by the next (named with the pid).
let csvDir: string | null = null;
test.afterAll(() => {
  if (csvDir) rmSync(csvDir, { recursive: true, force: true });
});

function reviewsCsv(): string {
  csvDir ??= ownedTempDir('tatra-e2e-sweep-');
  const csv = join(csvDir, 'reviews.csv');
  writeFileSync(csv, `review,label\r\n${REVIEWS.map((t, i) => `"${t}",${i % 2 === 0 ? 1 : 0}`).join('\r\n')}\r\n`);
  return csv;
}

test('set up, run and chart a small sweep', async ({ page, server }) => {
  test.setTimeout(420_000);
  const csv = reviewsCsv();

  await openApp(page, '#/sweep');
  await expect(page.getByRole('heading', { name: 'Sweep', level: 1 })).toBeVisible();
  await page.getByTestId('file-input').setInputFiles(csv);
  await expect(page.getByTestId('preview-table')).toContainText('a wonderful, moving film');
  await page.getByTestId('gold-column').selectOption('label');
  await expect(page.getByLabel('Label for 1')).toHaveValue('positive');
  await page.getByTestId('sweep-task').selectOption('sst2');
  await page.getByTestId('sweep-generator').fill(server.model);
  await page.getByTestId('sweep-evaluator').fill(server.model);

  // A bad grid value is flagged and blocks the start.
  await page.getByTestId('sweep-n').fill('0,x');
  await expect(page.getByTestId('sweep-start')).toBeDisabled();
  await page.getByTestId('sweep-n').fill('0,1');
  await page.getByTestId('sweep-k').fill('2,4');
  await page.getByTestId('sweep-r').fill('1,2');
  await page.getByTestId('sweep-seeds').fill('1,2');
  // The first 3 rows (positive, negative, positive): every point still has rows and seeds to vary over.
  await page.getByTestId('sweep-limit').fill('3');
  await expect(page.getByTestId('sweep-shape')).toContainText('2 n × 2 k × 2 r × 2 seeds: 8 jobs at r=2');
  await shot(page, 'sweep-setup');
  const started = answerTo(page, 'experiments.start');
  await page.getByTestId('sweep-start').click();
  await started;

  await expect(page.getByTestId('sweep-detail')).toBeVisible();
  await expect(page.getByTestId('sweep-progress')).toContainText(/\d+ \/ 8 jobs/);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('sst2: n 0,1 · k 2,4 · r 1,2 · seeds 1,2');
  await shot(page, 'sweep-running');
  await expect(page.getByTestId('sweep-status')).toHaveText('done', { timeout: 400_000 });
  await expect(page.getByTestId('sweep-progress')).toContainText('8 / 8 jobs');
  await expect(page.getByTestId('sweep-progress')).toContainText('24 / 24 rows');
  await expect(page.getByTestId('sweep-deterministic')).toHaveText('reproducible');

  // Charts: three line charts with a line per series and each point's 95 % interval (over rows and
  // seeds) as an error bar (2 series x 2 values), the heat map, the scatter.
  for (const id of ['sweep-chart-n', 'sweep-chart-k', 'sweep-chart-r']) {
    const chart = page.getByTestId(id);
    await expect(chart.locator('.recharts-line-curve')).toHaveCount(2);
    await expect(chart.locator('.recharts-errorBar')).toHaveCount(4);
  }
  await expect(page.getByTestId('sweep-heat-cell')).toHaveCount(4);
  for (const text of await page.getByTestId('sweep-heat-cell').allTextContents()) expect(text).toMatch(/^\d+\.\d%$/);
  await expect(page.getByTestId('sweep-cost').locator('.recharts-scatter-symbol')).toHaveCount(8);
  await expect(page.getByTestId('sweep-cost').locator('.recharts-errorBar')).toHaveCount(8);
  await expect(page.getByTestId('sweep-point')).toHaveCount(8);

  // What the page shows is what the API answers.
  const id = page.url().split('/').pop()!;
  const result = await callApi<SweepResult & { kind: string }>('experiments.get', { id });
  expect(result.kind).toBe('sweep');
  expect(result.points).toHaveLength(8);
  for (const p of result.points) expect(p.seeds).toEqual([1, 2]);
  const gen = result.sharing.generatorCalls;
  expect(gen.saved).toBeGreaterThan(0);
  await expect(page.locator('.metric', { hasText: 'Generator calls saved' })).toContainText(`${gen.saved} of ${gen.alone}`);
  const ev = result.sharing.evaluatorCalls;
  await expect(page.locator('.metric', { hasText: 'Evaluator calls saved' })).toContainText(`${ev.saved} of ${ev.alone}`);
  await lookAt(page, 'sweep');

  // CSV export: one line per point.
  await page.getByTestId('sweep-export-csv').click();
  await expect(page.getByTestId('sweep-export-done')).toBeVisible();
  const path = (await page.getByTestId('sweep-export-done').locator('code').textContent())!;
  const lines = readFileSync(path, 'utf8').trimEnd().split('\r\n');
  expect(lines).toHaveLength(9);
  expect(lines[0]!.startsWith('n,k,r,seeds,accuracy_mean,accuracy_std')).toBe(true);

  // The history lists it.
  await page.getByRole('button', { name: 'All sweeps' }).click();
  await expect(page.getByTestId('sweep-history-row')).toHaveCount(1);
  await expect(page.getByTestId('sweep-history-row')).toContainText('done');
});

test('a sweep stopped by its budget is cancelled from its page', async ({ page, server }) => {
  // A budget of one call: its first job stops before it sends anything, paused by the budget.
  const { id } = await callApi<{ id: string }>('experiments.start', {
    kind: 'sweep',
    spec: { taskId: 'sst2', dataPath: reviewsCsv(), inputColumn: 'review', goldColumn: 'label', labelMap: { '1': 'positive', '0': 'negative' }, generator: server.model, evaluator: server.model, grid: { n: [0, 1], k: [2], r: [1], seeds: [1] }, limit: 2, budget: { kind: 'calls', limit: 1 } },
  });
  await openApp(page, `#/sweep/${id}`);
  await expect(page.getByTestId('sweep-budget-stop')).toBeVisible({ timeout: 150_000 });
  await expect(page.getByTestId('sweep-detail')).toHaveAttribute('data-status', 'paused');
  await page.getByTestId('sweep-cancel').click();
  await expect(page.getByTestId('sweep-detail')).toHaveAttribute('data-status', 'cancelled');
  await expect(page.getByTestId('sweep-status')).toHaveText('cancelled');
  await expect(page.getByTestId('sweep-cancel')).toHaveCount(0);
  await expect(page.getByTestId('sweep-resume')).toBeVisible();
  const cancelled = await callApi<SweepResult>('experiments.get', { id });
  expect(cancelled.status).toBe('cancelled');
  expect(cancelled.jobs.map((j) => j.status)).toEqual(['cancelled', 'cancelled']);
  await page.getByRole('button', { name: 'All sweeps' }).click();
  await expect(page.getByTestId('sweep-history-row').filter({ hasText: 'cancelled' })).toHaveCount(1);
});
