// A 100,000-row, ~50 MB CSV (and JSONL) streams through the importer with bounded memory. The reader runs in
// a child process with --expose-gc so the heap can be measured after forced collections:
// growth over the baseline must stay under 32 MB, while holding the file whole would take more
// than 50 MB for the text alone.
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tatra-big-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = 100_000;
const BOUND = 32 * 1024 * 1024;

interface Streamed {
  size: number;
  rows: number;
  lastLine: number;
  maxGrowthBytes: number;
  chars: number;
}

/** Writes `lines` to `name` (waiting on the stream when it is full), then streams it in the child. */
async function writeAndStream(name: string, lines: (i: number) => string, header = ''): Promise<Streamed> {
  const path = join(dir, name);
  const out = createWriteStream(path);
  if (header) out.write(header);
  for (let i = 0; i < ROWS; i++) if (!out.write(lines(i))) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  const size = statSync(path).size;
  expect(size).toBeGreaterThan(45 * 1024 * 1024);
  const stdout = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, 'stream-memory.child.ts'), path], {
    cwd: resolve(here, '../../..'),
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { size, ...(JSON.parse(stdout.trim().split('\n').pop()!) as Omit<Streamed, 'size'>) };
}

it('streams a 100,000-row, 50 MB CSV with heap growth under 32 MB', async () => {
  const filler = 'the film, "they said", was a long and winding story about nothing in particular '.repeat(6);
  const res = await writeAndStream(
    'big.csv',
    (i) => {
      // Every 100th row has a quoted newline, so lines and rows differ.
      const text = i % 100 === 0 ? `row ${i}\nsecond line ${filler}` : `row ${i} ${filler}`;
      return `${i},"${text.replace(/"/g, '""')}",${i % 2}\r\n`;
    },
    'id,text,label\r\n',
  );
  expect(res.rows).toBe(ROWS);
  expect(res.lastLine).toBe(ROWS + 1 + ROWS / 100);
  expect(res.chars).toBeGreaterThan(40 * 1024 * 1024);
  console.log(`streamed ${(res.size / 1048576).toFixed(1)} MB, ${res.rows} rows; max heap growth ${(res.maxGrowthBytes / 1048576).toFixed(1)} MB (bound 32 MB)`);
  expect(res.maxGrowthBytes).toBeLessThan(BOUND);
}, 300_000);

it("streams a 100,000-row, 50 MB JSONL in the paper's format with heap growth under 32 MB", async () => {
  const filler = 'a long and winding story about nothing in particular, told "slowly" '.repeat(6);
  const res = await writeAndStream('big.jsonl', (i) => {
    const obj = { messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: `row ${i} ${filler}` }, { role: 'assistant', content: '0' }], solution: i % 2 ? 'positive' : 'negative' };
    return `${JSON.stringify(obj)}\n`;
  });
  expect(res.rows).toBe(ROWS);
  expect(res.lastLine).toBe(ROWS);
  console.log(`streamed ${(res.size / 1048576).toFixed(1)} MB JSONL, ${res.rows} rows; max heap growth ${(res.maxGrowthBytes / 1048576).toFixed(1)} MB (bound 32 MB)`);
  expect(res.maxGrowthBytes).toBeLessThan(BOUND);
}, 300_000);
