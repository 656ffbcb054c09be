// The preload exposes exactly its five members and never ipcRenderer; listeners never see the
// IpcRendererEvent (its `sender` is ipcRenderer itself). Checked against a recording ipcRenderer
// and contextBridge, since a sandboxed renderer needs Electron's binary (see e2e/electron.spec.ts).
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CANCEL_CHANNEL, EVENT_CHANNEL, INVOKE_CHANNEL, type TatraBridge } from '../../../electron/common/contract/bridge';

type Listener = (...args: unknown[]) => void;
const rec = vi.hoisted(() => ({
  exposed: new Map<string, unknown>(),
  invoked: [] as unknown[][],
  sent: [] as unknown[][],
  listeners: new Map<string, Listener[]>(),
}));

vi.mock('electron', () => {
  const ipcRenderer = {
    invoke: (...args: unknown[]) => {
      rec.invoked.push(args);
      return Promise.resolve({ ok: true, value: 'pong' });
    },
    on: (channel: string, fn: Listener) => {
      rec.listeners.set(channel, [...(rec.listeners.get(channel) ?? []), fn]);
      return ipcRenderer;
    },
    removeListener: (channel: string, fn: Listener) => {
      rec.listeners.set(channel, (rec.listeners.get(channel) ?? []).filter((l) => l !== fn));
      return ipcRenderer;
    },
    send: (...args: unknown[]) => {
      rec.sent.push(args);
    },
  };
  const webUtils = {
    getPathForFile: (file: unknown) => {
      if (typeof file !== 'object' || file === null || !('name' in file)) throw new TypeError('not a File');
      return (file as { name: string }).name === 'on-disk.csv' ? '/home/me/on-disk.csv' : '';
    },
  };
  return {
    ipcRenderer,
    webUtils,
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => void rec.exposed.set(key, api) },
  };
});

let bridge: TatraBridge;
const sender = { id: 'ipcRenderer itself' };
function push(name: unknown, payload: unknown): void {
  for (const l of rec.listeners.get(EVENT_CHANNEL) ?? []) l({ sender }, name, payload);
}

beforeAll(async () => {
  await import('../../../electron/preload');
  bridge = rec.exposed.get('tatra') as TatraBridge;
});

describe('preload bridge', () => {
  it('exposes only window.tatra with invoke, cancel, subscribe, pathForFile and platform, frozen', () => {
    expect([...rec.exposed.keys()]).toEqual(['tatra']);
    expect(Object.keys(bridge).sort()).toEqual(['cancel', 'invoke', 'pathForFile', 'platform', 'subscribe']);
    expect(bridge.platform).toBe(process.platform);
    expect(Object.isFrozen(bridge)).toBe(true);
    expect(Object.values(bridge)).not.toContainEqual(expect.objectContaining({ invoke: expect.anything(), on: expect.anything() }));
  });

  it('invokes on the one channel with the method and input', async () => {
    await expect(bridge.invoke('tasks.get', { id: 'sst2' })).resolves.toEqual({ ok: true, value: 'pong' });
    expect(rec.invoked.at(-1)).toEqual([INVOKE_CHANNEL, 'tasks.get', { id: 'sst2' }]);
  });

  it('rejects bad arguments without touching IPC', async () => {
    const count = rec.invoked.length;
    await expect(bridge.invoke(42 as unknown as string, {})).rejects.toThrow(TypeError);
    await expect(bridge.invoke('', {})).rejects.toThrow(/method/);
    await expect(bridge.invoke('a'.repeat(101), {})).rejects.toThrow(/method/);
    await expect(bridge.invoke('tasks.list', () => 1)).rejects.toThrow(/plain data/);
    expect(rec.invoked.length).toBe(count);
    expect(() => bridge.subscribe('nope' as unknown as () => void)).toThrow(TypeError);
  });

  it('names a call when asked, and drops it on the one cancel channel; sends nothing else', async () => {
    const id = '0b7c2a52-1f9e-4c57-9a1e-5d2f1b0c9e11';
    await expect(bridge.invoke('plans.job', { rows: 1 }, id)).resolves.toEqual({ ok: true, value: 'pong' });
    expect(rec.invoked.at(-1)).toEqual([INVOKE_CHANNEL, 'plans.job', { rows: 1 }, id]);
    bridge.cancel(id);
    expect(rec.sent).toEqual([[CANCEL_CHANNEL, id]]);
    const count = rec.invoked.length;
    for (const bad of ['', 'x'.repeat(65), 'a b', '../x', 7]) {
      await expect(bridge.invoke('plans.job', {}, bad as string)).rejects.toThrow(TypeError);
      expect(() => bridge.cancel(bad as string)).toThrow(TypeError);
    }
    expect(rec.invoked.length).toBe(count);
    expect(rec.sent).toHaveLength(1);
  });

  it('delivers (name, payload) without the IPC event, and unsubscribes', () => {
    const got: unknown[][] = [];
    const off = bridge.subscribe((...args: unknown[]) => void got.push(args));
    push('job.progress', { rowsDone: 3 });
    push(7, 'not a name');
    expect(got).toEqual([['job.progress', { rowsDone: 3 }]]);
    expect(JSON.stringify(got)).not.toContain('ipcRenderer itself');
    off();
    off();
    push('job.progress', { rowsDone: 4 });
    expect(got).toHaveLength(1);
    expect(rec.listeners.get(EVENT_CHANNEL)).toHaveLength(0);
  });

  it('gives the disk path of a dropped file, null for anything else', () => {
    expect(bridge.pathForFile({ name: 'on-disk.csv' } as File)).toBe('/home/me/on-disk.csv');
    expect(bridge.pathForFile({ name: 'made-in-page.csv' } as File)).toBeNull();
    expect(bridge.pathForFile('not a file' as unknown as File)).toBeNull();
  });

  it('keeps other listeners going when one throws', () => {
    const got: string[] = [];
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const offA = bridge.subscribe(() => {
      throw new Error('boom');
    });
    const offB = bridge.subscribe((name) => void got.push(name));
    push('classify.event', {});
    expect(got).toEqual(['classify.event']);
    expect(error).toHaveBeenCalled();
    offA();
    offB();
    error.mockRestore();
  });
});
