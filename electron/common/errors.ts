// Errors a user can act on (bad file, bad number, unknown task). Every face shows `message` as
// one clear line with no stack: the CLI exits 2, the API answers with code "user_error".
// Anything else is a bug and is reported as such.
import { onAbort } from './abort';

export class UserError extends Error {
  constructor(
    message: string,
    /** Machine-readable reason, e.g. "gguf_invalid", "task_unknown", "csv_malformed". */
    readonly code: string = 'user_error',
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/**
 * A cancel: what `signal.throwIfAborted()` throws and `signal.reason` holds for `controller.abort()`
 * (a DOMException named AbortError), the one form every layer rejects with.
 */
export function isAbortError(e: unknown): boolean {
  return e instanceof Error && e.name === 'AbortError';
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * `promise`, or a rejection with `signal`'s reason as soon as it aborts: the caller stops waiting,
 * while the work goes on for whoever else waits for it (a model loading, an identical request).
 */
export function raceAbort<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolvePromise, reject) => {
    const forget = onAbort(signal, () => reject(signal.reason));
    promise.then(
      (v) => {
        forget();
        resolvePromise(v);
      },
      (e: unknown) => {
        forget();
        reject(e);
      },
    );
  });
}
