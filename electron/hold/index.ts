// Holding models: the one pool every face, job and experiment leases its models from.
export { ModelPool, type AcquireOptions, type ModelPoolOptions, type RemoteModelsOptions } from './pool';
export type { BackendLease, BackendProvider } from './lease';
export { classifyWithHeld, withHeldModels, type ClassifyWithHeld, type HeldModels } from './classify';
