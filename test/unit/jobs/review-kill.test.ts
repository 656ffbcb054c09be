// Nothing a person decided is lost to a SIGKILL, and nothing is left half-written: a process that
// reviews and imports as fast as it can (test/helpers/review-worker.ts) is killed 20 times, at
// random moments (half of them while an import of 3,000 decisions is being written); after each
// kill every decision, undo and import it said it had committed is in the job database, every
// import is there whole or not at all, and each row's decision now is what replaying the log gives.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import Database from 'better-sqlite3';
import { openJobStore } from '../../../electron/jobs';
import { seededRandom } from '../../../electron/engine/rng';
import { storePausedJob } from '../../helpers/stored-job';
import { repoRoot } from '../../helpers/tatra-cli';

const IMPORT_ROWS = 3000;
const ROWS = 5000;
const KILLS = 20;
const dir = mkdtempSync(join(tmpdir(), 'tatra-review-kill-'));
/**
 * The worker bundled once (esbuild, as the CLI is), so each of the 20 starts is a plain `node`
 * start; in dist/, beside the CLI, where its dependencies resolve from the checkout's node_modules.
 */
const worker = join(repoRoot, 'dist', `review-worker-${process.pid}.mjs`);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(worker, { force: true });
});
beforeAll(async () => {
  await build({ entryPoints: [join(repoRoot, 'test/helpers/review-worker.ts')], outfile: worker, bundle: true, platform: 'node', target: 'node20', format: 'esm', packages: 'external', logLevel: 'warning' });
});

interface Said {
  decisions: Array<{ clientId: string; index: number; label: string | null }>;
  undos: number[];
  imported: number[];
  /** How long each import that committed took to write its decisions (ms). */
  importMs: number[];
}

/** Runs the worker until `killAt` says so (a line it printed), SIGKILLs it, and returns what it said it committed. */
async function runAndKill(dataDir: string, jobId: string, seed: number, killAt: (line: string, lines: number) => number | null): Promise<Said> {
  const child = spawn(process.execPath, [worker, dataDir, jobId, String(seed)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const said: Said = { decisions: [], undos: [], imported: [], importMs: [] };
  let lines = 0;
  let timer: NodeJS.Timeout | undefined;
  let importBegan = 0;
  for await (const line of createInterface({ input: child.stdout })) {
    lines++;
    const [kind, a, b, c] = line.split(' ');
    if (kind === 'D') said.decisions.push({ clientId: a!, index: Number(b), label: c === '-' ? null : c! });
    if (kind === 'U') said.undos.push(Number(a));
    if (kind === 'w') importBegan = performance.now();
    if (kind === 'I') {
      said.imported.push(Number(a));
      said.importMs.push(performance.now() - importBegan);
    }
    if (timer === undefined && child.exitCode === null) {
      const delay = killAt(line, lines);
      if (delay !== null) timer = setTimeout(() => child.kill('SIGKILL'), delay);
    }
  }
  await exited;
  clearTimeout(timer);
  expect(child.signalCode).toBe('SIGKILL');
  return said;
}

interface LogRow {
  id: number;
  idx: number;
  action: 'label' | 'skip' | 'undo';
  label: string | null;
  prev: number | null;
  queue: string;
  client_id: string | null;
}

/** Each row's decision as the log says it should be now: labels and skips set it, an undo restores the one before. */
function replay(log: readonly LogRow[]): Map<number, { label: string | null; logId: number }> {
  const byId = new Map(log.map((e) => [e.id, e]));
  const now = new Map<number, { label: string | null; logId: number }>();
  for (const e of log) {
    if (e.action !== 'undo') now.set(e.idx, { label: e.label, logId: e.id });
    else {
      const undone = byId.get(e.prev!)!;
      const before = undone.prev === null ? null : byId.get(undone.prev)!;
      if (before) now.set(e.idx, { label: before.label, logId: before.id });
      else now.delete(e.idx);
    }
  }
  return now;
}

describe('review under SIGKILL', () => {
  it(`killed ${KILLS} times during reviews and imports: every committed decision there, nothing half-written`, async () => {
    const dataDir = join(dir, 'data');
    const store = openJobStore(dataDir);
    const jobId = await storePausedJob(store, { name: 'kill', rows: ROWS, input: (i) => `row ${i}` });
    store.close();
    const rand = seededRandom(38);
    const all: Said = { decisions: [], undos: [], imported: [], importMs: [] };
    let midImport = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      // Even kills at a random moment while an import writes its 3,000 decisions (as long as the
      // writes seen so far took), odd ones between decisions.
      const during = kill % 2 === 0;
      const after = 5 + Math.floor(rand() * 40);
      const importMs = all.importMs.length === 0 ? 200 : [...all.importMs].sort((a, b) => a - b)[Math.floor(all.importMs.length / 2)]!;
      const said = await runAndKill(dataDir, jobId, kill + 1, (line, lines) => (during ? (line.startsWith('w ') ? Math.floor(rand() * importMs) : null) : lines >= after ? Math.floor(rand() * 5) : null));
      all.decisions.push(...said.decisions);
      all.undos.push(...said.undos);
      all.imported.push(...said.imported);
      all.importMs.push(...said.importMs);

      const db = new Database(join(dataDir, 'tatra.db'), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const log = db.prepare(`SELECT id, idx, action, label, prev, queue, client_id FROM review_log WHERE job_id = ? ORDER BY id`).all(jobId) as LogRow[];
        const byClient = new Map(log.filter((e) => e.client_id !== null).map((e) => [e.client_id!, e]));
        for (const d of all.decisions) expect(byClient.get(d.clientId), `decision ${d.clientId}`).toMatchObject({ idx: d.index, label: d.label });
        const undone = new Set(log.filter((e) => e.action === 'undo').map((e) => e.prev));
        for (const u of all.undos) expect(undone.has(u), `undo of ${u}`).toBe(true);
        // Imports whole or not at all: their entries come in whole imports, at least as many as were said committed.
        const importEntries = log.filter((e) => e.queue === 'import').length;
        expect(importEntries % IMPORT_ROWS).toBe(0);
        expect(importEntries / IMPORT_ROWS).toBeGreaterThanOrEqual(all.imported.length === 0 ? 0 : Math.max(...all.imported) + 1);
        // Each row's decision now is the log replayed: no decision without its entry, no entry half applied.
        const decisions = db.prepare(`SELECT idx, label, log_id FROM review_decisions WHERE job_id = ?`).all(jobId) as Array<{ idx: number; label: string | null; log_id: number }>;
        expect(new Map(decisions.map((d) => [d.idx, { label: d.label, logId: d.log_id }]))).toEqual(replay(log));
        // The imported rows all carry one import's label.
        const imported = new Set(decisions.filter((d) => d.idx < IMPORT_ROWS).map((d) => d.label));
        expect(imported.size).toBeLessThanOrEqual(1);
        if (importEntries > 0) expect(decisions.filter((d) => d.idx < IMPORT_ROWS)).toHaveLength(IMPORT_ROWS);
        if (during && said.imported.length === 0 && importEntries / IMPORT_ROWS === Math.max(0, ...all.imported.map((n) => n + 1))) midImport++;
      } finally {
        db.close();
      }
    }
    expect(all.decisions.length).toBeGreaterThan(KILLS * 5);
    expect(all.imported.length).toBeGreaterThan(0);
    // Some kills landed while an import was being written, and left nothing of it.
    expect(midImport).toBeGreaterThan(0);
  }, 900_000);
});
