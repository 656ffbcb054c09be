// Holding models: the one pool every face, job and experiment leases its models from.
export { ModelPool, type AcquireOptions, type ModelPoolOptions, type RemoteModelsOptions } from './pool';
export { leaseOf, type BackendLease, type BackendProvider } from './lease';
export { classifyWithHeld, withHeldModels, type ClassifyWithHeld, type HeldModels } from './classify';
