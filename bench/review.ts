// How fast a large labelling job reads, in Debian's Chromium against `tatra serve` and from the CLI:
//   - the job's page (#/evaluate/<id>) until its metrics show and until its charts are drawn, opened
//     from the settled app, and `tatra jobs show <id>`, on a
//     --big-row job beside a --small-row one (the CLI's own start-up is the bound: what the
//     small job takes is what no job can take less than);
//   - the review queue's first paint (#/evaluate/<id>/review until its first row shows) on both;
//   - from a keypress (Enter: accept TATRA's label) to the next row painted, p50 and p95 over
//     --keys presses, on a --rows-row job (the goal: p95 under 50 ms).
// Each job is an sst2 job (-n 2 -k 2 -r 3) on SST-2's rows repeated to its size, run against the
// instant OpenAI-compatible server (test/helpers/instant-openai-server.ts); --reuse DIR keeps the
// data folders in DIR and runs a job only where its folder holds none (a 100,000-row job takes
// minutes to run, a few seconds to read).
//
//   npx tsx bench/review.ts [--rows 10000] [--big 100000] [--small 120] [--keys 200] [--loads 3] [--reuse /tmp/review-bench] [--tatra /path/to/other/bin/tatra.js]
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { chromium, type Page } from '@playwright/test';
import { startInstantServer } from '../test/helpers/instant-server';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    big: { type: 'string', default: '100000' },
    small: { type: 'string', default: '120' },
    keys: { type: 'string', default: '200' },
    loads: { type: 'string', default: '3' },
    reuse: { type: 'string' },
    data: { type: 'string', default: resolve(root, '..', 'shared', 'datasets', 'sst2_test.jsonl') },
    /** Another build's bin/tatra.js (its dist/ beside it), to measure a build before a change against this one. */
    tatra: { type: 'string', default: join(root, 'bin', 'tatra.js') },
  },
});
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const base = values.reuse ? resolve(values.reuse) : mkdtempSync(join(tmpdir(), 'tatra-review-bench-'));
mkdirSync(base, { recursive: true });
const run = promisify(execFile);
const tatraJs = resolve(values.tatra);
const tatra = (args: string[]) => run(process.execPath, [tatraJs, ...args], { cwd: root, maxBuffer: 64 * 1024 * 1024 });

/** SST-2's rows repeated to `rows`, each repeat marked so no two inputs are the same. */
function writeData(rows: number): string {
  const path = join(base, `sst2-${rows}.jsonl`);
  if (existsSync(path)) return path;
  const lines = readFileSync(values.data, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { messages: Array<{ content: string }> });
  const out: string[] = [];
  for (let i = 0; i < rows; i++) {
    const row = structuredClone(lines[i % lines.length]!);
    const lap = Math.floor(i / lines.length);
    if (lap > 0) row.messages[1]!.content += ` (${lap})`;
    out.push(JSON.stringify(row));
  }
  writeFileSync(path, `${out.join('\n')}\n`);
  return path;
}

/** The data folder of a `rows`-row job, and the job's id: run now unless the folder already holds one. */
async function jobOf(rows: number, model: string): Promise<{ dataDir: string; id: string; ranSeconds: number | null }> {
  const dataDir = join(base, `job-${rows}`);
  const listed = existsSync(dataDir) ? (JSON.parse((await tatra(['jobs', 'list', '--data-dir', dataDir, '--json'])).stdout) as Array<{ id: string; status: string }>) : [];
  const done = listed.find((j) => j.status === 'done');
  if (done) return { dataDir, id: done.id, ranSeconds: null };
  const t0 = performance.now();
  const out = await tatra(['eval', '--task', 'sst2', '--data', writeData(rows), '-n', '2', '-k', '2', '-r', '3', '--seed', '1', '--model', model, '--concurrency', '64', '--data-dir', dataDir, '--json']);
  const id = (JSON.parse(out.stdout) as { job: { id: string } }).job.id;
  return { dataDir, id, ranSeconds: (performance.now() - t0) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function timedShow(dataDir: string, id: string): Promise<number> {
  const t0 = performance.now();
  await tatra(['jobs', 'show', id, '--data-dir', dataDir]);
  return performance.now() - t0;
}

/** `tatra serve` on a data folder: its URL (token included) and how to stop it. */
async function serve(dataDir: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [tatraJs, 'serve', '--port', '0', '--data-dir', dataDir, '--threads', '1'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /serving at (http:\/\/\S+)/.exec(out);
      if (m) ok(m[1]!);
    });
    child.once('exit', (code) => fail(new Error(`tatra serve exited with ${code}`)));
  });
  return { url, stop: () => void child.kill('SIGTERM') };
}

/**
 * Milliseconds from navigating to `hash` to `testId` showing, on a page that has the app loaded and
 * settled (its start-up calls answered: a person opens a job from the running app, not while the
 * home page's own calls still hold the host); with `charts`, also until every chart on the page is
 * drawn (ChartFigure draws after the page's first paint).
 */
async function timedView(page: Page, url: string, hash: string, testId: string): Promise<number>;
async function timedView(page: Page, url: string, hash: string, testId: string, charts: true): Promise<[number, number]>;
async function timedView(page: Page, url: string, hash: string, testId: string, charts?: true): Promise<number | [number, number]> {
  await page.goto(url);
  await page.getByTestId('nav-tasks').waitFor();
  await page.waitForLoadState('networkidle');
  const t0 = await page.evaluate(() => performance.now());
  await page.evaluate((h) => (window.location.hash = h), hash);
  await page.getByTestId(testId).first().waitFor({ timeout: 120_000 });
  const shown = (await page.evaluate(() => performance.now())) - t0;
  if (!charts) return shown;
  await page.waitForFunction(() => document.querySelectorAll('figure[data-drawn="false"]').length === 0 && document.querySelector('[data-testid="reliability-diagram"] svg') !== null, undefined, { timeout: 120_000 });
  return [shown, (await page.evaluate(() => performance.now())) - t0];
}

/**
 * Presses Enter `keys` times on the review view, each once the row before is painted, and gives
 * each press's time from its keydown to the frame after the next row is in the page.
 */
async function keyLatencies(page: Page, keys: number): Promise<number[]> {
  await page.evaluate(() => {
    const w = window as unknown as { __lat: number[]; __pressed: number | null };
    w.__lat = [];
    w.__pressed = null;
    window.addEventListener('keydown', () => (w.__pressed = performance.now()), { capture: true });
    new MutationObserver(() => {
      const at = w.__pressed;
      if (at === null) return;
      w.__pressed = null;
      requestAnimationFrame(() => w.__lat.push(performance.now() - at));
    }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-index'], childList: true });
  });
  for (let i = 0; i < keys; i++) {
    const before = await page.getByTestId('review-row').getAttribute('data-index');
    await page.keyboard.press('Enter');
    await page.waitForFunction((prev) => document.querySelector('[data-testid="review-row"]')?.getAttribute('data-index') !== prev, before);
    await page.waitForFunction((n) => (window as unknown as { __lat: number[] }).__lat.length >= n, i + 1);
  }
  return page.evaluate(() => (window as unknown as { __lat: number[] }).__lat);
}

const server = await startInstantServer({ kind: 'openai-compatible' });
const model = `openai+${server.origin}/v1#m`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
const lines: string[] = [];
try {
  const jobs = { small: await jobOf(Number(values.small), model), keys: await jobOf(Number(values.rows), model), big: await jobOf(Number(values.big), model) };
  for (const [name, j] of Object.entries(jobs)) if (j.ranSeconds !== null) lines.push(`ran the ${name} job (${j.id}) in ${j.ranSeconds.toFixed(0)} s`);
  const loads = Number(values.loads);
  lines.push('', `| job | \`tatra jobs show\` (median of ${loads}) | job page until its metrics show | … until its charts are drawn | review queue's first row |`, '|---|---|---|---|---|');
  for (const size of ['small', 'big'] as const) {
    const j = jobs[size];
    const shows: number[] = [];
    for (let i = 0; i < loads; i++) shows.push(await timedShow(j.dataDir, j.id));
    const served = await serve(j.dataDir);
    const pageMs: number[] = [];
    const chartsMs: number[] = [];
    const queueMs: number[] = [];
    try {
      for (let i = 0; i < loads; i++) {
        const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
        const page = await context.newPage();
        const [shown, drawn] = await timedView(page, served.url, `#/evaluate/${j.id}`, 'trust', true);
        pageMs.push(shown);
        chartsMs.push(drawn);
        queueMs.push(await timedView(page, served.url, `#/evaluate/${j.id}/review`, 'review-row'));
        await context.close();
      }
    } finally {
      served.stop();
    }
    const rows = size === 'small' ? values.small : values.big;
    lines.push(`| ${Number(rows).toLocaleString('en')} rows | ${median(shows).toFixed(0)} ms | ${median(pageMs).toFixed(0)} ms | ${median(chartsMs).toFixed(0)} ms | ${median(queueMs).toFixed(0)} ms |`);
  }
  const served = await serve(jobs.keys.dataDir);
  try {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await timedView(page, served.url, `#/evaluate/${jobs.keys.id}/review`, 'review-row');
    const lat = await keyLatencies(page, Number(values.keys));
    lines.push('', `keypress (Enter) to the next row painted, ${lat.length} presses on a ${Number(values.rows).toLocaleString('en')}-row job: p50 ${quantile(lat, 0.5).toFixed(1)} ms, p95 ${quantile(lat, 0.95).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms`);
  } finally {
    served.stop();
  }
} finally {
  await browser.close();
  server.stop();
  if (!values.reuse) rmSync(base, { recursive: true, force: true });
}
console.log(lines.join('\n'));
