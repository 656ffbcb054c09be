// How soon the page paints, in Debian's Chromium: each built renderer folder given is served as
// files (no host behind it: the shell paints, its calls fail), loaded --loads times with the cache
// off, and the first contentful paint, DOMContentLoaded and the bytes of script fetched printed as
// medians, side by side.
//
//   npx tsx bench/first-paint.ts dist/renderer [/tmp/renderer-before] [--loads 9] [--view tasks]
import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from '@playwright/test';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { loads: { type: 'string', default: '9' }, view: { type: 'string', default: 'tasks' } } });
const dirs = positionals.length > 0 ? positionals : ['dist/renderer'];
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

function serve(dir: string): Promise<Server> {
  const root = resolve(dir);
  const server = createServer((req, res) => {
    const path = normalize(join(root, decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    const file = path.startsWith(root) && statSync(path, { throwIfNoEntry: false })?.isFile() ? path : join(root, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(readFileSync(file));
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
const rows: string[] = [];
try {
  for (const dir of dirs) {
    const server = await serve(dir);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/#/${values.view}`;
    const fcp: number[] = [];
    const dcl: number[] = [];
    let scriptBytes = 0;
    for (let i = 0; i < Number(values.loads); i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      let bytes = 0;
      page.on('response', (r) => {
        if (r.url().endsWith('.js')) void r.body().then((b) => (bytes += b.length), () => undefined);
      });
      await page.goto(url, { waitUntil: 'load' });
      await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0);
      const t = await page.evaluate(() => ({
        fcp: performance.getEntriesByName('first-contentful-paint')[0]!.startTime,
        dcl: (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).domContentLoadedEventEnd,
      }));
      await page.waitForLoadState('networkidle');
      fcp.push(t.fcp);
      dcl.push(t.dcl);
      scriptBytes = bytes;
      await context.close();
    }
    server.close();
    rows.push(`| ${dir} | ${median(fcp).toFixed(0)} ms | ${median(dcl).toFixed(0)} ms | ${(scriptBytes / 1024).toFixed(0)} KB |`);
  }
} finally {
  await browser.close();
}
console.log(`| build | first contentful paint (median of ${values.loads}) | DOMContentLoaded | script fetched for #/${values.view} |`);
console.log('|---|---|---|---|');
for (const r of rows) console.log(r);
