// A re-run with the same generator and another evaluator reuses the generator's cached outputs
// (SQLite cache in the data folder): no generator calls the second time, byte-identical
// examples and paraphrases. Real inference on the two tiny synthetic models.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { GenerateRequest, TatraBackend } from '../../electron/engine';
import { JobManager, openJobStore, type BackendProvider } from '../../electron/jobs';
import { ModelPool } from '../../electron/hold';
import { disposeLlamaRuntime } from '../../electron/llama';
import { tinyModelBPath, tinyModelPath } from '../helpers/models';

const dir = mkdtempSync(join(tmpdir(), 'tatra-cache-'));
afterAll(async () => {
  await disposeLlamaRuntime();
  rmSync(dir, { recursive: true, force: true });
});

/** Counts sampled (generator) and greedy (evaluator) requests per model path. */
function countingProvider(pool: ModelPool) {
  const sampled = new Map<string, number>();
  const greedy = new Map<string, number>();
  const provider: BackendProvider = {
    async acquire(model) {
      const path = model.text;
      const lease = await pool.acquire(model);
      const inner = lease.backend;
      const backend: TatraBackend = {
        id: inner.id,
        contextSize: inner.contextSize,
        generate: (requests: readonly GenerateRequest[]) => {
          for (const r of requests) {
            const m = (r.temperature ?? 0) > 0 ? sampled : greedy;
            m.set(path, (m.get(path) ?? 0) + 1);
          }
          return inner.generate(requests);
        },
        countPromptTokens: (p) => inner.countPromptTokens(p),
      };
      return { backend, release: () => lease.release() };
    },
  };
  return { provider, sampled, greedy };
}

it('a second job with the same generator and another evaluator makes no generator calls', async () => {
  const [a, b] = await Promise.all([tinyModelPath(), tinyModelBPath()]);
  const data = join(dir, 'six.csv');
  writeFileSync(data, 'text,label\n' + ['a fine film', 'a dull film', 'great fun', 'too long', 'loved it', 'hated it'].map((t, i) => `${t},${i % 2}`).join('\n') + '\n');
  const store = openJobStore(join(dir, 'data'));
  const pool = new ModelPool({ defaults: { threads: 1, sequences: 2 } });
  try {
    const { provider, sampled, greedy } = countingProvider(pool);
    const manager = new JobManager({ store, backends: provider });
    const spec = (evaluatorPath: string) => ({
      task: 'sst2',
      settings: { n: 2, k: 4, r: 2, seed: 3, scope: 'run' as const },
      generatorPath: a,
      evaluatorPath,
      dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } },
      concurrency: 2,
    });
    const j1 = await manager.create(spec(a));
    await manager.start(j1.id);
    expect((await manager.wait(j1.id)).status).toBe('done');
    const firstSampled = sampled.get(a) ?? 0;
    // 2 runs x 2 labels example calls + 6 rows x 2 runs paraphrase calls.
    expect(firstSampled).toBe(2 * 2 + 6 * 2);

    const j2 = await manager.create(spec(b));
    await manager.start(j2.id);
    expect((await manager.wait(j2.id)).status).toBe('done');
    expect(sampled.get(a)).toBe(firstSampled); // nothing generated the second time
    expect(sampled.get(b) ?? 0).toBe(0);
    expect(greedy.get(b)).toBe(6 * 2 * 3); // the new evaluator did classify every variant

    const para = (id: string) => manager.rows(id, { limit: 10 }).rows.map((r) => r.runs!.map((run) => run.paraphrases));
    expect(para(j2.id)).toEqual(para(j1.id));
    const ex = (id: string) => manager.runExamples(id).map((e) => e.examples);
    expect(ex(j2.id)).toEqual(ex(j1.id));
    expect(pool.loaded()).toEqual([]);
  } finally {
    await pool.dispose();
    store.close();
  }
});
