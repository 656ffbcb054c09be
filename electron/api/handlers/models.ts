// PLACEHOLDER written by the app helper so the host compiles; the models helper replaces this
// file with `createModelsHandlers(deps: HostDeps)` returning `HandlerGroup<typeof modelsMethods>`.
import type { HostDeps } from '../deps';

export function createModelsHandlers(_deps: HostDeps): { handlers: Record<string, never>; dispose?(): Promise<void> } {
  return { handlers: {} };
}
