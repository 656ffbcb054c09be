// The Electron transport's upload: a file the user picked from disk goes to the main process as
// its path (webUtils through the preload), never as text over IPC; only a File made in the page,
// which has no path, is sent as content. Browser mode keeps uploading the bytes.
import { describe, expect, it } from 'vitest';
import type { BridgeReply, TatraBridge } from '../../../electron/common/contract/bridge';
import { browserTransport, ipcTransport } from '../../../renderer/src/api/client';

function fakeBridge(pathOf: (f: File) => string | null) {
  const calls: Array<{ method: string; input: unknown }> = [];
  const bridge: TatraBridge = {
    invoke: (method, input) => {
      calls.push({ method, input });
      return Promise.resolve({ ok: true, value: { path: '/data/uploads/copy.csv', bytes: 4 } } as BridgeReply);
    },
    subscribe: () => () => undefined,
    pathForFile: pathOf,
    platform: 'linux',
  };
  return { bridge, calls };
}

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
    const t = browserTransport({ origin: 'http://127.0.0.1:1', fetch: fetchStub, WebSocket: class {} as unknown as typeof WebSocket });
    await expect(t.upload(file)).resolves.toEqual({ path: '/srv/uploads/x.csv', bytes: 4 });
    expect(seen).toEqual([{ url: 'http://127.0.0.1:1/api/upload?name=x.csv', body: file }]);
  });
});
