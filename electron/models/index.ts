// The model library, hardware fit, verified downloads and generator × evaluator pairing
// comparisons. Plain Node (no Electron): the API host, `tatra serve` and the CLI all import this.
// Shapes are the zod schemas of common/contract/models.ts.
export type {
  ModelEntry,
  InvalidModel,
  LibraryListing,
  HardwareInfo,
  FitEstimate,
  FitOptions,
  CatalogEntry,
  DownloadState,
  PartialDownload,
} from '../common/contract/models';

export { scanLibrary, ModelLibrary, type ScanResult, type ModelLibraryOptions } from './library';
export { inspectModelFile, validateModelFile, invalidReason, invalidCode, type ModelHeader } from './gguf';
export { hardwareInfo, gpuFacts, estimateFit, describeOffload, type EstimateFitOptions } from './hardware';
export { loadCatalog, findCatalogEntry, catalogPath, catalogFit, freeMemory, recommendCatalog, type FreeMemory } from './catalog';
export { resolveModelUri, resolveHfUri, type ResolvedSource, type ResolveOptions } from './resolve';
export { downloadModel, partialPaths, type DownloadOptions } from './download';
export { DownloadManager, type DownloadManagerOptions, type DownloadEvents } from './download-manager';
