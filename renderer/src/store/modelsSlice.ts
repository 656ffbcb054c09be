// Models: the library (with invalid files and their reasons), the hardware and per-model fit, the
// catalog and live downloads. Downloads run in the main process; this slice calls the API and
// follows its `download.progress` events (wired in connectStore), so a reload picks up whatever
// is still running. Comparisons are experiments (experimentsSlice).
import type {
  CatalogListing,
  DownloadState,
  FitEstimate,
  EndpointHealth,
  HardwareInfo,
  LibraryListing,
  RemoteModelStatus,
} from '../../../electron/common/contract/models';
import { getApi, messageOf } from '../api/client';
import type { GetState, SetState, SliceCreator } from './types';

export interface ModelsSlice {
  /** Bumped when the model library changes, so pickers re-read `models.list`. */
  modelsVersion: number;
  library: LibraryListing | null;
  libraryLoading: boolean;
  libraryError: string | null;
  hardware: HardwareInfo | null;
  /** Fit estimates by model path (at the default context and sequences). */
  fits: Record<string, FitEstimate | { error: string }>;
  catalog: CatalogListing[];
  /** Downloads by id, newest state. */
  downloads: Record<string, DownloadState>;

  /** Remote models (`remote:NAME`); endpoints are null until probed. Null: not loaded yet. */
  remoteModels: RemoteModelStatus[] | null;

  loadLibrary(): Promise<void>;
  /** Reads the remote entries; `probe` asks every endpoint for its health. */
  loadRemoteModels(probe?: boolean): Promise<void>;
  /** Probes servers before adding; the error line when it cannot. */
  probeRemote(input: RemoteInput): Promise<EndpointHealth[] | { error: string }>;
  addRemoteModel(input: RemoteInput & { name: string }): Promise<boolean>;
  removeRemoteModel(name: string): Promise<void>;
  addModelPath(kind: 'folder' | 'file', path: string): Promise<boolean>;
  removeModelPath(path: string): Promise<void>;
  loadHardware(): Promise<void>;
  loadFit(path: string): Promise<void>;
  loadCatalog(): Promise<void>;
  /** Starts (or resumes, when a partial file is there) a download; `dir` defaults to the host's folder. */
  startDownload(source: string, dir?: string): Promise<DownloadState | null>;
  cancelDownload(id: string): Promise<void>;
  /** Removes an ended download from the list (its partial file stays for resuming). */
  dismissDownload(id: string): Promise<void>;
  loadDownloads(): Promise<void>;
  handleDownloadProgress(s: DownloadState): void;
}

/** What the app sends to probe or add a remote model; a typed key goes to the host and never comes back. */
export interface RemoteInput {
  urls: string[];
  model: string;
  keyEnv?: string;
  key?: string;
  /** Requests in flight per endpoint at most (only when adding); unset: what the server's kind takes. */
  maxInFlight?: number;
}

let libraryLoad: Promise<void> | null = null;

/** Remote models' actions: the list (probed or not), a probe before adding, add and remove. */
type RemoteActions = Pick<ModelsSlice, 'loadRemoteModels' | 'probeRemote' | 'addRemoteModel' | 'removeRemoteModel'>;

function remoteActions(set: SetState, get: GetState): RemoteActions {
  return {
    async loadRemoteModels(probe = false) {
      try {
        set({ remoteModels: await getApi().call('models.remote.list', { probe }) });
      } catch (e) {
        get().notify('error', messageOf(e));
      }
    },
    async probeRemote(input) {
      try {
        return await getApi().call('models.remote.probe', input);
      } catch (e) {
        return { error: messageOf(e) };
      }
    },
    async addRemoteModel(input) {
      try {
        const added = await getApi().call('models.remote.add', input);
        const rest = (get().remoteModels ?? []).filter((r) => r.entry.name !== added.entry.name);
        set({ remoteModels: [...rest, added].sort((a, b) => a.entry.name.localeCompare(b.entry.name)), modelsVersion: get().modelsVersion + 1 });
        get().notify('info', `Added remote:${added.entry.name}`);
        return true;
      } catch (e) {
        get().notify('error', messageOf(e));
        return false;
      }
    },
    async removeRemoteModel(name) {
      try {
        await getApi().call('models.remote.remove', { name });
        set({ remoteModels: (get().remoteModels ?? []).filter((r) => r.entry.name !== name), modelsVersion: get().modelsVersion + 1 });
      } catch (e) {
        get().notify('error', messageOf(e));
      }
    },
  };
}

/** Downloads' actions: start, cancel, dismiss, the list, and their live progress (a finished one reloads the library). */
type DownloadActions = Pick<ModelsSlice, 'startDownload' | 'cancelDownload' | 'dismissDownload' | 'loadDownloads' | 'handleDownloadProgress'>;

function downloadActions(set: SetState, get: GetState): DownloadActions {
  return {
    async startDownload(source, dir) {
      try {
        const s = await getApi().call('models.download', dir ? { source, dir } : { source });
        // A progress event may already have arrived; never go back to an older state.
        const known = get().downloads[s.id];
        if (!known) set({ downloads: { ...get().downloads, [s.id]: s } });
        return s;
      } catch (e) {
        get().notify('error', messageOf(e));
        return null;
      }
    },
    async cancelDownload(id) {
      try {
        await getApi().call('models.cancelDownload', { id });
      } catch (e) {
        get().notify('error', messageOf(e));
      }
    },
    async dismissDownload(id) {
      try {
        await getApi().call('models.dismissDownload', { id });
        const { [id]: _gone, ...rest } = get().downloads;
        set({ downloads: rest });
      } catch (e) {
        get().notify('error', messageOf(e));
      }
    },
    async loadDownloads() {
      try {
        const list = await getApi().call('models.downloads', {});
        set({ downloads: Object.fromEntries(list.map((d) => [d.id, d])) });
      } catch {
        // Not fatal: live events still arrive.
      }
    },
    handleDownloadProgress(s) {
      const before = get().downloads[s.id];
      set({ downloads: { ...get().downloads, [s.id]: s } });
      if (s.status === 'done' && before?.status !== 'done') {
        set({ modelsVersion: get().modelsVersion + 1 });
        void get().loadLibrary();
      } else if ((s.status === 'cancelled' || s.status === 'error') && before?.status !== s.status) {
        // A partial file may now be waiting to be resumed.
        void get().loadLibrary();
      }
    },
  };
}

export const createModelsSlice: SliceCreator<ModelsSlice> = (set, get) => ({
  modelsVersion: 0,
  remoteModels: null,
  library: null,
  libraryLoading: false,
  libraryError: null,
  hardware: null,
  fits: {},
  catalog: [],
  downloads: {},

  loadLibrary() {
    // Several pickers and views ask at once: one call answers them all.
    libraryLoad ??= (async () => {
      set({ libraryLoading: true });
      try {
        const library = await getApi().call('models.list', {});
        set({ library, libraryError: null });
      } catch (e) {
        set({ libraryError: messageOf(e) });
      } finally {
        set({ libraryLoading: false });
        libraryLoad = null;
      }
    })();
    return libraryLoad;
  },
  ...remoteActions(set, get),
  async addModelPath(kind, path) {
    try {
      const before = new Set((get().library?.models ?? []).map((m) => m.path));
      const library = await getApi().call(kind === 'folder' ? 'models.addFolder' : 'models.addFile', { path });
      set({ library, libraryError: null, modelsVersion: get().modelsVersion + 1 });
      // Say what the library gained, not just that a path was stored.
      const found = library.models.filter((m) => !before.has(m.path));
      const unusable = library.invalid.filter((i) => i.path.startsWith(path)).length;
      if (found.length === 0 && kind === 'folder') {
        get().notify('error', `${path} holds no usable GGUF model${unusable ? ` (${unusable} unusable file${unusable === 1 ? '' : 's'}, with the reasons, in the library below)` : ''}.`);
      } else {
        get().notify('success', `Added ${found.length === 1 ? found[0]!.name : `${found.length} models`} from ${path}${unusable ? `; ${unusable} unusable file${unusable === 1 ? '' : 's'} listed below` : ''}.`);
      }
      return true;
    } catch (e) {
      get().notify('error', messageOf(e));
      return false;
    }
  },
  async removeModelPath(path) {
    try {
      const library = await getApi().call('models.remove', { path });
      set({ library, modelsVersion: get().modelsVersion + 1 });
    } catch (e) {
      get().notify('error', messageOf(e));
    }
  },
  async loadHardware() {
    try {
      set({ hardware: await getApi().call('models.hardware', {}) });
    } catch (e) {
      get().notify('error', `Hardware: ${messageOf(e)}`);
    }
  },
  async loadFit(path) {
    try {
      const fit = await getApi().call('models.fit', { path });
      set({ fits: { ...get().fits, [path]: fit } });
    } catch (e) {
      set({ fits: { ...get().fits, [path]: { error: messageOf(e) } } });
    }
  },
  async loadCatalog() {
    try {
      set({ catalog: await getApi().call('models.catalog', {}) });
    } catch (e) {
      get().notify('error', `Catalog: ${messageOf(e)}`);
    }
  },
  ...downloadActions(set, get),
});

/** A fit estimate, or null when missing or failed. */
export function fitOf(fits: ModelsSlice['fits'], path: string): FitEstimate | null {
  const f = fits[path];
  return f && !('error' in f) ? f : null;
}
