// Models and Compare in browser mode, against `tatra serve`, real files and real inference: the
// library with an unusable file and its reason, hardware and fit badges; a download from a local
// HTTP server the test starts, with live progress; a 2×2 generator × evaluator comparison with its
// table, heatmap and chart.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startInstantServer } from '../test/helpers/instant-server';
import { ensureSyntheticModel } from '../tools/synthetic-gguf';
import { answerTo, callApi, expect, openApp, test } from './fixtures';
import { lookAt } from './look';

/**
 * Serves one file in steps, with Range, so the page can show the progress bar moving. A request
 * from the start stops sending at half the file and holds there (a byte a second) until the client
 * goes (the cancel under test), however slow the machine; a ranged request (the resume) is sent to its end.
 */
async function slowServer(body: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const slice = body.subarray(start);
    res.writeHead(m ? 206 : 200, {
      'content-length': slice.length,
      'accept-ranges': 'bytes',
      ...(m ? { 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` } : {}),
    });
    const step = Math.ceil(body.length / 60);
    let sent = 0;
    const pump = () => {
      if (res.destroyed) return;
      if (sent >= slice.length) return void res.end();
      // Held at half: a byte a second, so the download's idle timeout never ends it meanwhile.
      const held = !m && sent >= slice.length / 2;
      res.write(slice.subarray(sent, sent + (held ? 1 : step)));
      sent += held ? 1 : step;
      setTimeout(pump, held ? 1000 : 50);
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('the library lists models and unusable files with reasons, with hardware and fit', async ({ page, server }) => {
  const folder = mkdtempSync(join(tmpdir(), 'tatra-e2e-lib-'));
  try {
    copyFileSync(server.model, join(folder, 'tiny-copy.gguf'));
    writeFileSync(join(folder, 'notes.gguf'), 'not a model at all\n');
    const bytes = readFileSync(server.model);
    writeFileSync(join(folder, 'cut.gguf'), bytes.subarray(0, Math.floor(bytes.length / 3)));

    await openApp(page, '#/models');
    await expect(page.getByTestId('hardware-card')).toContainText('RAM free');
    // The backend the fit checks are made against (the server's own, or TATRA_GPU_STANDIN's).
    await expect(page.getByTestId('gpu-backend')).toContainText(/^GPU backend(CUDA|Metal|Vulkan|none \(CPU\))/);
    await page.getByTestId('add-path').fill(folder);
    await page.getByTestId('add-folder').click();
    const row = page.getByTestId('model-row').filter({ hasText: join(folder, 'tiny-copy.gguf') });
    await expect(row).toBeVisible();
    await expect(row).toContainText('qwen2');
    await expect(row).toContainText('Q8_0');
    await expect(row.getByTestId('fit-badge')).toContainText(/fits/);
    const invalid = page.getByTestId('invalid-row');
    await expect(invalid.filter({ hasText: 'notes.gguf' })).toContainText('does not start with "GGUF"');
    await expect(invalid.filter({ hasText: 'cut.gguf' })).toContainText('truncated');
    await expect(page.getByTestId('catalog-row')).toHaveCount(5);
    await lookAt(page, 'models');

    // Remembered by the server, referenced in place.
    const listing = await callApi<{ folders: string[] }>('models.list');
    expect(listing.folders).toContain(folder);
    await callApi('models.remove', { path: folder });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test('a download shows live progress, can be cancelled and resumed, and ends verified in the library', async ({ page, server }) => {
  // The whole-vocabulary tiny model: 16 MB, enough to watch, cancel and resume.
  const body = readFileSync(await ensureSyntheticModel('tiny-full'));
  const fileName = `e2e-download-${process.pid}.gguf`;
  const target = join(server.modelsDir, fileName);
  const http = await slowServer(body);
  try {
    await openApp(page, '#/models');
    await page.getByTestId('download-input').fill(`${http.url}/files/${fileName}`);
    await page.getByTestId('download-button').click();
    const row = page.getByTestId('download-row').filter({ hasText: fileName });
    await expect(row).toHaveAttribute('data-status', 'downloading');
    await expect(row.getByTestId('download-stats')).toContainText(/of 15\.6 MiB · .*\/s · ETA/);
    const bar = row.getByRole('progressbar');
    // Past 10 % (aria-valuenow is a whole percentage).
    await expect(bar).toHaveAttribute('aria-valuenow', /^(1[1-9]|[2-9]\d|100)$/);
    await page.screenshot({ path: 'e2e/artifacts/models-download.png', fullPage: true });
    // Cancel mid-way: the partial file is offered for resuming, and resuming finishes the file.
    await row.getByRole('button', { name: 'Cancel' }).click();
    await expect(row).toHaveAttribute('data-status', 'cancelled');
    const partial = page.getByTestId('partial-row').filter({ hasText: fileName });
    await expect(partial).toContainText(/of 15\.6 MiB · from http/);
    await partial.getByRole('button', { name: 'Resume' }).click();
    const resumed = page.getByTestId('download-row').filter({ hasText: fileName }).filter({ has: page.locator('[data-testid="download-stats"]', { hasText: 'resumed at' }) });
    await expect(resumed).toBeVisible();
    await page.screenshot({ path: 'e2e/artifacts/models-download-resumed.png', fullPage: true });
    await expect(page.getByTestId('download-row').filter({ hasText: fileName }).first()).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
    await expect(page.getByTestId('download-row').filter({ hasText: fileName }).first().getByTestId('download-stats')).toContainText('verified');
    await expect(page.getByTestId('model-row').filter({ hasText: fileName })).toBeVisible();
    expect(readFileSync(target).equals(body)).toBe(true);

    // A download that never started (nothing listens there) fails with its reason, offers no
    // "Resume", and can be dismissed.
    await page.getByTestId('download-input').fill('http://127.0.0.1:9/never.gguf');
    await page.getByTestId('download-button').click();
    const failed = page.getByTestId('download-row').filter({ hasText: 'never.gguf' });
    await expect(failed).toHaveAttribute('data-status', 'error');
    await expect(page.getByRole('button', { name: 'Resume' })).toHaveCount(0);
    await failed.getByTestId('download-dismiss').click();
    await expect(failed).toHaveCount(0);
    expect((await callApi<{ fileName: string }[]>('models.downloads')).some((d) => d.fileName === 'never.gguf')).toBe(false);
  } finally {
    await http.close();
    rmSync(target, { force: true });
    rmSync(`${target}.partial`, { force: true });
    rmSync(`${target}.partial.json`, { force: true });
  }
});

test('a 2×2 comparison fills the pair table, the heatmap and the chart', async ({ page, server }) => {
  // Generators: the two tiny models. Evaluators: the first of them and an OpenAI-compatible
  // server that holds its answers until the test has seen a pair running: on the tiny models the
  // four pairs end in a second or two, before the page could show one running on a fast day.
  const a = server.model;
  const b = await ensureSyntheticModel('tiny-b');
  const remote = await startInstantServer({ kind: 'vllm' });
  const r = `openai+${remote.origin}/v1#m`;
  const dir = mkdtempSync(join(tmpdir(), 'tatra-e2e-cmp-'));
  mkdirSync(dir, { recursive: true });
  const csv = join(dir, 'reviews.csv');
  writeFileSync(csv, 'text,label\n"a warm, funny and moving film",positive\n"dull, slow and far too long",negative\n');
  try {
    await remote.hold();
    await openApp(page, '#/compare');
    await page.getByTestId('compare-task').selectOption('sst2');
    // The same data steps as Evaluate: the file, its columns (guessed), the label mapping.
    await page.getByTestId('data-path').fill(csv);
    await page.getByTestId('data-preview').click();
    await expect(page.getByTestId('gold-column')).toHaveValue('label');
    await expect(page.getByLabel('Label for positive')).toHaveValue('positive');
    for (const [list, models] of [['compare-generators', [a, b]], ['compare-evaluators', [a, r]]] as const) {
      for (const m of models) {
        await page.getByTestId(list).getByPlaceholder('/path/to/model.gguf').fill(m);
        await page.getByTestId(list).getByRole('button', { name: 'Add' }).click();
      }
    }
    await page.getByTestId('compare-n').fill('1');
    await page.getByTestId('compare-k').fill('2');
    await page.getByTestId('compare-r').fill('1');
    await page.getByTestId('compare-limit').fill('2');
    // A budget for all pairs together, far above what they need: recorded, never reached.
    await page.getByTestId('compare-budget').fill('calls=100000');
    const started = answerTo(page, 'experiments.start');
    await page.getByTestId('compare-start').click();
    await started;

    // The comparison opens on its own page (#/compare/ID), the one experiment page a sweep has too,
    // with the same progress card and actions.
    const result = page.getByTestId('compare-detail');
    await expect(result).toBeVisible();
    expect(page.url()).toMatch(/#\/compare\/.+/);
    await expect(page.getByTestId('pair-row')).toHaveCount(4);
    await expect(page.getByTestId('compare-progress')).toContainText('/ 4 pairs');
    // The first pair to ask the server waits on it: that pair is running, and the page says so.
    await remote.heldAtLeast(1);
    await expect(page.getByTestId('pair-row').filter({ has: page.locator('.chip.run') })).toHaveCount(1);
    await expect(page.getByTestId('compare-pause')).toBeVisible();
    // One pair scored is best only so far, not told apart from pairs with no score yet.
    await expect(page.getByTestId('compare-tied')).toContainText('(the only pair scored so far)');
    await page.screenshot({ path: 'e2e/artifacts/compare-running.png', fullPage: true });
    await remote.release();
    await expect(result).toHaveAttribute('data-status', 'done', { timeout: 170_000 });
    await expect(page.getByTestId('compare-progress')).toContainText('4 / 4 pairs');
    await expect(page.getByTestId('compare-pause')).toHaveCount(0);
    await expect(page.getByTestId('pair-row').filter({ hasText: 'done' })).toHaveCount(4);
    const cells = page.getByTestId('heat-cell');
    await expect(cells).toHaveCount(4);
    for (let i = 0; i < 4; i++) await expect(cells.nth(i)).toHaveText(/^\d+\.\d%( ★)?$/);
    // Every accuracy with its Wilson interval; on 2 rows nothing is told apart from the best, so all
    // four are tied for best, marked in the table and the heat map, never one winner (docs/method.md §16).
    await expect(page.getByTestId('pair-interval')).toHaveCount(4);
    for (const text of await page.getByTestId('pair-interval').allTextContents()) expect(text).toMatch(/^\[\d+\.\d, \d+\.\d\]/);
    // And each macro-F1 with its bootstrap interval over the pair's rows.
    await expect(page.getByTestId('pair-macro-f1-interval')).toHaveCount(4);
    for (const text of await page.getByTestId('pair-macro-f1-interval').allTextContents()) expect(text).toMatch(/^\[\d+\.\d, \d+\.\d\]/);
    await expect(page.getByTestId('pair-tied')).toHaveCount(4);
    await expect(page.locator('[data-testid="heat-cell"][data-tied="true"]')).toHaveCount(4);
    await expect(page.getByTestId('compare-tied')).toContainText('4 pairs not told apart');
    await expect(page.getByTestId('pair-versus-best').filter({ hasText: 'Holm p' })).toHaveCount(3);
    await expect(page.getByTestId('compare-chart').locator('.recharts-bar-rectangle').first()).toBeVisible();
    // Each pair's bar carries its Wilson interval as an error bar.
    await expect(page.getByTestId('compare-chart').locator('.recharts-errorBar')).toHaveCount(4);
    await lookAt(page, 'compare');

    const list = await callApi<{ id: string; kind: string; status: string }[]>('experiments.list', { kind: 'compare' });
    expect(list[0]).toMatchObject({ kind: 'compare', status: 'done' });
    const done = await callApi<{ budget: unknown; stoppedBy: unknown }>('experiments.get', { id: list[0]!.id });
    expect(done).toMatchObject({ kind: 'compare', budget: { kind: 'calls', limit: 100000 }, stoppedBy: null });
    // Exported from its page as a sweep is: one line per pair.
    await page.getByTestId('compare-export-csv').click();
    await expect(page.getByTestId('compare-export-done')).toBeVisible();
    const csvOut = (await page.getByTestId('compare-export-done').locator('code').textContent())!;
    const lines = readFileSync(csvOut, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('generator,evaluator,status,rowsDone,rowsTotal,accuracy,macroF1,elapsedMs,tokens,error,accuracyLow,accuracyHigh,macroF1Low,macroF1High,best,versusBest,versusBestLow,versusBestHigh,rowsBothScored,pValue,adjustedP,tiedForBest');
    expect(lines.slice(1).every((l) => l.endsWith(',true'))).toBe(true);
    expect(lines).toHaveLength(5);
    // The history lists it and leads back to it.
    await page.getByRole('button', { name: '← All comparisons' }).click();
    await expect(page.getByTestId('compare-history-row').first()).toContainText('reviews.csv');
    await page.getByTestId('compare-history-row').first().getByRole('link').click();
    await expect(page.getByTestId('compare-detail')).toHaveAttribute('data-status', 'done');
  } finally {
    remote.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a budget pauses a comparison cleanly, and a larger one from its page resumes it', async ({ page, server }) => {
  const dir = mkdtempSync(join(tmpdir(), 'tatra-e2e-cmp-budget-'));
  const csv = join(dir, 'reviews.csv');
  writeFileSync(csv, 'text,label\n"a warm, funny and moving film",positive\n"dull, slow and far too long",negative\n"a small gem",positive\n');
  try {
    // One pair, 3 rows: 2 example calls, then a paraphrase and 2 evaluations per row (11 calls in all).
    const rec = await callApi<{ id: string }>('experiments.start', {
      kind: 'compare',
      spec: {
        taskId: 'sst2',
        dataPath: csv,
        generators: [server.model],
        evaluators: [server.model],
        settings: { n: 1, k: 2, r: 1, seed: 3, scope: 'run' },
        inputColumn: 'text',
        goldColumn: 'label',
        budget: { kind: 'calls', limit: 6 },
      },
    });
    await openApp(page, `#/compare/${rec.id}`);
    const banner = page.getByTestId('compare-budget-stop');
    await expect(banner).toBeVisible({ timeout: 150_000 });
    await expect(banner).toContainText('calls=6');
    await expect(page.getByTestId('compare-detail')).toHaveAttribute('data-status', 'paused');
    const stopped = await callApi<{ usage: { calls: { total: number } } | null; stoppedBy: string | null }>('experiments.get', { id: rec.id });
    expect(stopped.stoppedBy).toBe('budget');
    expect(stopped.usage?.calls.total ?? 0).toBeLessThanOrEqual(6);
    await page.getByTestId('compare-budget-new').fill('calls=1000');
    await page.getByTestId('compare-budget-resume').click();
    await expect(page.getByTestId('compare-detail')).toHaveAttribute('data-status', 'done', { timeout: 150_000 });
    await expect(banner).toHaveCount(0);
    const done = await callApi<{ usage: { calls: { total: number } } | null; budget: unknown }>('experiments.get', { id: rec.id });
    expect(done.budget).toEqual({ kind: 'calls', limit: 1000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
