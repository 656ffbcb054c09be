// Reviewing a job by keyboard alone (its model an OpenAI-compatible server that answers at once),
// on a `tatra serve` of this spec's own (it is killed part-way): 30 rows decided in three orders,
// with a reload of the page and a SIGKILL of the server between them, and a few keys pressed while
// the server is down; every decision is found in the job database afterwards, and the view has no
// accessibility problem.
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { ownedTempDir } from '../electron/processes';
import { startInstantServer } from '../test/helpers/instant-server';
import { queryJobDb } from '../test/helpers/tatra-cli';
import { callServer, expect, jobSettled, test } from './fixtures';
import { accessibilityProblems, lookAt } from './look';
import { startServe } from './serve';

const POSITIVE = ['a wonderful, moving film', 'great acting and a clever script', 'I loved every minute of it', 'funny, warm and beautifully shot', 'a triumph', 'the best film this year'];
const NEGATIVE = ['a dull mess', 'boring and far too long', 'the plot makes no sense', 'I walked out halfway', 'flat, lifeless acting', 'a waste of two hours'];
const ROWS = 40;

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolvePort(port));
    });
  });
}

/** The row on screen and its TATRA label (from the view itself). */
async function current(page: Page): Promise<{ index: number; prediction: string }> {
  const row = page.getByTestId('review-row');
  await expect(row).toBeVisible();
  const index = Number(await row.getAttribute('data-index'));
  const prediction = (await row.locator('.chip.label').first().textContent()) ?? '';
  return { index, prediction };
}

/**
 * Holds the page's reads of jobs until the review queue has answered, so the rows reach the page
 * before the job whose task names the labels. Returns what lets them go.
 */
async function holdJobReads(page: Page): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  await page.route('**/api/invoke', async (route) => {
    const method = String((route.request().postDataJSON() as { method?: unknown } | null)?.method ?? '');
    if (method.startsWith('jobs.')) await released;
    await route.fallback();
  });
  return async () => {
    release();
    await page.unroute('**/api/invoke');
  };
}

/** Presses `key` on the row on screen, waits for the next row (or the end), and says what was decided. */
async function decide(page: Page, key: string, labels: readonly string[]): Promise<{ index: number; label: string | null }> {
  const { index, prediction } = await current(page);
  await page.keyboard.press(key);
  await expect(page.getByTestId('review-row').or(page.getByTestId('review-empty'))).not.toHaveAttribute('data-index', String(index));
  const label = key === 'Enter' ? prediction : key === 's' ? null : /^\d$/.test(key) ? labels[Number(key) - 1]! : labels.find((l) => l.startsWith(key))!;
  return { index, label };
}

test('30 rows reviewed by keyboard alone, through a reload and a server killed part-way: every decision kept', async ({ page }) => {
  test.setTimeout(900_000);
  const dir = ownedTempDir('tatra-e2e-review-');
  const dataDir = join(dir, 'data');
  const csv = join(dir, 'reviews.csv');
  writeFileSync(csv, `review\r\n${Array.from({ length: ROWS }, (_, i) => `"${(i % 2 ? NEGATIVE : POSITIVE)[Math.floor(i / 2) % 6]} (${i})"`).join('\r\n')}\r\n`);
  const port = await freePort();
  let served = await startServe({ dataDir, port });
  try {
    // A job without gold, TATRA labelling the file: its model an OpenAI-compatible server that
    // answers at once (what is under test is the review, not the labels; the votes still differ
    // between a row's original and paraphrase, so rows differ in how sure they are).
    const remote = await startInstantServer({ kind: 'vllm' });
    let job: { id: string };
    try {
      job = await callServer<{ id: string }>(served.url, 'jobs.start', {
        taskId: 'sst2', dataPath: csv, inputColumn: 'review', goldColumn: null, generator: `openai+${remote.origin}/v1#m`, evaluator: `openai+${remote.origin}/v1#m`, settings: { n: 1, k: 2, r: 2, seed: 2, scope: 'run' },
      });
      expect(await jobSettled(served.url, job.id)).toBe('done');
    } finally {
      remote.stop();
    }
    const labels = ['negative', 'positive'];
    const expected = new Map<number, string | null>();
    const open = async () => {
      await page.goto(served.url);
      await page.evaluate((id) => (window.location.hash = `#/evaluate/${id}/review`), job.id);
      await expect(page.getByTestId('review-row')).toBeVisible();
    };
    await open();
    expect(await accessibilityProblems(page)).toEqual([]);

    // 1–10, least sure first: digits, letters, Enter, a skip; an undo taken back and the row decided again.
    for (const key of ['1', '2', 'Enter', 'n', 'p', 's', 'Enter', '2']) {
      const d = await decide(page, key, labels);
      expected.set(d.index, d.label);
    }
    const undone = (await current(page)).index;
    await page.keyboard.press('1');
    await page.keyboard.press('u');
    await expect(page.getByTestId('review-row')).toHaveAttribute('data-index', String(undone));
    for (const key of ['2', 'Enter']) {
      const d = await decide(page, key, labels);
      expected.set(d.index, d.label);
    }
    // The arrows move without deciding: back one, and on again.
    const here = (await current(page)).index;
    await page.keyboard.press('ArrowLeft');
    await expect(page.getByTestId('review-row')).not.toHaveAttribute('data-index', String(here));
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('review-row')).toHaveAttribute('data-index', String(here));

    // 11–20 after a reload.
    await page.reload();
    await expect(page.getByTestId('review-row')).toBeVisible();
    for (const key of ['Enter', '1', '2', 'Enter', 'p', 'n', 'Enter', 's', '1', 'Enter']) {
      const d = await decide(page, key, labels);
      expected.set(d.index, d.label);
    }
    await expect(page.getByTestId('review-progress')).toHaveAttribute('data-unsent', '0');

    // 21–30 in the audit order: three of them while the server is dead (SIGKILL), kept on the page
    // and sent once a new server answers.
    await page.getByTestId('review-order-audit').focus();
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('review-order-audit')).toHaveAttribute('aria-checked', 'true');
    // The queue chosen, the keyboard is back on its first row.
    await expect(page.getByTestId('review-row')).toBeFocused();
    for (const key of ['Enter', '2', '1', 'Enter']) {
      const d = await decide(page, key, labels);
      expected.set(d.index, d.label);
    }
    served.child.kill('SIGKILL');
    await new Promise((r) => served.child.once('exit', r));
    for (const key of ['Enter', 'Enter', '1']) {
      const d = await decide(page, key, labels);
      expected.set(d.index, d.label);
    }
    await expect(page.getByTestId('review-unsent')).toBeVisible();
    served = await startServe({ dataDir, port });
    // This time the rows come before the job: no row is shown until its labels are known (a
    // digit pressed on a row shown without them was lost), and it comes with the keyboard on it.
    const letJobsGo = await holdJobReads(page);
    await page.goto(served.url);
    await page.evaluate((id) => (window.location.hash = `#/evaluate/${id}/review`), job.id);
    await page.getByTestId('review-order-audit').focus();
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('review-order-audit')).toHaveAttribute('aria-checked', 'true');
    // The queue's rows are in (where review stands comes with them), the job is not: no row yet.
    await expect(page.getByTestId('review-progress')).toBeVisible();
    await expect(page.getByTestId('review-empty')).toHaveText(/Loading/);
    await expect(page.getByTestId('review-row')).toHaveCount(0);
    await letJobsGo();
    // The queue chosen, the keyboard is on its first row.
    await expect(page.getByTestId('review-row')).toBeFocused();
    for (const key of ['2', 'Enter', 'Enter']) {
      const d = await decide(page, key, labels);
      expected.set(d.index, d.label);
    }
    await expect(page.getByTestId('review-progress')).toHaveAttribute('data-unsent', '0');
    expect(expected.size).toBe(30);

    // Every decision in the job database, and nothing else decided.
    const stored = queryJobDb<{ idx: number; label: string | null }>(dataDir, 'SELECT idx, label FROM review_decisions WHERE job_id = ? ORDER BY idx', job.id);
    expect(new Map(stored.map((r) => [r.idx, r.label]))).toEqual(new Map([...expected].sort((a, b) => a[0] - b[0])));
    const reviewed = [...expected.values()].filter((l) => l !== null).length;
    await expect(page.getByTestId('review-progress')).toHaveAttribute('data-reviewed', String(reviewed));
    // The audit rows reviewed give an estimate with its interval.
    await page.reload();
    await expect(page.getByTestId('review-audit')).toContainText('95 % CI');
    expect(await accessibilityProblems(page)).toEqual([]);
    await lookAt(page, 'review');
  } finally {
    served.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
