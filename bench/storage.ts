// Bytes a job leaves on disk per row: `tatra eval` on the first --rows rows of SST-2 against the
// instant OpenAI-compatible server (test/helpers/instant-openai-server.ts), then the job
// database's size (checkpointed), for each setting; and a sweep (`tatra sweep`, the experiments
// runner: one job per point, their cache shared) on the first --sweep-rows rows. Each database
// is then broken down: every table and index by its pages (SQLite's dbstat: what its cells hold,
// what is left unused), and every column of the largest tables by the bytes its values hold.
//
//   npx tsx bench/storage.ts [--rows 400] [--settings 10x16x15,2x4x3] [--sweep-rows 100]
//     [--sweep 5,10x8,16x15x1,2] [--builds before=../st-before,after=.] [--concurrency 64]
//     [--model ../shared/models/stories260K.gguf --threads 2]
//
// The instant server's paraphrases repeat the input ten times over, which compresses to almost
// nothing; --model runs a real GGUF instead (slow: a few rows, --sweep-rows 0), whose text is
// what a row's stored paraphrases really cost.
//
// A setting is n×k×r; a sweep is n-list × k-list × r-list × seed-list (points: one per n, k and
// seed). --builds names checkouts to compare side by side in one session (each one built with
// `npm run build:node`: the bench drives its CLI, dist/); the default is this checkout alone.
// --sweep-rows 0 leaves the sweep out.
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
    settings: { type: 'string', default: '10x16x15,2x4x3' },
    'sweep-rows': { type: 'string', default: '100' },
    sweep: { type: 'string', default: '5,10x8,16x15x1,2' },
    builds: { type: 'string', default: `this=${repoRoot}` },
    concurrency: { type: 'string', default: '64' },
    model: { type: 'string', default: '' },
    threads: { type: 'string', default: '2' },
    data: { type: 'string', default: resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl') },
  },
});

const builds = values.builds.split(',').map((b) => {
  const at = b.indexOf('=');
  return { label: b.slice(0, at), root: resolve(b.slice(at + 1)) };
});

interface Measured {
  bytes: number;
  seconds: number;
  /** Pages of each table and index: their bytes, and what the cells in them hold. */
  objects: { name: string; bytes: number; payload: number; unused: number; cells: number }[];
  /** Bytes the values of each column hold, for the largest tables. */
  columns: Record<string, Record<string, number>>;
}

/** Runs `tatra <args>` of the checkout `root` on a fresh data folder and measures the database it leaves. */
async function measure(root: string, args: string[]): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'tatra-storage-'));
  try {
    const t0 = performance.now();
    await promisify(execFile)(process.execPath, [join(root, 'bin', 'tatra.js'), ...args, '--data-dir', dir, '--json'], { cwd: root, maxBuffer: 256 * 1024 * 1024 });
    const seconds = (performance.now() - t0) / 1000;
    const path = join(dir, 'tatra.db');
    const db = new Database(path);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      const objects = db
        .prepare(`SELECT name, SUM(pgsize) AS bytes, SUM(payload) AS payload, SUM(unused) AS unused, SUM(ncell) AS cells FROM dbstat GROUP BY name ORDER BY bytes DESC`)
        .all() as Measured['objects'];
      const columns: Measured['columns'] = {};
      for (const table of ['generation_cache', 'job_rows', 'job_run_examples']) {
        const cols = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => c.name);
        // length() of a BLOB is its bytes, of TEXT its characters (ASCII here), of a number its
        // decimal digits: close to what SQLite's record format spends on each.
        const sums = db.prepare(`SELECT ${cols.map((c) => `COALESCE(SUM(length(CAST("${c}" AS BLOB))), 0) AS "${c}"`).join(', ')} FROM ${table}`).get() as Record<string, number>;
        columns[table] = sums;
      }
      return { bytes: statSync(path).size, seconds, objects, columns };
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const kb = (b: number) => `${(b / 1000).toFixed(1)} KB`;
const mb = (b: number) => `${(b / 1e6).toFixed(2)} MB`;

const server = await startInstantServer({ kind: 'openai-compatible' });
const model = values.model
  ? ['--model', resolve(values.model), '--threads', values.threads, '--concurrency', values.concurrency]
  : ['--model', `openai+${server.origin}/v1#m`, '--concurrency', values.concurrency];
const cases: { name: string; rows: number; args: string[] }[] = [];
for (const setting of values.settings.split(',').filter(Boolean)) {
  const [n, k, r] = setting.split('x');
  cases.push({
    name: `eval n=${n} k=${k} r=${r}`,
    rows: Number(values.rows),
    args: ['eval', '--task', 'sst2', '--data', values.data, '--limit', values.rows, '-n', n!, '-k', k!, '-r', r!, '--seed', '1', ...model],
  });
}
if (Number(values['sweep-rows']) > 0) {
  const [n, k, r, seeds] = values.sweep.split('x');
  const points = n!.split(',').length * k!.split(',').length * seeds!.split(',').length;
  cases.push({
    name: `sweep n=${n} k=${k} r=${r} seeds=${seeds} (${points} points)`,
    // Rows across all the sweep's jobs: what a row of the sweep costs.
    rows: Number(values['sweep-rows']) * points,
    args: ['sweep', '--task', 'sst2', '--data', values.data, '--limit', values['sweep-rows'], '-n', n!, '-k', k!, '-r', r!, '--seeds', seeds!, ...model],
  });
}

const results: { case: (typeof cases)[number]; build: string; m: Measured }[] = [];
try {
  for (const c of cases) {
    for (const b of builds) {
      const m = await measure(b.root, c.args);
      results.push({ case: c, build: b.label, m });
      process.stderr.write(`${c.name} [${b.label}]: ${mb(m.bytes)}, ${kb(m.bytes / c.rows)} per row (${m.seconds.toFixed(1)} s)\n`);
    }
  }
} finally {
  server.stop();
}

console.log(`| run | rows | ${builds.map((b) => `${b.label}: database | ${b.label}: per row`).join(' | ')} |`);
console.log(`|---|---|${builds.map(() => '---|---|').join('')}`);
for (const c of cases) {
  const cells = builds.map((b) => results.find((r) => r.case === c && r.build === b.label)!.m).map((m) => `${mb(m.bytes)} | ${kb(m.bytes / c.rows)}`);
  console.log(`| ${c.name} | ${c.rows} | ${cells.join(' | ')} |`);
}
for (const r of results) {
  console.log(`\n${r.case.name} [${r.build}], ${mb(r.m.bytes)}: pages per table or index (bytes / cell payload / unused / cells)`);
  for (const o of r.m.objects.filter((o) => o.cells > 0)) console.log(`  ${o.name.padEnd(32)} ${kb(o.bytes).padStart(10)} ${kb(o.payload).padStart(10)} ${kb(o.unused).padStart(10)} ${String(o.cells).padStart(7)}`);
  for (const [table, cols] of Object.entries(r.m.columns)) {
    const big = Object.entries(cols).filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
    console.log(`  ${table} values: ${big.map(([c, v]) => `${c} ${kb(v)}`).join(', ')}`);
  }
}
