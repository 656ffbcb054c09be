// Bytes a job leaves on disk per row: `tatra eval` on the first --rows rows of SST-2 against the
// instant OpenAI-compatible server (test/helpers/instant-openai-server.ts), then the job
// database's size (checkpointed) and each table's share (SQLite's dbstat), for each setting.
//
//   npx tsx bench/storage.ts [--rows 400] [--settings 10x16x15,2x4x3,5x8x5] [--concurrency 64]
//
// A setting is n×k×r. Run it on two builds (before and after a storage change) to compare: the
// bench drives the built CLI (dist/), so `npm run build:node` first.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import Database from 'better-sqlite3';
import { startInstantServer } from '../test/helpers/instant-server';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '400' },
    settings: { type: 'string', default: '10x16x15,2x4x3,5x8x5' },
    concurrency: { type: 'string', default: '64' },
    data: { type: 'string', default: resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl') },
  },
});

const server = await startInstantServer({ kind: 'openai-compatible' });
const lines: string[] = [];
try {
  for (const setting of values.settings.split(',')) {
    const [n, k, r] = setting.split('x');
    const dir = mkdtempSync(join(tmpdir(), 'tatra-storage-'));
    try {
      const t0 = performance.now();
      await promisify(execFile)(
        process.execPath,
        [join(repoRoot, 'bin', 'tatra.js'), 'eval', '--task', 'sst2', '--data', values.data, '--limit', values.rows, '-n', n!, '-k', k!, '-r', r!, '--seed', '1',
          '--model', `openai+${server.origin}/v1#m`, '--concurrency', values.concurrency, '--data-dir', dir, '--json'],
        { cwd: repoRoot, maxBuffer: 256 * 1024 * 1024 },
      );
      const seconds = (performance.now() - t0) / 1000;
      const path = join(dir, 'tatra.db');
      const db = new Database(path);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const tables = db.prepare(`SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC`).all() as { name: string; bytes: number }[];
      db.close();
      const bytes = statSync(path).size;
      const rows = Number(values.rows);
      const top = tables.slice(0, 4).map((t) => `${t.name} ${(t.bytes / 1e6).toFixed(2)} MB`).join(', ');
      lines.push(`| n=${n} k=${k} r=${r} | ${rows} | ${(bytes / 1e6).toFixed(2)} MB | ${(bytes / rows / 1000).toFixed(1)} KB | ${top} | ${seconds.toFixed(1)} s |`);
      process.stderr.write(`${lines.at(-1)}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  server.stop();
}
console.log('| setting | rows | database | per row | largest tables (pages) | eval time |');
console.log('|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
