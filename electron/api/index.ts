// The API host: the one implementation of the contract, used by Electron main (IPC) and by
// `tatra serve` (HTTP + WebSocket); and the composition root every face opens its services with.
export { createApiHost, type ApiHost, type ApiHostOptions, type InvokeResult, type HostListener, HOST_ERROR_CODES, toApiError } from './host';
export type { HostDeps, DomainHandlers, HandlerGroup } from './deps';
export { openServices, MODEL_KEEP_ALIVE_MS, type Services, type ServicesOptions } from './services';
