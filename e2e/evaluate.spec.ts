// Evaluate a small CSV the test writes: upload, preview, mapping, start, results (confusion
// matrix, curve, rows), export; and a reload mid-evaluation that finds the job carrying on.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownedTempDir } from '../electron/processes';
import { startInstantServer } from '../test/helpers/instant-server';
import { answerTo, callApi, expect, jobSettled, openApp, shot, test } from './fixtures';
import { lookAt } from './look';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The paper's own JSONL, from the data sets beside the checkout (absent in a clone on its own). */
const paper = resolve(root, '../shared/datasets/sst2_test.jsonl');
const POSITIVE = ['a wonderful, moving film', 'great acting and a clever script', 'I loved every minute of it', 'funny, warm and beautifully shot', 'a triumph', 'the best film this year'];
const NEGATIVE = ['a dull mess', 'boring and far too long', 'the plot makes no sense', 'I walked out halfway', 'flat, lifeless acting', 'a waste of two hours'];

// Each CSV's folder is removed after the file's tests (the jobs hold their rows by then); one left
// by a killed run is swept by the next (ownedTempDir names it with this process's pid).
const csvDirs: string[] = [];
test.afterAll(() => {
  for (const dir of csvDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function writeCsv(rows: number): string {
  const dir = ownedTempDir('tatra-e2e-csv-');
  csvDirs.push(dir);
  const lines = ['review,label'];
  for (let i = 0; i < rows; i++) {
    const pos = i % 2 === 0;
    const text = (pos ? POSITIVE : NEGATIVE)[Math.floor(i / 2) % 6]!;
    lines.push(`"${text}${i >= 12 ? ` (${i})` : ''}",${pos ? 1 : 0}`);
  }
  const path = join(dir, 'reviews.csv');
  writeFileSync(path, `${lines.join('\r\n')}\r\n`);
  return path;
}

/** Starts an sst2 job on a reviews CSV of `rows` rows through the API, as the page would. */
function startReviewsJob(model: string, rows: number, settings: { n: number; k: number; r: number; seed: number }, name?: string) {
  return callApi<{ id: string; rowsTotal: number }>('jobs.start', {
    taskId: 'sst2',
    dataPath: writeCsv(rows),
    inputColumn: 'review',
    goldColumn: 'label',
    labelMap: { '0': 'negative', '1': 'positive' },
    generator: model,
    evaluator: model,
    settings: { ...settings, scope: 'run' },
    ...(name ? { name } : {}),
  });
}

test('evaluate a CSV: preview, map, run, see the confusion matrix, export', async ({ page, server }) => {
  const csv = writeCsv(8);
  await openApp(page, '#/evaluate');
  await page.getByTestId('file-input').setInputFiles(csv);

  // Preview: columns guessed, 0/1 suggested as the task's labels by index.
  await expect(page.getByTestId('preview-table')).toContainText('a wonderful, moving film');
  await expect(page.getByTestId('mapping')).toContainText('8 rows');
  await expect(page.getByTestId('input-column')).toHaveValue('review');
  await expect(page.getByTestId('gold-column')).toHaveValue('label');
  await expect(page.getByLabel('Label for 0')).toHaveValue('negative');
  await expect(page.getByLabel('Label for 1')).toHaveValue('positive');

  await page.getByTestId('eval-task').selectOption('sst2');
  await page.getByTestId('eval-generator').fill(server.model);
  await page.getByTestId('eval-evaluator').fill(server.model);
  await page.getByTestId('eval-n').fill('1');
  await page.getByTestId('eval-k').fill('2');
  await page.getByTestId('eval-r').fill('2');
  // The host's plan beside Start, once everything is chosen: calls, tokens and time, as --dry-run says them.
  const plan = page.getByTestId('eval-plan');
  await expect(plan).toHaveAttribute('data-plan', 'host', { timeout: 30_000 });
  await expect(plan).toContainText(/model calls for 8 rows · [\d,]+ \+ [\d,]+ tokens/);
  // …and what those rows can tell apart (docs/method.md §16), as --dry-run's power line says it.
  await expect(page.getByTestId('eval-plan-power')).toContainText(/with 8 rows, .* \(80 % power at 95 %; disagreement [\d.]+ %/);
  await shot(page, 'evaluate-setup');
  const started = answerTo(page, 'jobs.start');
  await page.getByTestId('eval-start').click();
  await started;

  await expect(page.getByTestId('job-view')).toBeVisible();
  await expect(page.getByTestId('job-status').first()).toHaveText('done', { timeout: 150_000 });
  await expect(page.getByTestId('job-progress')).toContainText('8 / 8 rows');
  await expect(page.getByTestId('job-deterministic')).toHaveText('reproducible');

  const matrix = page.getByTestId('confusion-matrix');
  await expect(matrix).toBeVisible();
  const cells = matrix.locator('.cell');
  // 2 gold × 2 predicted labels, plus a "(none)" column only when some row had no valid vote.
  expect([4, 6]).toContain(await cells.count());
  const counts = (await cells.allTextContents()).map(Number);
  expect(counts.reduce((a, b) => a + b, 0)).toBe(8);
  await expect(page.getByTestId('runs-curve')).toBeVisible();
  // The vote after j runs and run j alone, each with its Wilson interval (its table for screen readers).
  const runsRow = page.getByTestId('runs-curve-text').locator('tbody tr').first();
  await expect(runsRow.locator('td')).toHaveCount(4);
  for (const cell of [1, 3]) await expect(runsRow.locator('td').nth(cell)).toHaveText(/^\d+\.\d–\d+\.\d%$/);
  await expect(page.getByTestId('confidence-histogram')).toBeVisible();

  // How far to trust the labels: the reliability diagram and the accuracy–coverage curve, each with
  // its numbers as a table for screen readers.
  const reliability = page.getByTestId('reliability-diagram');
  const coverage = page.getByTestId('coverage-curve');
  await expect(reliability.locator('svg').first()).toBeVisible();
  await expect(coverage.locator('svg').first()).toBeVisible();
  await expect(page.getByTestId('reliability-diagram-text')).toContainText('Vote share bin');
  await expect(page.getByTestId('coverage-curve-text')).toContainText('Coverage');
  await expect(page.getByTestId('answered')).toContainText('Answers 100.0% of the scored rows');
  await page.getByTestId('trust').scrollIntoViewIfNeeded();
  await shot(page, 'evaluate-trust');
  // The slider at its top: only unanimous rows are answered; the others are marked abstained.
  await page.getByTestId('min-confidence').fill('1');
  await expect(page.getByTestId('answered')).toContainText(/Answers|No row reaches/);

  await expect(page.getByTestId('rows-total')).toHaveText('8 rows');
  await expect(page.getByTestId('row')).toHaveCount(8);
  const metrics = await callApi<{ accuracy: number }>('jobs.metrics', { jobId: page.url().split('/').pop() });
  const wrong = Math.round((1 - metrics.accuracy) * 8);
  await page.getByTestId('filter-wrong').click();
  await expect(page.getByTestId('rows-total')).toHaveText(`${wrong} rows`);
  await page.getByTestId('filter-all').click();
  await page.getByTestId('row').first().click();
  await expect(page.getByTestId('row-detail')).toContainText('Run 1');
  await expect(page.getByTestId('row-detail')).toContainText('Examples');
  await lookAt(page, 'evaluate-results');

  const download = page.waitForEvent('download');
  await page.getByTestId('export-csv').click();
  const file = await (await download).path();
  const text = readFileSync(file, 'utf8').trim().split(/\r?\n/);
  expect(text[0]).toContain('prediction');
  expect(text).toHaveLength(9);
  await expect(page.getByTestId('export-done')).toContainText('.csv');

  // The history lists it.
  await page.getByTestId('nav-evaluate').click();
  await page.evaluate(() => (window.location.hash = '#/evaluate'));
  await expect(page.getByTestId('history')).toContainText('reviews');
});

test('the gold column is preselected: a CSV label column (uploaded or by path) and the paper JSONL (solution); the set-up survives a reload', async ({ page }) => {
  test.skip(!existsSync(paper), `${paper} is absent: the paper's JSONL is read from the data sets beside the checkout`);
  const dir = ownedTempDir('tatra-e2e-csv-');
  csvDirs.push(dir);
  const csv = join(dir, 'sentences.csv');
  writeFileSync(csv, `sentence,label\n${POSITIVE.map((t) => `"${t}",positive`).join('\n')}\n${NEGATIVE.map((t) => `"${t}",negative`).join('\n')}\n`);
  await openApp(page, '#/evaluate');
  await page.getByTestId('eval-task').selectOption('sst2');
  const gold = page.getByTestId('gold-column');

  await page.getByTestId('file-input').setInputFiles(csv);
  await expect(page.getByTestId('mapping')).toContainText('sentences.csv');
  await expect(page.getByTestId('input-column')).toHaveValue('sentence');
  await expect(gold).toHaveValue('label');
  await expect(page.getByLabel('Label for positive')).toHaveValue('positive');
  await expect(page.getByLabel('Label for negative')).toHaveValue('negative');
  await expect(page.getByTestId('eval-no-gold')).toHaveCount(0);
  // The plan before Start names the chosen rows, the host's plan as the call count before it: wait
  // for the host's (it replaces the call count once the settings settle) rather than race it.
  await expect(page.getByTestId('eval-plan')).toHaveAttribute('data-plan', 'host', { timeout: 30_000 });
  await expect(page.getByTestId('eval-plan')).toContainText('12 rows');

  // The same file given as a path.
  await page.getByTestId('data-path').fill(csv);
  await page.getByTestId('data-preview').click();
  await expect(page.getByTestId('mapping')).toContainText('12 rows');
  await expect(gold).toHaveValue('label');

  // The paper's own JSONL: messages in, the gold label in "solution".
  await page.getByTestId('data-path').fill(paper);
  await page.getByTestId('data-preview').click();
  await expect(page.getByTestId('mapping')).toContainText('1,821 rows');
  await expect(gold).toHaveValue('solution');
  await expect(page.getByLabel('Label for positive')).toHaveValue('positive');
  // "None" is honoured when it is the user's choice, and warned about.
  await gold.selectOption('');
  await expect(page.getByTestId('eval-no-gold')).toBeVisible();
  await gold.selectOption('solution');
  await page.getByTestId('eval-limit').fill('40');
  await page.getByLabel('Label for negative').selectOption('');

  // A reload keeps the file, the columns, the mapping and the limit.
  await page.reload();
  await expect(page.getByTestId('mapping')).toContainText('sst2_test.jsonl');
  await expect(gold).toHaveValue('solution');
  await expect(page.getByLabel('Label for negative')).toHaveValue('');
  await expect(page.getByLabel('Label for positive')).toHaveValue('positive');
  await expect(page.getByTestId('eval-limit')).toHaveValue('40');
  await expect(page.getByTestId('eval-plan')).toHaveAttribute('data-plan', 'host', { timeout: 30_000 });
  await expect(page.getByTestId('eval-plan')).toContainText('40 rows');
  await lookAt(page, 'evaluate-setup');
});

test('progress moves in model calls before the first row finishes', async ({ page }) => {
  // One row of many calls: 3 runs × 2 label calls of examples, then per run 1 paraphrase call and
  // 9 evaluations. Its model is an OpenAI-compatible server that holds its answers twice while that
  // row runs (after 8 calls: the examples and two paraphrases; then after one more), so the page is
  // looked at while calls are counted and the row cannot be done, however fast the machine.
  const remote = await startInstantServer({ kind: 'vllm' });
  try {
    await remote.hold(8);
    const job = await startReviewsJob(`openai+${remote.origin}/v1#m`, 1, { n: 8, k: 2, r: 3, seed: 5 }, 'one long row');
    await remote.heldAtLeast(1);
    await openApp(page, `#/evaluate/${job.id}`);
    const card = page.getByTestId('job-progress');
    await expect(card).toHaveAttribute('data-phase', 'rows');
    await expect(card).toHaveAttribute('data-calls-done', '8');
    await expect(card).toHaveAttribute('data-done', '0');
    // Answered: the held calls and one more (at most 28 of the row's 30 with the examples' 6).
    await remote.release(1);
    await remote.heldAtLeast(1);
    await expect.poll(async () => Number(await card.getAttribute('data-calls-done')), { message: 'model calls counted while the only row was still running' }).toBeGreaterThan(8);
    await expect(card).toHaveAttribute('data-done', '0');
    await remote.release();
    await expect(page.getByTestId('job-status').first()).toHaveText('done', { timeout: 150_000 });
    await expect(card).toContainText('1 / 1 row');
  } finally {
    remote.stop();
  }
});

test('reload the page mid-evaluation and see it carry on', async ({ page }) => {
  // The job's model is an OpenAI-compatible server that stops answering after 30 calls: the job is
  // still running when the page reloads, however fast the machine, and carries on once it answers.
  const ROWS = 40;
  const remote = await startInstantServer({ kind: 'vllm' });
  try {
    await remote.hold(30);
    const job = await startReviewsJob(`openai+${remote.origin}/v1#m`, ROWS, { n: 1, k: 2, r: 2, seed: 3 }, 'reload test');
    expect(job.rowsTotal).toBe(ROWS);
    await remote.heldAtLeast(1);
    await openApp(page, `#/evaluate/${job.id}`);
    const progress = page.getByTestId('job-progress');
    await expect(progress).toHaveAttribute('data-calls-done', '30');
    const before = Number(await progress.getAttribute('data-done'));
    expect(before).toBeLessThan(ROWS);

    await page.reload();
    await expect(page.getByTestId('job-view')).toBeVisible();
    await expect(page.getByTestId('job-status').first()).toHaveText('running');
    await expect(progress).toHaveAttribute('data-calls-done', '30');
    await remote.release();
    // Still advancing after the reload, to the end.
    await expect.poll(async () => Number(await progress.getAttribute('data-done')), { timeout: 150_000 }).toBeGreaterThan(before);
    await expect(page.getByTestId('job-status').first()).toHaveText('done', { timeout: 150_000 });
    await expect(progress).toContainText(`${ROWS} / ${ROWS} rows`);
    await expect(page.getByTestId('confusion-matrix')).toBeVisible();
  } finally {
    remote.stop();
  }
});

test('pause and resume from the page; a file that cannot be read is one clear message', async ({ page }) => {
  const ROWS = 40;
  await openApp(page, '#/evaluate');
  await page.getByTestId('data-path').fill('/nowhere/data.csv');
  await page.getByTestId('data-preview').click();
  await expect(page.getByRole('alert')).toContainText('Cannot read the file');
  await expect(page.getByRole('alert')).toContainText('/nowhere/data.csv');

  // The job's model is an OpenAI-compatible server that stops answering after 30 calls (a few rows
  // in): the job is running, and cannot finish, when Pause is clicked, however fast the machine.
  const remote = await startInstantServer({ kind: 'vllm' });
  try {
    await remote.hold(30);
    const job = await startReviewsJob(`openai+${remote.origin}/v1#m`, ROWS, { n: 1, k: 2, r: 1, seed: 4 }, 'pause test');
    await remote.heldAtLeast(1);
    await openApp(page, `#/evaluate/${job.id}`);
    await expect(page.getByTestId('job-status').first()).toHaveText('running');
    await page.getByTestId('job-pause').click();
    await expect(page.getByTestId('job-status').first()).toHaveText('paused');
    const progress = page.getByTestId('job-progress');
    const at = Number(new RegExp(`(\\d+) / ${ROWS}`).exec((await progress.textContent()) ?? '')![1]);
    expect(at).toBeLessThan(ROWS);
    // Paused means paused: the job is stored paused at the rows the page shows (its runner has
    // ended by the time the status says paused, so nothing can advance them).
    const stored = await callApi<{ status: string; rowsDone: number }>('jobs.get', { jobId: job.id });
    expect(stored).toMatchObject({ status: 'paused', rowsDone: at });
    await expect(progress).toContainText(`${at} / ${ROWS} rows`);
    // The history offers to resume it too.
    await page.evaluate(() => (window.location.hash = '#/evaluate'));
    await expect(page.getByTestId('history-row').filter({ hasText: 'pause test' }).getByRole('button', { name: 'Resume' })).toBeVisible();
    await page.evaluate((id) => (window.location.hash = `#/evaluate/${id}`), job.id);
    await remote.release();
    await page.getByTestId('job-resume').click();
    await expect(page.getByTestId('job-status').first()).toHaveText('done', { timeout: 150_000 });
    await expect(progress).toContainText(`${ROWS} / ${ROWS} rows`);
  } finally {
    remote.stop();
  }
});

test('a large job: the rows table renders a window of rows and pages in the rest as it scrolls', async ({ page, server }) => {
  // 1,500 rows at n=0, k=2, r=1: one evaluator call per row, answered at once by an
  // OpenAI-compatible server (what is checked is the table, not the model).
  const remote = await startInstantServer({ kind: 'vllm' });
  let job: { id: string };
  try {
    job = await startReviewsJob(`openai+${remote.origin}/v1#m`, 1500, { n: 0, k: 2, r: 1, seed: 1 });
    expect(await jobSettled(server.url, job.id)).toBe('done');
  } finally {
    remote.stop();
  }

  await openApp(page, `#/evaluate/${encodeURIComponent(job.id)}`);
  await expect(page.getByTestId('rows-total')).toHaveText('1,500 rows');
  const body = page.getByTestId('rows-body');
  const rendered = body.locator('.vt-row');
  await expect(rendered.first()).toContainText('1');
  // Virtualised: only the visible window (plus overscan) is in the DOM, not 1,500 rows.
  expect(await rendered.count()).toBeLessThan(60);

  // Scrolling to the end pages the last rows in from the main process.
  await body.evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await expect(body.locator('.vt-row', { hasText: '(1499)' })).toBeVisible({ timeout: 15_000 });
  expect(await rendered.count()).toBeLessThan(60);
});

test('a budget stops an evaluation cleanly, and a larger one resumes it', async ({ page, server }) => {
  // 2 runs × 2 label calls of examples, then 2 paraphrase calls and 4 evaluations at most per row.
  const job = await callApi<{ id: string; rowsTotal: number }>('jobs.start', {
    taskId: 'sst2',
    dataPath: writeCsv(6),
    inputColumn: 'review',
    goldColumn: 'label',
    labelMap: { '0': 'negative', '1': 'positive' },
    generator: server.model,
    evaluator: server.model,
    settings: { n: 1, k: 2, r: 2, seed: 5, scope: 'run' },
    budget: { kind: 'calls', limit: 16 },
    name: 'budget test',
  });
  await openApp(page, `#/evaluate/${job.id}`);
  const banner = page.getByTestId('job-budget-stop');
  await expect(banner).toBeVisible({ timeout: 150_000 });
  await expect(page.getByTestId('job-status').first()).toHaveText('paused');
  await expect(banner).toContainText('calls=16');
  const stopped = await callApi<{ rowsDone: number; usage: { calls: { total: number } } }>('jobs.get', { jobId: job.id });
  expect(stopped.usage.calls.total).toBeLessThanOrEqual(16);
  expect(stopped.rowsDone).toBe(2);
  await shot(page, 'evaluate-budget');
  await page.getByTestId('job-budget-new').fill('calls=1000');
  await page.getByTestId('job-budget-resume').click();
  await expect(page.getByTestId('job-status').first()).toHaveText('done', { timeout: 150_000 });
  await expect(page.getByTestId('job-progress')).toContainText('6 / 6 rows');
  await expect(banner).toHaveCount(0);
});

test('a link to an evaluation that does not exist (deleted, or from another data folder) says so, on its page and its review page, and leads back', async ({ page }) => {
  for (const hash of ['#/evaluate/no-such-job', '#/evaluate/no-such-job/review']) {
    await openApp(page, hash);
    const missing = page.getByTestId('job-missing');
    await expect(missing).toContainText('No evaluation no-such-job');
    // Said once, in place of the page: no notice beside it, nothing left loading.
    await page.waitForLoadState('networkidle');
    await expect(page.locator('.notice')).toHaveCount(0);
    await expect(page.getByText(/Loading/)).toHaveCount(0);
  }
  await lookAt(page, 'job-missing');
  await page.getByTestId('job-missing').getByRole('button', { name: /Evaluations/ }).click();
  await expect(page.getByTestId('job-missing')).toHaveCount(0);
  await expect(page).toHaveURL(/#\/evaluate$/);
});
