// The composition root: the long-lived services of one data folder, built one way for every face.
// The CLI's commands (cli/session.ts), the API host (so `tatra serve` and Electron main) and the
// OpenAI-compatible service face all call `openServices()` and never assemble a pool, a job
// manager or a task lookup of their own. Everything that touches the disk or loads a model is
// opened on first use, so a command that only lists tasks opens no database and loads nothing.
//
// What a face still chooses, and only here: its threads, context size and default sequences, how
// long an unused model stays loaded, whether a task may be named by a file path, and (tests) a
// scripted backend provider. Defaults every face shares live beside the data they default:
// early decision per kind of work in common/settings.ts (`withEarlyStop`); a job's models load with
// one sequence per row in flight (its `concurrency`, JobManager), the same from every face.
import { accessSync, constants, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Experiments } from '../experiments';
import { JobManager, Planner, openJobStore, type BackendProvider, type JobStore } from '../jobs';
import { ModelPool } from '../hold';
import { defaultThreads } from '../llama/threads';
import { ModelLibrary } from '../models';
import { RemoteLibrary, type KeyProtection } from '../models/remote-library';
import { defaultModelsDir } from '../paths';
import { taskFolder, type TaskFolder } from '../tasks';
import { DisposableStore } from '../common/disposables';
import { createSettingsStore, type SettingsStore } from './settings-store';

/** How long an unused model stays loaded in a long-lived face, so a second classify does not reload it. */
export const MODEL_KEEP_ALIVE_MS = 30_000;

/** What an `onOpen` hook returns: how to stop listening (called when the services are disposed, before the manager). */
type Unsubscribe = (() => void) | void;

export interface ServicesOptions {
  /** The data folder: job database, user tasks, settings, remote models, uploads, exports. */
  dataDir: string;
  /** Threads for node-llama-cpp (default: defaultThreads(), llama/threads.ts, read on first use). */
  threads?: number;
  /** Context size per sequence of every model loaded (default: the backend's). */
  contextSize?: number;
  /** Parallel sequences of a model loaded outside a job (classify); default the backend's 4. */
  sequences?: number;
  /**
   * How long a model nothing holds stays loaded. A CLI command: 0 (unloaded at once); a long-lived
   * face (the app, `tatra serve`, `tatra api`): MODEL_KEEP_ALIVE_MS.
   */
  keepAliveMs?: number;
  /** Whether a task may be named by a task file's path (the CLI: yes; a face serving a page: never). */
  taskPaths?: boolean;
  /** Extra model folders for the library (beside models/, the download folder and those in settings). */
  modelsDirs?: readonly string[];
  /** How keys typed into the app are protected at rest (Electron: safeStorage); default a 0600 file. */
  keyProtection?: KeyProtection;
  /** Tests: serve models from this provider instead of node-llama-cpp's pool. */
  backendProvider?: BackendProvider;
  /**
   * Called once when the job manager (or the experiments) is first opened, whoever opens it: the
   * API host forwards their events from then on.
   */
  onOpen?: { jobs?(manager: JobManager): Unsubscribe; experiments?(experiments: Experiments): Unsubscribe };
}

export interface Services {
  /** Absolute data folder. */
  readonly dataDir: string;
  /** Threads given to node-llama-cpp. */
  readonly threads: number;
  /** Built-in and user tasks (`taskPaths` decides whether `tasks.resolve` takes file paths). */
  readonly tasks: TaskFolder;
  /** The app's stored settings (`settings.json`). */
  readonly settings: SettingsStore;
  /** Remote models of the library (`remote:NAME`) and keys typed for them (kept on this side). */
  readonly remotes: RemoteLibrary;
  /**
   * The one model pool: every classify, job, sweep and comparison acquires from it, so one file
   * is loaded once and a model nothing holds is unloaded (after `keepAliveMs`).
   */
  readonly pool: BackendProvider;
  /** The GGUF library: models/, the download folder, added folders and files, settings' folders. */
  readonly library: ModelLibrary;
  /** Where downloads go: models/ when writable, else `<dataDir>/models` (a packaged app). */
  readonly downloadDir: string;
  /** The SQLite store `<dataDir>/tatra.db` (opened on first use). */
  jobStore(): JobStore;
  /** The job manager on that store and the pool. */
  jobs(): JobManager;
  /** Every kind of experiment (sweeps, comparisons) on the same store, jobs and pool. */
  experiments(): Experiments;
  /** Plans (what a run will cost) over the same store: its cache, past jobs and calibrations; tokenizers only. */
  planner(): Planner;
  /** Pauses running sweeps and jobs (resumable), closes the database, unloads every model. Idempotent. */
  dispose(): Promise<void>;
}

/** `open()` once, on first use; `peek()` without opening. */
function lazy<T>(open: () => T): { get(): T; peek(): T | undefined } {
  let value: { v: T } | undefined;
  return {
    get: () => (value ??= { v: open() }).v,
    peek: () => value?.v,
  };
}

/**
 * `preferred` when it is (or can be made) a writable folder, else `fallback`: a packaged app's
 * models/ folder sits inside read-only application files, so downloads go to the data folder.
 */
function writableOr(preferred: string, fallback: string): string {
  try {
    mkdirSync(preferred, { recursive: true });
    accessSync(preferred, constants.W_OK);
    return preferred;
  } catch {
    return fallback;
  }
}

/**
 * Where models are: the default folder, the folder downloads go to (the default when it is
 * writable, else one in the data folder), and the library over them and the folders a face or the
 * settings add. Each opened on first use.
 */
function modelFolders(dataDir: string, opts: ServicesOptions, settings: SettingsStore) {
  const folders = lazy(() => {
    const defaultDir = resolve(defaultModelsDir());
    const downloadDir = resolve(writableOr(defaultDir, join(dataDir, 'models')));
    if (downloadDir !== defaultDir) {
      try {
        mkdirSync(downloadDir, { recursive: true });
      } catch {
        // Reported by the library listing and by the first download.
      }
    }
    return { defaultDir, downloadDir };
  });
  const library = lazy(() => {
    const { defaultDir, downloadDir } = folders.get();
    return new ModelLibrary(dataDir, {
      defaultDir,
      extraFolders: async () => [...(downloadDir !== defaultDir ? [downloadDir] : []), ...(opts.modelsDirs ?? []), ...(await settings.read()).modelsDirs],
    });
  });
  return { folders, library };
}

export function openServices(opts: ServicesOptions): Services {
  const dataDir = resolve(opts.dataDir);
  const threads = lazy(() => opts.threads ?? defaultThreads());
  const settings = createSettingsStore(dataDir);
  const remotes = new RemoteLibrary(dataDir, opts.keyProtection);
  const tasks = taskFolder(dataDir, { allowPaths: opts.taskPaths === true });
  // What is opened joins this store as it is opened, and dispose() closes it in the reverse order:
  // experiments pause their running job, then the jobs pause (resumable), then the database
  // closes. The models unload last, however late the pool was first used: it is added first.
  const lifetime = new DisposableStore();
  lifetime.add(() => modelPool.peek()?.dispose());

  const modelPool = lazy(
    () =>
      new ModelPool({
        keepAliveMs: opts.keepAliveMs ?? 0,
        remote: { lookup: remotes },
        defaults: {
          // Without --threads a local load takes the machine's default (llama/threads.ts) when it
          // happens: a run on remote models only never reads it.
          ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
          ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}),
          ...(opts.sequences !== undefined ? { sequences: opts.sequences } : {}),
        },
      }),
  );
  // node-llama-cpp's pool is made on the first acquire, and reads the thread default only when it
  // loads a local model (a bad $TATRA_THREADS then fails only what would load one).
  const pool: BackendProvider = opts.backendProvider ?? {
    acquire: (path, o) => modelPool.get().acquire(path, o),
    describeRemote: (spec, o) => modelPool.get().describeRemote(spec, o),
  };

  const { folders, library } = modelFolders(dataDir, opts, settings);

  const store = lazy(() => {
    const s = openJobStore(dataDir);
    lifetime.add(() => s.close());
    return s;
  });
  /** A manager opened on the store, and what the face listens to on it, closed in that order's reverse. */
  const managed = <M extends { dispose(): Promise<void> }>(m: M, listen: ((manager: M) => Unsubscribe) | undefined): M => {
    lifetime.add(m);
    const off = listen?.(m);
    if (off) lifetime.add(off);
    return m;
  };
  const jobs = lazy(() => managed(new JobManager({ store: store.get(), backends: pool, resolveTask: (ref) => tasks.resolve(ref) }), opts.onOpen?.jobs));
  const experiments = lazy(() => managed(new Experiments({ jobs: jobs.get(), store: store.get(), pool, lookup: remotes, planner: () => planner.get(), resolveTask: (ref) => tasks.resolve(ref) }), opts.onOpen?.experiments));
  const planner = lazy(() =>
    managed(
      new Planner({
        store: store.get(),
        dataDir,
        lookup: remotes,
        ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}),
        ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
      }),
      undefined,
    ),
  );

  return {
    dataDir,
    get threads() {
      return threads.get();
    },
    tasks,
    settings,
    remotes,
    pool,
    get library() {
      return library.get();
    },
    get downloadDir() {
      return folders.get().downloadDir;
    },
    jobStore: store.get,
    jobs: jobs.get,
    experiments: experiments.get,
    planner: planner.get,
    dispose: () => lifetime.dispose(),
  };
}
