// The shape of `window.tatra`, the only thing Electron's preload hands the renderer.
// Shared by the preload (which implements it over IPC), the main process (which answers on the
// same channels) and the renderer's Electron transport (which calls it). Deliberately untyped
// per method: the renderer's client derives method types from the contract and validates; the
// main process validates every payload again where it enters, so nothing here is trusted.
// common/: no Node, no DOM imports.
import { type ApiErrorPayload } from './define';

/** IPC channel for requests: `ipcRenderer.invoke(INVOKE_CHANNEL, method, input)`. */
export const INVOKE_CHANNEL = 'tatra:invoke';
/** IPC channel for pushed events: `webContents.send(EVENT_CHANNEL, name, payload)`. */
export const EVENT_CHANNEL = 'tatra:event';

/**
 * IPC channel for dropping a call: `ipcRenderer.send(CANCEL_CHANNEL, callId)`. The main process
 * aborts the signal of that sender's call (api/deps.ts CallContext); the call still answers.
 */
export const CANCEL_CHANNEL = 'tatra:cancel';

/** Longest method name the bridge forwards; contract names are short dotted words ("jobs.start"). */
export const MAX_METHOD_LENGTH = 100;

/**
 * What every call answers. Errors travel as data rather than as a rejected promise because
 * Electron flattens an error thrown in `ipcMain.handle` into one string ("Error invoking remote
 * method …"), losing its code; a rejection from `invoke` therefore means the transport itself
 * failed (bad arguments, window closing), never an API error.
 */
export type BridgeReply<T = unknown> = { ok: true; value: T } | { ok: false; error: ApiErrorPayload };

export type BridgeListener = (event: string, payload: unknown) => void;

/** `window.tatra` in the Electron renderer. Absent in browser mode. */
export interface TatraBridge {
  /**
   * Calls an API method ("tasks.list", "jobs.start", …) in the main process. `input` must be
   * structured-cloneable. Rejects (TypeError) when `method` is not a non-empty string of at most
   * MAX_METHOD_LENGTH characters.
   */
  invoke(method: string, input?: unknown, callId?: string): Promise<BridgeReply>;
  /**
   * Drops the call made with `callId` (a name the page chose, see isValidCallId): work the host
   * does only for its answer stops, and the call answers "cancelled". Unknown ids are ignored.
   */
  cancel(callId: string): void;
  /**
   * Receives every event the main process streams ("classify.event", "job.progress", …).
   * Returns the function that unsubscribes this listener.
   */
  subscribe(listener: BridgeListener): () => void;
  /**
   * The path on disk of a File the user dropped or picked (Electron's webUtils.getPathForFile),
   * so a large data set can be read in place by the main process instead of copied over IPC;
   * null for a File that does not come from disk or for anything that is not a File.
   */
  pathForFile(file: File): string | null;
  /** `process.platform` of the main process ("linux", "darwin", "win32"). */
  readonly platform: string;
}

/** True when `id` may name a call: 1–64 letters, digits and dashes (a UUID); both ends check it. */
export function isValidCallId(id: unknown): id is string {
  return typeof id === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(id);
}

/** True when `method` is a plausible contract method name; both ends check it. */
export function isValidMethodName(method: unknown): method is string {
  return typeof method === 'string' && method.length > 0 && method.length <= MAX_METHOD_LENGTH && /^[A-Za-z][\w.-]*$/.test(method);
}

declare global {
  interface Window {
    /** Present only inside the Electron app (see electron/preload.ts). */
    tatra?: TatraBridge;
  }
}
