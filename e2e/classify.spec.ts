// Classify an input on the tiny synthetic model and watch the vote breakdown fill in; cancel a
// long run; a missing model is one clear message.
import { expect, openApp, test } from './fixtures';

test('classify an input: runs, paraphrases and votes fill in live, then the final breakdown', async ({ page, server }) => {
  await openApp(page, '#/classify');
  await page.getByTestId('classify-task').selectOption('sst2');
  await page.getByTestId('classify-generator').fill(server.model);
  const n = 3;
  const r = 3;
  await page.getByTestId('classify-n').fill(String(n));
  await page.getByTestId('classify-k').fill('4');
  await page.getByTestId('classify-r').fill(String(r));
  await page.getByTestId('classify-seed').fill('7');
  await page.getByTestId('classify-input').fill('A warm, funny and beautifully acted film that I will happily watch again.');
  await page.getByTestId('classify-start').click();

  // Mid-run: the engine writes every run's examples, then paraphrases, then evaluates; the
  // first examples are on screen while the vote is still empty.
  await expect(page.locator('[data-testid^="run-"] .example').first()).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('classify-cancel')).toBeVisible();
  await page.screenshot({ path: 'e2e/artifacts/classify-mid-run.png', fullPage: true });
  const filled = page.locator('[data-testid="variant-grid"] .vcell:not(.pending)');

  // Final: every (n+1)·r cell filled, the verdict and the stage table shown.
  await expect(page.getByTestId('classify-status')).toContainText('Done', { timeout: 150_000 });
  await expect(filled).toHaveCount((n + 1) * r);
  await expect(page.locator('[data-testid="variant-grid"] .vcell.pending')).toHaveCount(0);
  const label = (await page.getByTestId('final-label').textContent())?.trim();
  expect(['negative', 'positive']).toContain(label);
  await expect(page.getByTestId('verdict')).toContainText('Final label');
  await expect(page.getByTestId('confidence')).toHaveText(/^\d+(\.\d)?%$/);
  await expect(page.getByTestId('stages')).toContainText('evaluation');
  // One bar per label in the chart.
  await expect(page.locator('[data-testid="vote-bars"] .recharts-bar-rectangle')).toHaveCount(2);
  // Each run shows its examples grouped by label and its n paraphrases.
  for (let j = 0; j < r; j++) {
    const run = page.getByTestId(`run-${j}`);
    await expect(run.locator('ol.paras li')).toHaveCount(n + 1);
  }
  await page.screenshot({ path: 'e2e/artifacts/classify-final.png', fullPage: true });
});

test('cancel stops a long run and says so', async ({ page, server }) => {
  await openApp(page, '#/classify');
  await page.getByTestId('classify-task').selectOption('sst2');
  await page.getByTestId('classify-generator').fill(server.model);
  await page.getByTestId('classify-n').fill('8');
  await page.getByTestId('classify-k').fill('8');
  await page.getByTestId('classify-r').fill('30');
  await page.getByTestId('classify-input').fill('Not worth the ticket.');
  await page.getByTestId('classify-start').click();
  await expect(page.getByTestId('classify-cancel')).toBeVisible();
  await page.getByTestId('classify-cancel').click();
  await expect(page.getByTestId('classify-status')).toContainText('Cancelled', { timeout: 30_000 });
  await expect(page.getByText('Cancelled. Partial results are shown below.')).toBeVisible();
  await expect(page.getByTestId('classify-start')).toBeEnabled();
});

test('a model that does not exist is one clear message', async ({ page }) => {
  await openApp(page, '#/classify');
  await page.getByTestId('classify-generator').fill('/nowhere/model.gguf');
  await page.getByTestId('classify-input').fill('Anything.');
  await page.getByTestId('classify-start').click();
  await expect(page.getByRole('alert')).toContainText('generator model not found: /nowhere/model.gguf');
});
