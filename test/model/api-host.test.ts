// The API host on real inference (tiny synthetic model, threads 1): classify streams the engine's
// events and ends with a contract-valid result; cancel stops it; an evaluation job runs through
// the real job store with progress and status events; disposing the host mid-job leaves the job
// paused (resumable) and a new host resumes it to the end.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHost } from '../../electron/api/host';
import { ClassifyEventPayload, JobSummary } from '../../electron/common/contract';
import { recordHostEvents } from '../helpers/events';
import { tinyModelPath } from '../helpers/models';

let dir: string;
let model: string;

beforeAll(async () => {
  model = await tinyModelPath();
  dir = mkdtempSync(join(tmpdir(), 'tatra-host-model-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ApiHost on the tiny model', () => {
  it('classify streams events in order and ends with the result', async () => {
    const host = await createApiHost({ dataDir: join(dir, 'a'), threads: 1, mode: 'test' });
    const { events, until } = recordHostEvents(host);
    const settings = { n: 2, k: 4, r: 2, seed: 5, scope: 'run' };
    const start = await host.invoke('classify.start', { taskId: 'sst2', input: 'A lovely, funny film.', generator: model, evaluator: model, settings });
    expect(start.ok).toBe(true);
    const runId = (start as { value: { runId: string } }).value.runId;
    const mine = () => events.filter(([e, p]) => e === 'classify.event' && (p as { runId: string }).runId === runId).map(([, p]) => ClassifyEventPayload.parse(p));
    await until(() => mine().some((p) => 'error' in p || p.event.type === 'done'));
    const payloads = mine();
    const types = payloads.map((p) => ('event' in p ? p.event.type : 'error'));
    expect(types).not.toContain('error');
    expect(types.filter((t) => t === 'run-start')).toHaveLength(2);
    expect(types.filter((t) => t === 'prediction')).toHaveLength((2 + 1) * 2);
    expect(types.at(-1)).toBe('done');
    // Examples and paraphrases stream per run as they finish (in either order); predictions follow them all.
    expect(types.filter((t) => t === 'paraphrases')).toHaveLength(2);
    expect(types.indexOf('prediction')).toBeGreaterThan(Math.max(types.lastIndexOf('examples'), types.lastIndexOf('paraphrases')));
    const done = payloads.at(-1) as { event: { type: 'done'; result: { label: string | null; votes: Record<string, number> } } };
    expect(['negative', 'positive']).toContain(done.event.result.label);
    expect(Object.values(done.event.result.votes).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(6);
    const state = await host.invoke('classify.get', { runId });
    expect(state).toMatchObject({ ok: true, value: { status: 'done', runId } });
    expect((state as { value: { events: unknown[] } }).value.events).toHaveLength(payloads.length);
    await host.dispose();
  });

  it('cancel stops a long run promptly with a cancelled error event', async () => {
    const host = await createApiHost({ dataDir: join(dir, 'b'), threads: 1, mode: 'test' });
    const { events, until } = recordHostEvents(host);
    const start = (await host.invoke('classify.start', {
      taskId: 'sst2',
      input: 'Too long by an hour.',
      generator: model,
      evaluator: model,
      settings: { n: 8, k: 8, r: 40, seed: 1, scope: 'run' },
    })) as { ok: true; value: { runId: string } };
    await until(() => events.some(([e]) => e === 'classify.event'));
    expect(await host.invoke('classify.cancel', { runId: start.value.runId })).toEqual({ ok: true, value: { cancelled: true } });
    const last = events.filter(([e]) => e === 'classify.event').at(-1)![1];
    expect(last).toEqual({ runId: start.value.runId, error: { code: 'cancelled', message: 'cancelled' } });
    expect(await host.invoke('classify.get', { runId: start.value.runId })).toMatchObject({ ok: true, value: { status: 'cancelled', result: null } });
    await host.dispose();
  });

  it('runs a job with events, survives a host dispose mid-job as paused, and a new host resumes it', async () => {
    const dataDir = join(dir, 'c');
    const csv = join(dir, 'rows.csv');
    const rows = Array.from({ length: 12 }, (_, i) => `"review number ${i} was ${i % 2 ? 'great' : 'awful'}",${i % 2}`);
    writeFileSync(csv, `text,label\n${rows.join('\n')}\n`);
    let host = await createApiHost({ dataDir, threads: 1, mode: 'test' });
    const rec = recordHostEvents(host);
    const started = await host.invoke('jobs.start', {
      taskId: 'sst2',
      dataPath: csv,
      inputColumn: 'text',
      goldColumn: 'label',
      labelMap: { '0': 'negative', '1': 'positive' },
      generator: model,
      evaluator: model,
      settings: { n: 1, k: 2, r: 1, seed: 2, scope: 'run' },
    });
    expect(started.ok).toBe(true);
    const job = JobSummary.parse((started as { value: unknown }).value);
    expect(job).toMatchObject({ status: 'running', rowsTotal: 12, taskId: 'sst2' });
    await rec.until((events) => events.some(([e, p]) => e === 'job.progress' && (p as { rowsDone: number }).rowsDone >= 2));
    await host.dispose();
    expect(rec.events.some(([e, p]) => e === 'job.status' && (p as { status: string }).status === 'running')).toBe(true);

    host = await createApiHost({ dataDir, threads: 1, mode: 'test' });
    const listed = (await host.invoke('jobs.list', {})) as { ok: true; value: { id: string; status: string; rowsDone: number }[] };
    const paused = listed.value.find((j) => j.id === job.id)!;
    expect(paused.status).toBe('paused');
    expect(paused.rowsDone).toBeGreaterThanOrEqual(2);
    expect(paused.rowsDone).toBeLessThan(12);
    const rec2 = recordHostEvents(host);
    expect(await host.invoke('jobs.resume', { jobId: job.id })).toMatchObject({ ok: true, value: { status: 'running' } });
    await rec2.until((events) => events.some(([e, p]) => e === 'job.status' && (p as { status: string }).status === 'done'));
    const metrics = (await host.invoke('jobs.metrics', { jobId: job.id })) as { ok: true; value: { scored: number; confusion: { matrix: number[][] } } };
    expect(metrics.value.scored).toBe(12);
    expect(metrics.value.confusion.matrix.flat().reduce((a, b) => a + b, 0)).toBe(12);
    const page = (await host.invoke('jobs.rows', { jobId: job.id, filter: 'wrong', sort: 'confidence-asc' })) as { ok: true; value: { total: number; rows: { correct: boolean }[] } };
    expect(page.value.rows.every((r) => r.correct === false)).toBe(true);
    const exported = (await host.invoke('jobs.export', { jobId: job.id, format: 'json' })) as { ok: true; value: { path: string; bytes: number } };
    expect(exported.value.path.startsWith(join(dataDir, 'exports'))).toBe(true);
    expect(exported.value.bytes).toBeGreaterThan(100);
    await host.dispose();
  });
});
