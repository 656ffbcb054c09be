// The sandboxed preload: the renderer's only door to the main process. It exposes five named
// members on `window.tatra` through contextBridge and never `ipcRenderer` itself (which would let
// page script send on any channel). Listeners receive (name, payload) only, never the
// IpcRendererEvent, whose `sender` is ipcRenderer. Bundled whole as CJS (scripts/build-node.mjs):
// a sandboxed preload may require nothing but a few Electron modules.
import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import {
  CANCEL_CHANNEL,
  EVENT_CHANNEL,
  INVOKE_CHANNEL,
  MAX_METHOD_LENGTH,
  isValidCallId,
  isValidMethodName,
  type BridgeListener,
  type BridgeReply,
  type TatraBridge,
} from './common/contract/bridge';

export function createBridge(
  ipc: Pick<typeof ipcRenderer, 'invoke' | 'send' | 'on' | 'removeListener'>,
  files: Pick<typeof webUtils, 'getPathForFile'>,
  platform: string,
): TatraBridge {
  return Object.freeze({
    invoke(method: string, input?: unknown, callId?: string): Promise<BridgeReply> {
      if (!isValidMethodName(method)) {
        return Promise.reject(new TypeError(`tatra.invoke: method must be a name like "tasks.list" of at most ${MAX_METHOD_LENGTH} characters`));
      }
      if (typeof input === 'function' || typeof input === 'symbol') {
        return Promise.reject(new TypeError('tatra.invoke: input must be plain data'));
      }
      if (callId === undefined) return ipc.invoke(INVOKE_CHANNEL, method, input) as Promise<BridgeReply>;
      if (!isValidCallId(callId)) return Promise.reject(new TypeError('tatra.invoke: callId must be 1–64 letters, digits or dashes'));
      return ipc.invoke(INVOKE_CHANNEL, method, input, callId) as Promise<BridgeReply>;
    },
    cancel(callId: string): void {
      if (!isValidCallId(callId)) throw new TypeError('tatra.cancel: callId must be 1–64 letters, digits or dashes');
      ipc.send(CANCEL_CHANNEL, callId);
    },
    subscribe(listener: BridgeListener): () => void {
      if (typeof listener !== 'function') throw new TypeError('tatra.subscribe: listener must be a function');
      const forward = (_event: IpcRendererEvent, name: unknown, payload: unknown): void => {
        if (typeof name !== 'string') return;
        // One failing listener must not stop the others, nor the IPC dispatch.
        try {
          listener(name, payload);
        } catch (e) {
          console.error('tatra.subscribe listener failed:', e);
        }
      };
      ipc.on(EVENT_CHANNEL, forward);
      let subscribed = true;
      return () => {
        if (!subscribed) return;
        subscribed = false;
        ipc.removeListener(EVENT_CHANNEL, forward);
      };
    },
    pathForFile(file: File): string | null {
      // webUtils answers '' for a File made in the page rather than read from disk, and throws
      // for anything that is not a File (instanceof is unreliable across the isolated worlds).
      try {
        return files.getPathForFile(file) || null;
      } catch {
        return null;
      }
    },
    platform,
  });
}

contextBridge.exposeInMainWorld('tatra', createBridge(ipcRenderer, webUtils, process.platform));
