// PLACEHOLDER until the module it wraps lands: every method answers "not_available".
import type { HostDeps } from '../deps';

export function createClassifyHandlers(_deps: HostDeps): { handlers: Record<string, never>; dispose?(): Promise<void> } {
  return { handlers: {} };
}
