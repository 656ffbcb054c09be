// The review methods of the API contract (review.*) through the host both the desktop app and
// browser mode use, and the CLI's `tatra jobs review` and `tatra jobs export --final` on the same
// job database: decisions told to every window, two windows' decisions both kept, a bad import
// one line that imports nothing, the labelled data set out.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import type { MethodName, MethodOutput } from '../../../electron/common/contract';
import { openJobStore } from '../../../electron/jobs';
import { runScriptedJob } from '../../helpers/scripted-job';
import { tatraCli } from '../../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-review-api-'));
let host: ApiHost;
let jobId: string;
const events: Array<{ event: string; payload: unknown }> = [];

beforeAll(async () => {
  const store = openJobStore(dir);
  try {
    jobId = (await runScriptedJob(store, { rows: 30, dir, unlabelled: true, extraColumn: true })).id;
  } finally {
    store.close();
  }
  host = await createApiHost({ dataDir: dir, threads: 1, mode: 'test', log: () => undefined });
  host.subscribe((event, payload) => events.push({ event, payload }));
});
afterAll(async () => {
  await host.dispose();
  rmSync(dir, { recursive: true, force: true });
});

async function call<M extends MethodName>(method: M, input: unknown): Promise<MethodOutput<M>> {
  const r = await host.invoke(method, input);
  if (!r.ok) throw new Error(r.error.message);
  return r.value as MethodOutput<M>;
}

describe('review.* through the host', () => {
  it('a queue page, decisions from two windows both kept and told to every window, an undo', async () => {
    const page = await call('review.queue', { jobId: jobId.slice(0, 6), order: 'uncertain', limit: 10, withTotal: true });
    expect(page.total).toBe(30);
    expect(page.rows).toHaveLength(10);
    expect(page.progress).toMatchObject({ rowsDone: 30, reviewed: 0 });
    // Two windows decide the same rows in turn: every decision is in the rows' history.
    const [a, b] = page.rows;
    const decided = await Promise.all([
      call('review.decide', { jobId, index: a!.index, label: 'positive', queue: 'uncertain', clientId: 'w1-1' }),
      call('review.decide', { jobId, index: a!.index, label: 'negative', queue: 'uncertain', clientId: 'w2-1' }),
      call('review.decide', { jobId, index: b!.index, label: 'negative', queue: 'uncertain', clientId: 'w2-2' }),
    ]);
    expect((await call('review.history', { jobId, index: a!.index })).map((h) => h.label).sort()).toEqual(['negative', 'positive']);
    const told = events.filter((e) => e.event === 'review.decided').map((e) => e.payload as { index: number; decision: { logId: number } });
    expect(told.map((t) => t.decision.logId).sort()).toEqual(decided.map((d) => d.decision.logId).sort());
    const latest = decided.slice(0, 2).sort((x, y) => y.decision.logId - x.decision.logId)[0]!;
    const undone = await call('review.undo', { jobId, logId: latest.decision.logId });
    expect(undone.decision?.logId).toBe(Math.min(decided[0]!.decision.logId, decided[1]!.decision.logId));
    expect(events.at(-1)).toMatchObject({ event: 'review.decided', payload: { index: a!.index } });
    const next = await call('review.queue', { jobId, order: 'uncertain', limit: 50, withTotal: true });
    expect(next.total).toBe(28);
  });

  it('a bad import is one line and imports nothing; summary and export answer', async () => {
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'index,label\n3,positive\n4,neutral\n');
    const before = (await call('review.summary', { jobId })).progress;
    const r = await host.invoke('review.import', { jobId, path: bad });
    expect(r).toEqual({ ok: false, error: { code: 'review_import', message: 'bad.csv: line 3: "neutral" is not a label of task sst2 (negative, positive); nothing was imported' } });
    expect((await call('review.summary', { jobId })).progress).toEqual(before);
    const out = await call('review.export', { jobId, format: 'jsonl' });
    expect(out.filename).toMatch(/^sst2-.*-labels-.*\.jsonl$/);
    expect(readFileSync(out.path, 'utf8').trim().split('\n')).toHaveLength(30);
    const m = await call('review.metrics', { jobId });
    expect(m).toMatchObject({ corrections: 0, before: { scored: 0 }, after: { scored: 0 } });
  });
});

describe('the CLI', () => {
  it('`jobs review --import` refuses a bad file in one line (exit 2), imports a good one, and `jobs export --final` writes the data set', async () => {
    const bad = join(dir, 'cli-bad.jsonl');
    writeFileSync(bad, '{"index":0,"label":"positive"}\n{"index":30,"label":"negative"}\n');
    const refused = await tatraCli(['jobs', 'review', jobId, '--import', bad, '--data-dir', dir]).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(refused?.code).toBe(2);
    expect(refused?.stderr.trim()).toBe(`tatra: cli-bad.jsonl: line 2: "30" is not a row of job ${jobId} (its rows are 0 to 29); nothing was imported`);
    const good = join(dir, 'cli-good.csv');
    writeFileSync(good, 'index,label\n0,positive\n1,negative\n2,positive\n');
    const { stdout } = await tatraCli(['jobs', 'review', jobId, '--import', good, '--data-dir', dir]);
    expect(stdout).toContain(`imported 3 decisions into job ${jobId}`);
    expect(stdout).toMatch(/labelled by a person/);
    const json = JSON.parse((await tatraCli(['jobs', 'review', jobId, '--data-dir', dir, '--json'])).stdout) as { summary: { progress: { reviewed: number } } };
    expect(json.summary.progress.reviewed).toBeGreaterThanOrEqual(3);
    const file = join(dir, 'labels.csv');
    expect((await tatraCli(['jobs', 'export', jobId, '--final', '--out', file, '--data-dir', dir])).stdout.trim()).toBe(file);
    const lines = readFileSync(file, 'utf8').trim().split(/\r?\n/);
    expect(lines[0]).toBe('text,source,tatra_index,tatra_final_label,tatra_final_source,tatra_label,tatra_confidence,tatra_votes:negative,tatra_votes:positive');
    expect(lines[1]).toMatch(/^a good film number 0,site 0,0,positive,reviewed,/);
    const wrong = await tatraCli(['jobs', 'export', jobId, '--final', '--format', 'json', '--data-dir', dir]).catch((e: { stderr: string }) => e.stderr);
    expect(String(wrong).trim()).toBe('tatra: --final writes csv or jsonl, not json');
    // Five CLI processes, each a few seconds on two busy cores.
  }, 180_000);
});
