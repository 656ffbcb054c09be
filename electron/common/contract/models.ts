// The models part of the API contract: the model library, hardware and fit, downloads and remote
// models (comparisons of models are experiments: comparisons.ts). The zod schemas here are also the TypeScript types
// electron/models/ works with, so the library, the CLI and the UI can never disagree on a shape.
// common/: no Node, no DOM.
import { z } from 'zod';
import { method } from './define';
import { MaxInFlight, RemoteModelEntry, ServerProbe } from '../remote';

// ---------------------------------------------------------------- library

/** Where a library entry came from. */
export const ModelSource = z.enum(['models-dir', 'folder', 'file']);
export type ModelSource = z.infer<typeof ModelSource>;

/** One valid GGUF, described from its header only (nothing loaded). */
export const ModelEntry = z.object({
  /** Absolute path; the identity of the model everywhere else. */
  path: z.string(),
  fileName: z.string(),
  /** general.name when the file has one, else the file name without `.gguf`. */
  name: z.string(),
  architecture: z.string(),
  /** Total parameters counted from the tensor shapes; null when the header does not allow it. */
  parameters: z.number().nullable(),
  /** e.g. "Q4_K_M", "F16"; null when unknown. */
  quantization: z.string().nullable(),
  sizeBytes: z.number(),
  /** Context length the model was trained with; null when the header does not say. */
  contextLength: z.number().nullable(),
  hasChatTemplate: z.boolean(),
  layers: z.number().nullable(),
  source: ModelSource,
});
export type ModelEntry = z.infer<typeof ModelEntry>;

/** A file that looks like a model but is not usable, with the reason in one line. */
export const InvalidModel = z.object({
  path: z.string(),
  /** e.g. "not a GGUF file", "truncated: 1.2 MB of 4.4 MB", "unreadable: EACCES". */
  reason: z.string(),
  /** Machine-readable: not_gguf, truncated, unreadable, missing, invalid. */
  code: z.string(),
});
export type InvalidModel = z.infer<typeof InvalidModel>;

/** A download that stopped before it finished (app closed, cancelled, connection lost): resumable. */
export const PartialDownload = z.object({
  /** Where the model will be once finished. */
  path: z.string(),
  /** What to download again to resume (URL or catalog id as first given). */
  source: z.string(),
  bytes: z.number(),
  total: z.number().nullable(),
});
export type PartialDownload = z.infer<typeof PartialDownload>;

export const LibraryListing = z.object({
  models: z.array(ModelEntry),
  invalid: z.array(InvalidModel),
  /** Unfinished downloads found in the scanned folders (never listed as models). */
  partials: z.array(PartialDownload).default([]),
  /** The default models/ folder (always scanned). */
  defaultDir: z.string(),
  /** Folders and files the user added, referenced in place. */
  folders: z.array(z.string()),
  files: z.array(z.string()),
});
export type LibraryListing = z.infer<typeof LibraryListing>;

// ---------------------------------------------------------------- hardware and fit

export const MemoryState = z.object({ total: z.number(), free: z.number() });
export type MemoryState = z.infer<typeof MemoryState>;

/** A GPU backend node-llama-cpp can run on, or "cpu" where it has none. */
export const GpuBackend = z.enum(['cuda', 'metal', 'vulkan', 'cpu']);
export type GpuBackend = z.infer<typeof GpuBackend>;

export const GpuCard = z.object({
  name: z.string(),
  /** Bytes; null where llama.cpp only reports the sum over several cards. */
  vramTotal: z.number().nullable(),
  vramFree: z.number().nullable(),
});
export type GpuCard = z.infer<typeof GpuCard>;

/**
 * The GPU facts a load is planned against (llama/fit.ts): the backend, its cards and their memory.
 * Read from the process's Llama, or given as a stand-in (tests, what-ifs: $TATRA_GPU_STANDIN).
 */
export const GpuFacts = z.object({
  backend: GpuBackend,
  cards: z.array(GpuCard),
  /** Sum over the cards (0 on the CPU). */
  vram: MemoryState,
  /** The GPU shares the machine's RAM (Apple silicon's Metal). */
  unifiedMemory: z.boolean(),
  /** Not this machine's: a stand-in given for a test or a what-if. */
  standIn: z.boolean(),
});
export type GpuFacts = z.infer<typeof GpuFacts>;

export const HardwareInfo = z.object({
  /** The GPU facts loads are planned against. */
  gpu: GpuFacts,
  ram: MemoryState,
  cpuCores: z.number().int(),
  /** Threads TATRA gives llama.cpp. */
  threads: z.number().int(),
});
export type HardwareInfo = z.infer<typeof HardwareInfo>;

export const FitOptions = z.object({
  /** Tokens per sequence. */
  contextSize: z.number().int().min(64).max(1_048_576).default(4096),
  /** Parallel sequences in one context. */
  sequences: z.number().int().min(1).max(64).default(1),
});
export type FitOptions = z.input<typeof FitOptions>;

export const FitEstimate = z.object({
  path: z.string(),
  contextSize: z.number().int(),
  sequences: z.number().int(),
  /** Weights alone, bytes. */
  modelBytes: z.number(),
  /** KV cache and compute buffers for the context, bytes. */
  contextBytes: z.number(),
  /** modelBytes + contextBytes: what loading needs in all, across RAM and VRAM. */
  totalBytes: z.number(),
  /** Of the plan below: bytes in RAM and bytes in VRAM. */
  ramBytes: z.number(),
  vramBytes: z.number(),
  totalLayers: z.number().int(),
  /** Layers the plan offloads to the GPU (0 on CPU): the load asks the same resolver the same question. */
  gpuLayers: z.number().int(),
  /** The backend, cards and free VRAM the plan was made against. */
  gpu: GpuFacts,
  /** Where the layers go, in plain words ("19 of 29 layers on the GPU (…); the other 10 on the CPU, slower"). */
  offload: z.string(),
  /** gpu: everything on the GPU; partial: some layers on the CPU; cpu: no GPU offload. */
  plan: z.enum(['gpu', 'partial', 'cpu']),
  fits: z.boolean(),
  /** What was available when estimated. */
  ramFree: z.number(),
  vramFree: z.number(),
  /** One line for the user when it will not fit (or only just); null otherwise. */
  warning: z.string().nullable(),
});
export type FitEstimate = z.infer<typeof FitEstimate>;

// ---------------------------------------------------------------- catalog and downloads

export const CatalogEntry = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/),
  name: z.string(),
  family: z.string(),
  /** e.g. "7B". */
  parameters: z.string(),
  quantization: z.string(),
  fileName: z.string().regex(/\.gguf$/),
  /** Approximate published size in bytes: shown before a download; the server's length is what is verified. */
  sizeBytes: z.number().int().positive(),
  /** `hf:user/repo/file.gguf`. */
  uri: z.string().startsWith('hf:'),
  contextLength: z.number().int(),
  /** Used in the paper's experiments. */
  paper: z.boolean(),
  note: z.string().default(''),
});
export type CatalogEntry = z.infer<typeof CatalogEntry>;

/** Whether a catalog model fits this machine, estimated before it is downloaded (models/catalog.ts). */
export const CatalogFit = z.object({
  fits: z.boolean(),
  /** gpu: all of it in free VRAM; cpu: in RAM. */
  where: z.enum(['gpu', 'cpu']),
  /** About what loading it needs with a 4,096-token context, and what is free where it would go. */
  needBytes: z.number(),
  freeBytes: z.number(),
});
export type CatalogFit = z.infer<typeof CatalogFit>;

/** A catalog entry as the app lists it: with its fit here, and whether it is the one to offer a newcomer. */
export const CatalogListing = CatalogEntry.extend({ fit: CatalogFit, recommended: z.boolean() });
export type CatalogListing = z.infer<typeof CatalogListing>;

export const DownloadStatus = z.enum(['queued', 'downloading', 'verifying', 'done', 'error', 'cancelled']);
export type DownloadStatus = z.infer<typeof DownloadStatus>;

export const DownloadState = z.object({
  id: z.string(),
  /** What the user asked for: a catalog id, an `hf:` URI or an https URL. */
  source: z.string(),
  /** The https URL actually fetched. */
  url: z.string(),
  /** Final path of the model once finished. */
  dest: z.string(),
  fileName: z.string(),
  status: DownloadStatus,
  bytes: z.number(),
  /** null until the server says. */
  total: z.number().nullable(),
  /** Bytes per second, smoothed. */
  rate: z.number(),
  etaSeconds: z.number().nullable(),
  /** Bytes that were already on disk when this attempt started (resume). */
  resumedFrom: z.number(),
  error: z.string().nullable(),
  startedAt: z.number(),
  finishedAt: z.number().nullable(),
});
export type DownloadState = z.infer<typeof DownloadState>;

// ---------------------------------------------------------------- remote models

/** One endpoint of a remote model as probed now: up, or down with the reason in one line. */
export const EndpointHealth = z.object({
  url: z.string(),
  /** Answers and serves the model. */
  up: z.boolean(),
  /** Answered as an OpenAI-compatible server, whether or not it serves the model (up: false, answers: true: a wrong model id). */
  answers: z.boolean().default(false),
  error: z.string().nullable(),
  probe: ServerProbe.nullable(),
});
export type EndpointHealth = z.infer<typeof EndpointHealth>;

/** A remote library entry (`remote:NAME`) with, when probed, each endpoint's health. No key, ever. */
export const RemoteModelStatus = z.object({
  entry: RemoteModelEntry,
  endpoints: z.array(EndpointHealth).nullable(),
});
export type RemoteModelStatus = z.infer<typeof RemoteModelStatus>;

const remoteTarget = z.object({
  urls: z.array(z.string().min(1)).min(1).max(32),
  model: z.string().min(1),
  /** Environment variable (of the host process) holding the key. */
  keyEnv: z.string().optional(),
  /** A key typed into the app: kept on the host side, never sent back. */
  key: z.string().min(1).optional(),
});

// ---------------------------------------------------------------- methods and events

const pathInput = z.object({ path: z.string().min(1) });

export const modelsMethods = {
  'models.list': method(z.object({}), LibraryListing),
  'models.addFolder': method(pathInput, LibraryListing),
  'models.addFile': method(pathInput, LibraryListing),
  /** Forget a folder or file the user added (the file itself is never deleted). */
  'models.remove': method(pathInput, LibraryListing),
  'models.info': method(pathInput.extend({ fit: FitOptions.optional() }), z.object({ model: ModelEntry, fit: FitEstimate })),
  'models.hardware': method(z.object({}), HardwareInfo),
  'models.fit': method(pathInput.extend({ contextSize: z.number().int().min(64).optional(), sequences: z.number().int().min(1).optional() }), FitEstimate),
  'models.catalog': method(z.object({}), z.array(CatalogListing)),
  /** Starts a download and answers at once; progress arrives as `download.progress`. */
  'models.download': method(z.object({ source: z.string().min(1), dir: z.string().optional() }), DownloadState),
  'models.cancelDownload': method(z.object({ id: z.string() }), DownloadState),
  'models.downloads': method(z.object({}), z.array(DownloadState)),
  /** Removes an ended download (done, failed, cancelled) from the list; a partial file stays for resuming. */
  'models.dismissDownload': method(z.object({ id: z.string() }), z.object({ dismissed: z.boolean() })),
  /** Remote models in the library; `probe` asks every endpoint now (a few seconds at most). */
  'models.remote.list': method(z.object({ probe: z.boolean().default(false) }), z.array(RemoteModelStatus)),
  /** Probes servers before adding: kind, version, models, constrained output, context length. Without a model id, the servers alone. */
  'models.remote.probe': method(remoteTarget.extend({ model: z.string().optional() }), z.array(EndpointHealth)),
  /** Adds (or replaces) `remote:NAME` after probing it; a wrong key, unknown model or non-OpenAI server is refused. */
  'models.remote.add': method(remoteTarget.extend({ name: z.string().min(1), maxInFlight: MaxInFlight.optional() }), RemoteModelStatus),
  'models.remote.remove': method(z.object({ name: z.string().min(1) }), z.object({ ok: z.boolean() })),
};

export const modelsEvents = {
  'download.progress': DownloadState,
};
