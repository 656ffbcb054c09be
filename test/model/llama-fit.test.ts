// The fit estimate is the load: estimateFit asks node-llama-cpp's configuration resolver the
// question the real load asks (same gpuLayers option), so the badge and the load pick the same
// GPU layer count. Checked by watching the resolver while a real model loads and while the same
// model is estimated, and on the 7B-shaped header against the load's own resolver call.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { GgufInsights, GgufInsightsConfigurationResolver, readGgufFileInfo } from 'node-llama-cpp';
import { loadLlamaBackend } from '../../electron/llama/load-backend';
import { loadGpuLayers } from '../../electron/llama/fit';
import { disposeLlamaRuntime, getLlamaRuntime } from '../../electron/llama/runtime';
import { estimateFit } from '../../electron/models/hardware';
import { ensureSyntheticModel } from '../../tools/synthetic-gguf';
import { tinyModelPath } from '../helpers/models';

afterAll(() => disposeLlamaRuntime());

describe('fit estimate = the load', () => {
  it('a real load and the estimate ask the resolver the same question and get the same layer count', async () => {
    const tiny = await tinyModelPath();
    const spy = vi.spyOn(GgufInsightsConfigurationResolver.prototype, 'resolveModelGpuLayersV2');
    try {
      const backend = await loadLlamaBackend({ modelPath: tiny, threads: 1, sequences: 2, contextSize: 512 });
      // The layers the loaded model really offloaded (0 on a CPU-only machine).
      const offloaded = backend.model.gpuLayers;
      await backend.dispose();
      expect(spy).toHaveBeenCalledTimes(1);
      const fit = await estimateFit(tiny, { contextSize: 512, sequences: 2 });
      // Its first call is the layer choice; scoring the plan may call it again with the layers fixed.
      expect(spy.mock.calls.length).toBeGreaterThanOrEqual(2);
      const [load, estimate] = spy.mock.calls;
      expect(estimate![0]).toEqual(load![0]);
      expect(load![0]).toEqual(loadGpuLayers(512, 2));
      const [loaded, estimated] = await Promise.all(spy.mock.results.slice(0, 2).map((r) => r.value as Promise<{ gpuLayers: number }>));
      expect(estimated!.gpuLayers).toBe(loaded!.gpuLayers);
      expect(fit.gpuLayers).toBe(loaded!.gpuLayers);
      expect(fit.gpuLayers).toBe(offloaded);
      expect(fit.fits).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('on the 7B-shaped header, the badge picks the layer count the load would', async () => {
    const p7 = await ensureSyntheticModel('qwen2.5-7b', { headerOnly: true });
    const llama = await getLlamaRuntime();
    const insights = await GgufInsights.from(await readGgufFileInfo(p7, { logWarnings: false }), llama);
    // What LlamaModel's load resolves for this model, context and sequence count on this machine.
    const { gpuLayers } = await insights.configurationResolver.resolveModelGpuLayersV2(loadGpuLayers(4096, 4));
    const fit = await estimateFit(p7, { contextSize: 4096, sequences: 4 });
    expect(fit.gpuLayers).toBe(gpuLayers);
    expect(fit.totalLayers).toBe(29);
    expect(fit.plan).toBe(gpuLayers === 0 ? 'cpu' : gpuLayers >= 29 ? 'gpu' : 'partial');
  });
});
