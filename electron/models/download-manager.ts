// The downloads running in this process (the app's and the API's): started in the background,
// reported as events, cancelled, waited for, forgotten once ended. Each is downloadModel (download.ts).
import { EventEmitter } from 'node:events';
import { join, resolve as resolvePath } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DownloadState } from '../common/contract/models';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import { downloadModel, initialState } from './download';

export interface DownloadManagerOptions {
  /** Default destination folder. */
  dir: string;
  catalogPath?: string;
  connectTimeoutMs?: number;
  idleTimeoutMs?: number;
  retries?: number;
  hfEndpoint?: string;
}

export interface DownloadEvents {
  progress: [DownloadState];
  done: [DownloadState];
  error: [DownloadState];
}

interface Running {
  state: DownloadState;
  dir: string;
  controller: AbortController;
  promise: Promise<DownloadState>;
}

/** Runs downloads in the background and reports them as events (UI and API). */
export class DownloadManager extends EventEmitter<DownloadEvents> {
  private readonly downloads = new Map<string, Running>();

  constructor(readonly options: DownloadManagerOptions) {
    super();
  }

  /** Start a download; answers at once with its first state ("queued" until resolved). */
  start(source: string, dir?: string): DownloadState {
    const id = randomUUID();
    const targetDir = resolvePath(dir ?? this.options.dir);
    for (const d of this.downloads.values()) {
      if (d.state.source === source && d.dir === targetDir && (d.state.status === 'queued' || d.state.status === 'downloading' || d.state.status === 'verifying')) {
        throw new UserError(`"${source}" is already downloading`, 'download_busy');
      }
    }
    const controller = new AbortController();
    const state: DownloadState = { ...initialState(source, { url: '', fileName: '' }, join(targetDir, ''), id), status: 'queued' };
    const entry: Running = { state, dir: targetDir, controller, promise: Promise.resolve(state) };
    entry.promise = downloadModel(source, {
      id,
      dir: targetDir,
      signal: controller.signal,
      connectTimeoutMs: this.options.connectTimeoutMs,
      idleTimeoutMs: this.options.idleTimeoutMs,
      retries: this.options.retries,
      catalogPath: this.options.catalogPath,
      hfEndpoint: this.options.hfEndpoint,
      onProgress: (s) => {
        entry.state = s;
        this.emit('progress', { ...s });
      },
    }).then(
      (s) => {
        entry.state = s;
        this.emit('done', { ...s });
        return { ...s };
      },
      (e: unknown) => {
        const cancelled = controller.signal.aborted || isAbortError(e);
        entry.state = { ...entry.state, status: cancelled ? 'cancelled' : 'error', error: cancelled ? 'cancelled' : errorMessage(e), rate: 0, etaSeconds: null, finishedAt: Date.now() };
        this.emit('progress', { ...entry.state });
        // EventEmitter throws on an 'error' nobody listens to; the state above already says it.
        if (this.listenerCount('error') > 0) this.emit('error', { ...entry.state });
        return { ...entry.state };
      },
    );
    this.downloads.set(id, entry);
    return { ...state };
  }

  /** Wait for a download to finish (resolves with its last state, whatever the outcome). */
  wait(id: string): Promise<DownloadState> {
    const d = this.downloads.get(id);
    if (!d) return Promise.reject(new UserError(`no download with id ${id}`, 'download_unknown'));
    return d.promise;
  }

  /** Cancel a download; its partial file stays so starting it again resumes. */
  cancel(id: string): DownloadState {
    const d = this.downloads.get(id);
    if (!d) throw new UserError(`no download with id ${id}`, 'download_unknown');
    d.controller.abort();
    return { ...d.state };
  }

  list(): DownloadState[] {
    return [...this.downloads.values()].map((d) => ({ ...d.state }));
  }

  /** Forgets a download that has ended (done, failed or cancelled); its partial file, if any, stays on disk. */
  forget(id: string): boolean {
    const d = this.downloads.get(id);
    if (!d) return false;
    if (d.state.status === 'queued' || d.state.status === 'downloading' || d.state.status === 'verifying') throw new UserError('the download is still running: cancel it first', 'download_running');
    return this.downloads.delete(id);
  }

  /** Cancel everything still running and wait for it to stop. */
  async dispose(): Promise<void> {
    for (const d of this.downloads.values()) d.controller.abort();
    await Promise.all([...this.downloads.values()].map((d) => d.promise));
  }
}
