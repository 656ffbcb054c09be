// The Electron transport's upload: a file the user picked from disk goes to the main process as
// its path (webUtils through the preload), never as text over IPC; only a File made in the page,
// which has no path, is sent as content. Browser mode keeps uploading the bytes. And a call the
// page drops (its signal aborted) answers "cancelled" at once on both transports and tells the
// other end: a named call cancelled over IPC, an aborted fetch over HTTP.
import { describe, expect, it } from 'vitest';
import type { BridgeReply, TatraBridge } from '../../../electron/common/contract/bridge';
import { ApiCallError, browserTransport, createApiClient, ipcTransport } from '../../../renderer/src/api/client';

function fakeBridge(pathOf: (f: File) => string | null, answer: () => Promise<BridgeReply> = () => Promise.resolve({ ok: true, value: { path: '/data/uploads/copy.csv', bytes: 4 } })) {
  const calls: Array<{ method: string; input: unknown; callId?: string }> = [];
  const cancelled: string[] = [];
  const bridge: TatraBridge = {
    invoke: (method, input, callId) => {
      calls.push({ method, input, ...(callId !== undefined ? { callId } : {}) });
      return answer();
    },
    cancel: (callId) => void cancelled.push(callId),
    subscribe: () => () => undefined,
    pathForFile: pathOf,
    platform: 'linux',
  };
  return { bridge, calls, cancelled };
}

const NO_SOCKET = class {} as unknown as typeof WebSocket;

describe('Electron upload', () => {
  it('passes the path of a file from disk and sends none of its bytes', async () => {
    const { bridge, calls } = fakeBridge(() => '/home/me/big data.csv');
    const file = new File([new Uint8Array([0x74, 0x65, 0xff, 0x0a])], 'big data.csv');
    await expect(ipcTransport(bridge).upload(file)).resolves.toEqual({ path: '/home/me/big data.csv', bytes: 4 });
    expect(calls).toEqual([]);
  });

  it('sends the text of a File that has no path on disk', async () => {
    const { bridge, calls } = fakeBridge(() => null);
    const file = new File(['a,b\n'], 'made.csv');
    await expect(ipcTransport(bridge).upload(file)).resolves.toEqual({ path: '/data/uploads/copy.csv', bytes: 4 });
    expect(calls).toEqual([{ method: 'jobs.upload', input: { name: 'made.csv', content: 'a,b\n' } }]);
  });
});

describe('browser upload', () => {
  it('posts the bytes to /api/upload', async () => {
    const seen: Array<{ url: string; body: unknown }> = [];
    const fetchStub = ((url: string, init: RequestInit) => {
      seen.push({ url, body: init.body });
      return Promise.resolve(new Response(JSON.stringify({ path: '/srv/uploads/x.csv', bytes: 4 }), { status: 200 }));
    }) as unknown as typeof fetch;
    const file = new File(['a,b\n'], 'x.csv');
    const t = browserTransport({ origin: 'http://127.0.0.1:1', fetch: fetchStub, WebSocket: NO_SOCKET });
    await expect(t.upload(file)).resolves.toEqual({ path: '/srv/uploads/x.csv', bytes: 4 });
    expect(seen).toEqual([{ url: 'http://127.0.0.1:1/api/upload?name=x.csv', body: file }]);
  });
});

describe('a call the page drops', () => {
  const plan = { taskId: 'sst2', generator: 'g.gguf', evaluator: 'g.gguf', dataPath: '/d.csv', inputColumn: 'text' } as never;

  it('over IPC: is named, cancelled by that name, and answers "cancelled" without waiting for the host', async () => {
    const { bridge, calls, cancelled } = fakeBridge(() => null, () => new Promise<BridgeReply>(() => undefined));
    const api = createApiClient(ipcTransport(bridge));
    const drop = new AbortController();
    const answer = api.call('plans.job', plan, { signal: drop.signal });
    expect(calls).toHaveLength(1);
    const id = calls[0]!.callId!;
    expect(id).toMatch(/^[A-Za-z0-9-]{1,64}$/);
    expect(cancelled).toEqual([]);
    drop.abort();
    await expect(answer).rejects.toEqual(new ApiCallError('cancelled', 'cancelled'));
    expect(cancelled).toEqual([id]);
    // A call given no signal is not named; one whose signal is already aborted is never sent.
    void api.call('tasks.list');
    expect(calls.at(-1)).toEqual({ method: 'tasks.list', input: {} });
    const count = calls.length;
    await expect(api.call('plans.job', plan, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'cancelled' });
    expect(calls.length).toBe(count);
  });

  it('over HTTP: the fetch gets the signal, and its abort is "cancelled", not "offline"', async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const fetchStub = ((_url: string, init: RequestInit) => {
      const signal = init.signal ?? undefined;
      signals.push(signal);
      return new Promise<Response>((_resolve, reject) => signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true }));
    }) as unknown as typeof fetch;
    const api = createApiClient(browserTransport({ origin: 'http://127.0.0.1:1', fetch: fetchStub, WebSocket: NO_SOCKET }));
    const drop = new AbortController();
    const answer = api.call('plans.job', plan, { signal: drop.signal });
    expect(signals).toEqual([drop.signal]);
    drop.abort();
    await expect(answer).rejects.toEqual(new ApiCallError('cancelled', 'cancelled'));
  });
});
