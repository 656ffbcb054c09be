// @vitest-environment jsdom
// The Models view and the model pickers on a GPU this machine lacks: the real API host (its fit
// check and hardware facts, the plan the load uses) with stand-in GPU facts, rendered. The
// Hardware card names the backend, the card and its free VRAM; a model that does not all fit the
// card shows "N/M on GPU" and says in words that the rest runs on the CPU, in the library and
// under the Classify and Evaluate pickers once it is chosen.
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReactElement } from 'react';
import { act, cleanup, render, screen, within } from '@testing-library/react';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import { disposeLlamaRuntime } from '../../../electron/llama';
import { createApiClient, getApi, setApi, type Transport } from '../../../renderer/src/api/client';
import { useStore } from '../../../renderer/src/store';
import { ClassifyView } from '../../../renderer/src/views/ClassifyView';
import { EvaluateView } from '../../../renderer/src/views/EvaluateView';
import { ModelsView } from '../../../renderer/src/views/ModelsView';
import { tinyModelPath } from '../../helpers/models';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
let dir: string;
let host: ApiHost;
const saved = { standIn: process.env.TATRA_GPU_STANDIN, models: process.env.TATRA_MODELS_DIR };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-models-gpu-'));
  await mkdir(join(dir, 'models'));
  await copyFile(await tinyModelPath(), join(dir, 'models', 'tiny.gguf'));
  process.env.TATRA_MODELS_DIR = join(dir, 'models');
});
afterEach(async () => {
  cleanup();
  setApi(null);
  await host?.dispose();
  for (const [k, v] of [['TATRA_GPU_STANDIN', saved.standIn], ['TATRA_MODELS_DIR', saved.models]] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await rm(dir, { recursive: true, force: true });
});

// One Llama for the file (the fit checks read the stand-in GPU facts on every call, never the
// Llama's), loaded by the first test rather than by each.
afterAll(() => disposeLlamaRuntime());

async function renderWith(standIn: object, view: ReactElement = <ModelsView />): Promise<void> {
  process.env.TATRA_GPU_STANDIN = JSON.stringify(standIn);
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test', log: () => undefined });
  const transport: Transport = {
    kind: 'browser',
    invoke: (method, input) => host.invoke(method, input),
    subscribe: (l) => host.subscribe(l),
    upload: async () => ({ path: '/x', bytes: 0 }),
    downloadUrl: (p) => p,
    onConnection: (l) => {
      l(true);
      return () => undefined;
    },
  };
  setApi(createApiClient(transport));
  useStore.setState({ hardware: null, library: null, fits: {}, settings: null });
  render(view);
}

describe('the Models view on stand-in GPUs', () => {
  it('a card with room for one layer of three: backend, card, free VRAM, and the offload in words', { timeout: 120_000 }, async () => {
    await renderWith({ backend: 'cuda', cards: [{ name: 'NVIDIA GeForce GT 1030', vramTotal: 2 * GiB, vramFree: 32 * MiB }] });
    const backend = await screen.findByTestId('gpu-backend');
    expect(await within(backend).findByText('CUDA')).toBeTruthy();
    expect(backend.textContent).toContain('stand-in, not this machine');
    const cards = screen.getByTestId('gpu-cards');
    expect(within(cards).getByTestId('gpu-card').textContent).toBe('NVIDIA GeForce GT 1030 · 32.0 MiB of 2.0 GiB');
    expect(cards.textContent).toContain('VRAM free');
    const badge = await screen.findByText(/^fits · 1\/3 on GPU · /, {}, { timeout: 60_000 });
    expect(badge.getAttribute('data-plan')).toBe('partial');
    expect(screen.getByTestId('fit-offload').textContent).toBe(
      '1 of 3 layers on the GPU, NVIDIA GeForce GT 1030 (CUDA); the other 2 on the CPU: the whole model does not fit in 32.0 MiB free VRAM, so it runs slower, but it runs',
    );
  });

  it('a Metal Mac: all on the GPU, memory shared, no offload warning', { timeout: 120_000 }, async () => {
    await renderWith({ backend: 'metal', unifiedMemory: true, cards: [{ name: 'Apple M2 Max', vramTotal: 32 * GiB, vramFree: 24 * GiB }] });
    const backend = await screen.findByTestId('gpu-backend');
    expect(await within(backend).findByText('Metal')).toBeTruthy();
    expect(screen.getByTestId('gpu-cards').textContent).toContain('memory free');
    expect(within(screen.getByTestId('gpu-cards')).getByTestId('gpu-card').textContent).toBe('Apple M2 Max · 24.0 GiB of 32.0 GiB');
    const badge = await screen.findByText(/^fits · GPU · /, {}, { timeout: 60_000 });
    expect(badge.getAttribute('data-plan')).toBe('gpu');
    expect(badge.getAttribute('title')).toContain('all 3 layers on the GPU: Apple M2 Max (Metal)');
    expect(screen.queryByTestId('fit-offload')).toBeNull();
  });

  it('two cards and the CPU', { timeout: 120_000 }, async () => {
    await renderWith({ backend: 'vulkan', cards: [{ name: 'AMD Radeon RX 6600', vramTotal: 8 * GiB, vramFree: 6 * GiB }, { name: 'AMD Radeon RX 580', vramTotal: 8 * GiB, vramFree: 7 * GiB }] });
    const cards = await screen.findByTestId('gpu-cards');
    expect(await within(screen.getByTestId('gpu-backend')).findByText('Vulkan')).toBeTruthy();
    expect(within(cards).getAllByTestId('gpu-card').map((c) => c.textContent)).toEqual(['AMD Radeon RX 6600 · 6.0 GiB of 8.0 GiB', 'AMD Radeon RX 580 · 7.0 GiB of 8.0 GiB']);
    expect(cards.textContent).toContain('2 cards · VRAM free13.0 GiB');
    expect(cards.textContent).toContain('of 16.0 GiB in all');
    cleanup();
    await host.dispose();
    await renderWith({ backend: 'cpu' });
    expect(await within(await screen.findByTestId('gpu-backend')).findByText('none (CPU)')).toBeTruthy();
    const badge = await screen.findByText(/^fits · CPU · /, {}, { timeout: 60_000 });
    expect(badge.getAttribute('title')).toMatch(/all 3 layers on the CPU: no GPU backend here/);
  });
});

describe.each([
  ['Classify', () => <ClassifyView />, 'classify-generator'],
  ['Evaluate', () => <EvaluateView />, 'eval-generator'],
])('the %s view\'s model pickers on a stand-in GPU', (name, view, generatorId) => {
  it('the chosen model\'s fit badge and its offload in words under the picker, the details in the badge\'s tooltip', { timeout: 120_000 }, async () => {
    await renderWith({ backend: 'cuda', cards: [{ name: 'NVIDIA GeForce GT 1030', vramTotal: 2 * GiB, vramFree: 32 * MiB }] }, view());
    // The saved settings choose the model (as the app's would); the picker finds it in the library.
    const model = join(dir, 'models', 'tiny.gguf');
    const settings = await getApi().call('settings.get', {});
    act(() => useStore.setState({ settings: { ...settings, generator: model, evaluator: model } }));
    const picker = screen.getByTestId(`${generatorId}-picker`);
    const hint = picker.querySelector('.field-hint') as HTMLElement;
    const badge = await within(hint).findByText(/^fits · 1\/3 on GPU · /, {}, { timeout: 60_000 });
    expect(badge.getAttribute('data-plan')).toBe('partial');
    const offload = '1 of 3 layers on the GPU, NVIDIA GeForce GT 1030 (CUDA); the other 2 on the CPU: the whole model does not fit in 32.0 MiB free VRAM, so it runs slower, but it runs';
    expect(within(hint).getByTestId('fit-offload').textContent).toBe(offload);
    expect(badge.getAttribute('title')).toMatch(/^[\d.]+ [KMG]iB needed \(/);
    expect(badge.getAttribute('title')).toContain(offload);
    // The model's facts come first on the line, as before.
    expect(hint.textContent).toMatch(/^qwen2 · /);
    // Both pickers (Generator and Evaluator) say it for the model each has.
    expect(screen.getAllByTestId('fit-offload').map((e) => e.textContent)).toEqual(name === 'Classify' ? [offload] : [offload, offload]);
  });
});
