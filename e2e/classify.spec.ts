// Classify an input on the tiny synthetic model and watch the vote breakdown fill in; cancel a
// long run; a missing model is one clear message.
import { expect, fillClassify, nextFrame, openApp, shot, test } from './fixtures';
import { lookAt } from './look';

test('classify an input: runs, paraphrases and votes fill in live, then the final breakdown', async ({ page, server }) => {
  const n = 2;
  const r = 3;
  // Every run (no early stop), so the whole (n+1)·r grid fills (early decision has its own test).
  await fillClassify(page, server.model, { n, k: 2, r, seed: 7, earlyStop: false, input: 'A warm, funny and beautifully acted film that I will happily watch again.' });
  // Record what the page shows while it works, independent of how fast the machine is: examples
  // on screen before the verdict, and a runs × variants grid only partly filled.
  await page.evaluate(() => {
    const seen = { examplesBeforeDone: false, partialGrid: false, writing: false, cancelWhileRunning: false };
    (window as unknown as { __seen: typeof seen }).__seen = seen;
    new MutationObserver(() => {
      const status = document.querySelector('[data-testid="classify-status"]')?.textContent ?? '';
      const done = status.startsWith('Done');
      if (status.startsWith('Writing')) seen.writing = true;
      if (!done && document.querySelector('[data-testid="classify-cancel"]')) seen.cancelWhileRunning = true;
      if (!done && document.querySelector('[data-testid^="run-"] .example')) seen.examplesBeforeDone = true;
      const cells = document.querySelectorAll('[data-testid="variant-grid"] .vcell');
      const pending = document.querySelectorAll('[data-testid="variant-grid"] .vcell.pending');
      if (pending.length > 0 && pending.length < cells.length) seen.partialGrid = true;
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.getByTestId('classify-start').click();

  // Mid-run: the engine writes every run's examples and paraphrases (most of the time), then
  // evaluates all variants in one batch; the screenshot catches the generator at work when the
  // run is still going (the observer above checks the stages were shown, however fast it ran).
  await expect(page.getByTestId('run-0')).toBeVisible({ timeout: 120_000 });
  if (!((await page.getByTestId('classify-status').textContent()) ?? '').startsWith('Done')) await shot(page, 'classify-mid-run');
  const filled = page.locator('[data-testid="variant-grid"] .vcell:not(.pending)');

  // Final: every (n+1)·r cell filled, the verdict and the stage table shown.
  await expect(page.getByTestId('classify-status')).toContainText('Done', { timeout: 150_000 });
  await expect(filled).toHaveCount((n + 1) * r);
  await expect(page.locator('[data-testid="variant-grid"] .vcell.pending')).toHaveCount(0);
  const seen = await page.evaluate(() => (window as unknown as { __seen: { examplesBeforeDone: boolean; partialGrid: boolean; writing: boolean; cancelWhileRunning: boolean } }).__seen);
  expect(seen.writing, 'the status said the generator was writing').toBe(true);
  expect(seen.cancelWhileRunning, 'Cancel was offered while it ran').toBe(true);
  expect(seen.examplesBeforeDone, 'examples were on screen before the verdict').toBe(true);
  expect(seen.partialGrid, 'the grid was seen partly filled').toBe(true);
  const label = (await page.getByTestId('final-label').textContent())?.trim();
  expect(['negative', 'positive']).toContain(label);
  await expect(page.getByTestId('verdict')).toContainText('Final label');
  await expect(page.getByTestId('confidence')).toHaveText(/^\d+(\.\d)?%$/);
  await expect(page.getByTestId('stages')).toContainText('evaluation');
  // One row per label in the chart, whether or not it got votes (recharts draws no rectangle for a
  // zero-vote bar, so a unanimous vote has one rectangle: count the label axis, not the bars).
  const bars = page.getByTestId('vote-bars');
  for (const name of ['negative', 'positive']) await expect(bars.locator('svg text', { hasText: new RegExp(`^${name}$`) })).toHaveCount(1);
  await expect(bars.locator('.recharts-bar-rectangle').first()).toBeVisible();
  // Each run shows its examples grouped by label and its n paraphrases.
  for (let j = 0; j < r; j++) {
    const run = page.getByTestId(`run-${j}`);
    await expect(run.locator('ol.paras li')).toHaveCount(n + 1);
  }
  // The final page at both widths in both themes (e2e/artifacts/classify-*.png).
  await lookAt(page, 'classify');
  // The dark theme, chosen from the keyboard-reachable theme switch.
  await page.getByTestId('theme').selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.getByTestId('theme').selectOption('system');
});

test('early decision (on by default for one input): the vote stops once decided, the page says after how many runs and what it saved, and that the result is reproducible', async ({ page, server }) => {
  await fillClassify(page, server.model, { n: 2, k: 4, r: 5, seed: 3, input: 'a fine film with a clumsy ending' });
  await expect(page.getByTestId('classify-early-stop')).toBeChecked();
  // The settings and seed of the CLI's early-stop test: on the deterministic backend this vote is
  // decided after the first wave (3 of 5 runs, 12 calls saved), whatever ran before on the server.
  await page.getByTestId('classify-start').click();
  await expect(page.getByTestId('classify-status')).toContainText('Done', { timeout: 150_000 });
  await expect(page.getByTestId('decided-early')).toHaveText('decided after 3 of 5 runs · 12 calls saved');
  await expect(page.getByTestId('deterministic')).toHaveText('reproducible');
  // The grid holds the runs made: 3 runs × (original + 2 paraphrases), all filled.
  await expect(page.locator('[data-testid="variant-grid"] .vcell:not(.pending)')).toHaveCount(3 * 3);
  await expect(page.locator('[data-testid="variant-grid"] .vcell.pending')).toHaveCount(0);
  await shot(page, 'classify-decided-early');
});

test('cancel stops a long run, says so, and leaves nothing looking busy', async ({ page, server }) => {
  // The early decision off: the 30 runs are all owed, so the vote cannot end before Cancel does.
  await fillClassify(page, server.model, { n: 8, k: 8, r: 30, earlyStop: false, input: 'Not worth the ticket.' });
  await page.getByTestId('classify-start').click();
  await expect(page.getByTestId('classify-cancel')).toBeVisible();
  // Cancel once the runs are on screen, so there is something half-done to clean up.
  await expect(page.getByTestId('run-0')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('classify-cancel').click();
  await expect(page.getByTestId('classify-status')).toContainText('Cancelled', { timeout: 30_000 });
  await expect(page.getByText('Cancelled. Partial results are shown below.')).toBeVisible();
  await expect(page.getByTestId('classify-start')).toBeEnabled();
  // No "writing…" line, "…" chip or pending cell is left: what was not made says so.
  await expect(page.getByText(/writing (examples|paraphrases)…/)).toHaveCount(0);
  await expect(page.locator('.chip', { hasText: /^…$/ })).toHaveCount(0);
  await expect(page.locator('[data-testid="variant-grid"] .vcell.pending')).toHaveCount(0);
  await expect(page.getByTestId('classify-call-count')).toHaveCount(0);
});

test('validation in plain words: the limit shown before it is hit, problems said on submit', async ({ page, server }) => {
  await openApp(page, '#/classify');
  await expect(page.getByTestId('char-counter')).toHaveText('0 / 20,000 characters');
  // Nothing is flagged before anything is typed; Classify says what is missing.
  await expect(page.locator('.field-error')).toHaveCount(0);
  await page.getByTestId('classify-start').click();
  await expect(page.getByTestId('classify-input-error')).toHaveText('Type the text to classify.');
  await page.getByTestId('classify-generator').fill(server.model);
  await page.getByTestId('classify-input').fill('word '.repeat(4001));
  await expect(page.getByTestId('char-counter')).toHaveText('20,005 / 20,000 characters: 5 too many');
  await expect(page.getByTestId('classify-input-error')).toContainText('at most 20,000 characters');
  await page.getByTestId('classify-start').click();
  // Refused in the page: no run started (a start shows its status at once, rendered by the next
  // frame), no schema words anywhere.
  await nextFrame(page);
  await expect(page.getByTestId('classify-status')).toHaveCount(0);
  await expect(page.getByText(/classify\.start|Too big|expected string/)).toHaveCount(0);
});

test('a model that does not exist is one clear message', async ({ page }) => {
  await openApp(page, '#/classify');
  await page.getByTestId('classify-generator').fill('/nowhere/model.gguf');
  await page.getByTestId('classify-input').fill('Anything.');
  await page.getByTestId('classify-start').click();
  await expect(page.getByRole('alert')).toContainText('generator model not found: /nowhere/model.gguf');
});

test('a reloaded page picks up the classification it was following', async ({ page, server }) => {
  // Enough runs that the reload usually lands mid-run; the page must pick the run up either way.
  await fillClassify(page, server.model, { n: 4, k: 8, r: 8, earlyStop: false, input: 'The soundtrack alone is worth it.' });
  await page.getByTestId('classify-start').click();
  // Reload once the run has started (its status is on screen), whatever stage it is at.
  await expect(page.getByTestId('classify-status')).toBeVisible({ timeout: 60_000 });
  await page.reload();
  // The same run, still going or already finished, with the input it was started with.
  await expect(page.getByTestId('classify-status')).toBeVisible();
  await expect(page.getByTestId('run-7')).toBeVisible();
  await expect(page.getByTestId('classify-input')).toHaveValue('The soundtrack alone is worth it.');
  await expect(page.getByTestId('classify-r')).toHaveValue('8');
  await expect(page.getByTestId('classify-status')).toContainText('Done', { timeout: 150_000 });
  await expect(page.locator('[data-testid="variant-grid"] .vcell:not(.pending)')).toHaveCount(8 * 5);
  await expect(page.getByTestId('verdict')).toContainText('Final label');
});
