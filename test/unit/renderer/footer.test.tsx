// @vitest-environment jsdom
// The footer names the host's thread count in words that agree with the number.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { AppSettings } from '../../../electron/common/contract/settings';
import { createApiClient, setApi, type Transport } from '../../../renderer/src/api/client';
import { App } from '../../../renderer/src/App';
import { useStore } from '../../../renderer/src/store';

afterEach(() => {
  cleanup();
  setApi(null);
});

describe('footer', () => {
  it.each([
    [1, '1 thread'],
    [2, '2 threads'],
  ])('the footer shows %i as "%s"', async (threads, text) => {
    const transport: Transport = {
      kind: 'browser',
      invoke: async (method) =>
        method === 'app.info'
          ? { ok: true, value: { version: '0.1.0', mode: 'browser', dataDir: '/d', threads } }
          : method === 'settings.get'
            ? { ok: true, value: AppSettings.parse({}) }
            : { ok: false, error: { code: 'unknown_method', message: `unknown method "${method}"` } },
      subscribe: () => () => undefined,
      upload: async () => ({ path: '/x', bytes: 0 }),
      downloadUrl: (p) => p,
      onConnection: () => () => undefined,
    };
    setApi(createApiClient(transport));
    useStore.setState({ appInfo: null });
    render(<App />);
    expect(await screen.findByText(new RegExp(`· ${text}$`))).toBeTruthy();
  });
});
