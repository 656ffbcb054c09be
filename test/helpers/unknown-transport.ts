// A renderer transport on which every API call fails as unknown: views render their empty forms,
// for tests that read only those.
import type { Transport } from '../../renderer/src/api/client';

export const unknownMethodTransport: Transport = {
  kind: 'browser',
  invoke: async (method) => ({ ok: false, error: { code: 'unknown_method', message: `unknown method "${method}"` } }),
  subscribe: () => () => undefined,
  upload: async () => ({ path: '/x', bytes: 0 }),
  downloadUrl: (p) => p,
  onConnection: () => () => undefined,
};
