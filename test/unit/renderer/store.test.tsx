// @vitest-environment jsdom
// The renderer's one client and its store, over a transport the test drives: replies validated
// against the contract, errors as ApiCallError, events routed into the slices.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { render, screen, cleanup } from '@testing-library/react';
import type { BridgeReply } from '../../../electron/common/contract/bridge';
import { ApiCallError, createApiClient, setApi, type RawListener, type Transport } from '../../../renderer/src/api/client';
import { connectStore, createAppStore } from '../../../renderer/src/store';
import { checkDraft, blankDraft } from '../../../renderer/src/views/taskDraft';
import { whenState } from '../../helpers/events';
import { ConfusionMatrix } from '../../../renderer/src/components/EvalCharts';

type Handler = (input: unknown) => BridgeReply | Promise<BridgeReply>;

function fakeTransport(handlers: Record<string, Handler>) {
  const listeners = new Set<RawListener>();
  const calls: [string, unknown][] = [];
  const transport: Transport = {
    kind: 'browser',
    async invoke(method, input) {
      calls.push([method, input]);
      const h = handlers[method];
      return h ? h(input) : { ok: false, error: { code: 'unknown_method', message: `unknown method "${method}"` } };
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    upload: async () => ({ path: '/x', bytes: 0 }),
    downloadUrl: (p) => `/dl?path=${p}`,
    onConnection: (l) => {
      l(true);
      return () => undefined;
    },
  };
  const emit = (event: string, payload: unknown) => listeners.forEach((l) => l(event, payload));
  return { transport, emit, calls };
}

const settings = { n: 1, k: 2, r: 1, seed: 1, scope: 'run' as const };
const request = { taskId: 'sst2', input: 'hi', generator: '/m.gguf', evaluator: '/m.gguf', settings };

afterEach(() => {
  setApi(null);
  cleanup();
});

describe('api client', () => {
  it('returns parsed values, throws ApiCallError with the code, and rejects replies outside the contract', async () => {
    const { transport } = fakeTransport({
      'app.info': () => ({ ok: true, value: { version: '1', mode: 'browser', dataDir: '/d', threads: 1 } }),
      'tasks.get': () => ({ ok: false, error: { code: 'task_unknown', message: 'unknown task "x"' } }),
      'jobs.list': () => ({ ok: true, value: [{ nonsense: true }] }),
    });
    const api = createApiClient(transport);
    expect(await api.call('app.info', {})).toEqual({ version: '1', mode: 'browser', dataDir: '/d', threads: 1 });
    await expect(api.call('tasks.get', { id: 'x' })).rejects.toMatchObject({ name: 'ApiCallError', code: 'task_unknown', message: 'unknown task "x"' });
    const bad = await api.call('jobs.list', {}).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiCallError);
    expect((bad as ApiCallError).code).toBe('bad_reply');
  });

  it('delivers only events that match the contract', () => {
    const { transport, emit } = fakeTransport({});
    const api = createApiClient(transport);
    const got: unknown[] = [];
    api.on('job.progress', (p) => got.push(p));
    emit('job.progress', { jobId: 'j', rowsDone: 1, rowsTotal: 2, rowsPerMinute: 3, etaSeconds: 4, runningAccuracy: 0.5 });
    emit('job.progress', { jobId: 'j', rowsDone: 'lots' });
    expect(got).toEqual([{ jobId: 'j', phase: 'rows', rowsDone: 1, rowsTotal: 2, failed: 0, rowsPerMinute: 3, etaSeconds: 4, etaRange: null, callsDone: 0, callsTotal: 0, runningAccuracy: 0.5, deterministic: null }]);
  });
});

describe('store', () => {
  let store: ReturnType<typeof createAppStore>;
  beforeEach(() => {
    sessionStorage.clear();
    store = createAppStore();
  });

  it('follows a classify run, including events that arrive before start answers', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { transport, emit } = fakeTransport({
      'classify.start': async () => {
        await gate;
        return { ok: true, value: { runId: 'r1' } };
      },
    });
    setApi(createApiClient(transport));
    const stop = connectStore(store);
    const started = store.getState().startClassify(request);
    expect(store.getState().classify.status).toBe('starting');
    // The event stream beats the reply.
    emit('classify.event', { runId: 'r1', event: { type: 'run-start', run: 0, seed: 1 } });
    emit('classify.event', { runId: 'other', event: { type: 'run-start', run: 5, seed: 9 } });
    release();
    await started;
    expect(store.getState().classify.runId).toBe('r1');
    expect(store.getState().classify.live.runs.map((r) => r.run)).toEqual([0]);
    expect(sessionStorage.getItem('tatra.classify.runId')).toBe('r1');
    emit('classify.event', { runId: 'r1', event: { type: 'prediction', run: 0, prediction: { variant: 0, label: 'positive', raw: 'positive' } } });
    expect(store.getState().classify.live.runs[0]!.predictions[0]?.label).toBe('positive');
    emit('classify.event', { runId: 'r1', error: { code: 'cancelled', message: 'cancelled' } });
    expect(store.getState().classify.status).toBe('cancelled');
    expect(store.getState().classify.error).toBeNull();
    stop();
  });

  it('restores a run after a reload, replaying events that arrive while it is fetched', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const snapshot = { runId: 'r9', request, status: 'running', startedAt: 5, events: [{ type: 'run-start', run: 0, seed: 1 }], result: null, error: null };
    const { transport, emit } = fakeTransport({
      'classify.get': async () => {
        await gate;
        return { ok: true, value: snapshot };
      },
    });
    setApi(createApiClient(transport));
    const stop = connectStore(store);
    sessionStorage.setItem('tatra.classify.runId', 'r9');
    const restoring = store.getState().restoreClassify();
    emit('classify.event', { runId: 'r9', event: { type: 'paraphrases', run: 0, paraphrases: ['x'], fallback: null, cached: false } });
    release();
    await restoring;
    const c = store.getState().classify;
    expect(c).toMatchObject({ runId: 'r9', status: 'running', request: { input: 'hi' } });
    expect(c.live.runs[0]).toMatchObject({ seed: 1, paraphrases: ['x'] });
    stop();
  });

  it('follows a classification another page started: on load, and when its events arrive', async () => {
    const snapshot = (runId: string) => ({ ok: true as const, value: { runId, request, status: 'running', startedAt: 5, events: [{ type: 'run-start', run: 0, seed: 1 }], result: null, error: null } });
    const { transport, emit } = fakeTransport({
      'classify.list': () => ({ ok: true, value: [{ runId: 'other-tab', request, status: 'running', startedAt: 5, error: null, label: null }] }),
      'classify.get': (input) => snapshot((input as { runId: string }).runId),
    });
    setApi(createApiClient(transport));
    const stop = connectStore(store);
    // A fresh page with no run of its own picks up the one running.
    await store.getState().restoreClassify();
    expect(store.getState().classify).toMatchObject({ runId: 'other-tab', status: 'running' });
    // An idle page follows a run started later elsewhere as soon as its events arrive.
    store.getState().clearClassify();
    emit('classify.event', { runId: 'third-tab', event: { type: 'run-start', run: 0, seed: 1 } });
    await whenState(store, (st) => st.classify.runId === 'third-tab');
    expect(store.getState().classify).toMatchObject({ runId: 'third-tab', status: 'running' });
    stop();
  });

  it('shows a failed start as the error, not as a crash', async () => {
    const { transport } = fakeTransport({ 'classify.start': () => ({ ok: false, error: { code: 'gguf_missing', message: 'generator model not found: /m.gguf' } }) });
    setApi(createApiClient(transport));
    await store.getState().startClassify(request);
    expect(store.getState().classify).toMatchObject({ status: 'failed', error: { code: 'gguf_missing', message: 'generator model not found: /m.gguf' } });
  });

  it('applies job progress and status events to the history and loads metrics when a job ends', async () => {
    const job = { id: 'j1', name: 'n', taskId: 'sst2', status: 'running', dataPath: '/d.csv', generator: '/m', evaluator: '/m', settings, createdAt: 1, updatedAt: 1, rowsDone: 0, rowsTotal: 4, accuracy: null, error: null };
    const metrics = { jobId: 'j1', scored: 4, accuracy: 0.5, macroF1: 0.4, perRunAccuracy: [0.5], accuracyAfterRuns: [0.5], perLabel: [], confusion: { labels: [], predicted: [], matrix: [] }, confidenceHistogram: [] };
    const { transport, emit, calls } = fakeTransport({
      'jobs.list': () => ({ ok: true, value: [job] }),
      'jobs.metrics': () => ({ ok: true, value: metrics }),
    });
    setApi(createApiClient(transport));
    const stop = connectStore(store);
    await store.getState().loadJobs();
    emit('job.progress', { jobId: 'j1', rowsDone: 2, rowsTotal: 4, rowsPerMinute: 60, etaSeconds: 2, runningAccuracy: 1 / 2, deterministic: true });
    // Known once the session's models are loaded: the job view's chip comes with the progress.
    expect(store.getState().jobs[0]).toMatchObject({ rowsDone: 2, deterministic: true });
    emit('job.progress', { jobId: 'j1', rowsDone: 3, rowsTotal: 4, rowsPerMinute: 60, etaSeconds: 1, runningAccuracy: 2 / 3 });
    expect(store.getState().jobs[0]).toMatchObject({ rowsDone: 3, accuracy: 2 / 3, deterministic: true });
    expect(store.getState().progress.j1?.etaSeconds).toBe(1);
    emit('job.status', { jobId: 'j1', status: 'done', error: null });
    expect(store.getState().jobs[0]!.status).toBe('done');
    await whenState(store, (st) => st.metrics.j1 !== undefined);
    expect(calls.some(([m]) => m === 'jobs.metrics')).toBe(true);
    expect(store.getState().metrics.j1?.accuracy).toBe(0.5);
    stop();
  });

  it("lets the host guess a new file's gold column, sends the user's own choice (none included), and reads the set-up again after a reload", async () => {
    localStorage.clear();
    const preview = (input: { path: string; goldColumn?: string | null }) => ({
      ok: true as const,
      value: {
        path: input.path,
        format: 'csv',
        columns: ['sentence', 'label'],
        sample: [],
        rowCount: 2,
        emptyInputs: 0,
        inputColumn: 'sentence',
        goldColumn: input.goldColumn === undefined ? 'label' : input.goldColumn,
        goldValues: input.goldColumn === null ? [] : [{ value: 'pos', count: 2, suggested: 'positive' }],
      },
    });
    const { transport, calls } = fakeTransport({ 'jobs.preview': (i) => preview(i as { path: string; goldColumn?: string | null }) });
    setApi(createApiClient(transport));
    store.getState().setDraft({ path: '/data/reviews.csv' });
    await store.getState().previewData();
    // A file not previewed yet: no column is sent, so the host's guess stands.
    expect(calls.at(-1)![1]).toEqual({ path: '/data/reviews.csv', taskId: 'sst2' });
    expect(store.getState().draft).toMatchObject({ goldColumn: 'label', labelMap: { pos: 'positive' }, fileName: 'reviews.csv' });
    await store.getState().previewData(undefined, { goldColumn: null });
    expect(calls.at(-1)![1]).toMatchObject({ goldColumn: null, inputColumn: 'sentence' });
    expect(store.getState().draft.goldColumn).toBeNull();
    await store.getState().previewData(undefined, { goldColumn: 'label' });
    store.getState().setDraft({ labelMap: { pos: 'negative' }, limit: 5 });

    // A reload: a fresh store reads the same file again with the user's columns and mapping.
    const again = createAppStore();
    await again.getState().restoreDraft();
    expect(calls.at(-1)![1]).toMatchObject({ path: '/data/reviews.csv', inputColumn: 'sentence', goldColumn: 'label' });
    expect(again.getState().draft).toMatchObject({ goldColumn: 'label', labelMap: { pos: 'negative' }, limit: 5 });
  });

  it('shows API errors as notices, once each', async () => {
    const { transport } = fakeTransport({ 'tasks.list': () => ({ ok: false, error: { code: 'internal', message: 'disk on fire' } }) });
    setApi(createApiClient(transport));
    await store.getState().loadTasks();
    await store.getState().loadTasks();
    expect(store.getState().notices.map((n) => n.message)).toEqual(['Could not load tasks: disk on fire']);
  });
});

describe('task editor validation', () => {
  it('reports schema problems by field as you type and refuses a built-in id', () => {
    const d = { ...blankDraft(), id: 'sst2', name: 'Mine', instruction: 'Say it.', preserve: 'the meaning' };
    d.labels = [
      { name: 'a', style: [], topics: ['x'] },
      { name: 'A', style: [], topics: [] },
    ];
    const check = checkDraft(d, undefined, ['sst2']);
    expect(check.task).toBeNull();
    expect(check.errors.id).toContain('built-in');
    expect(check.errors['labels.1.name']).toBe('duplicate label "A"');
    expect(check.errors['labels.1.topics']).toContain('has no topics');
    const ok = checkDraft({ ...d, id: 'mine', labels: [d.labels[0]!, { name: 'b', style: [], topics: ['y'] }] }, undefined, ['sst2']);
    expect(ok.errors).toEqual({});
    expect(ok.task?.labels.map((l) => l.name)).toEqual(['a', 'b']);
  });
});

describe('confusion matrix', () => {
  it('draws gold × predicted counts and hides an empty "(none)" column', () => {
    render(<ConfusionMatrix confusion={{ labels: ['neg', 'pos'], predicted: ['neg', 'pos', '(none)'], matrix: [[3, 1, 0], [2, 4, 0]] }} />);
    const cells = screen.getAllByRole('cell');
    expect(cells.map((c) => c.textContent)).toEqual(['3', '1', '2', '4']);
    expect(screen.queryByText('(none)')).toBeNull();
    cleanup();
    render(<ConfusionMatrix confusion={{ labels: ['neg', 'pos'], predicted: ['neg', 'pos', '(none)'], matrix: [[3, 0, 1], [2, 4, 0]] }} />);
    expect(screen.getAllByRole('cell')).toHaveLength(6);
    expect(screen.getByText('(none)')).toBeTruthy();
  });
});
