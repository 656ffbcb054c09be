// `tatra api` for the web tests: the real service and engine over one scripted backend (a face's
// exact semantics without a model), serving sst2, with a key made for the test. Real inference and
// the official clients are in test/model/api-*.
import { join } from 'node:path';
import { DEFAULT_SETTINGS } from '../../electron/common/tatra';
import { ApiKeyStore, startApiService, type ApiServiceOptions, type RunningApiService } from '../../electron/service';
import { loadBuiltInTasks } from '../../electron/tasks';
import { ScriptedBackend, politeScript } from './scripted-backend';
import { parseModelSpec } from '../../electron/common/model-spec';

export interface ScriptedApiOptions extends Partial<Pick<ApiServiceOptions, 'maxQueue' | 'concurrency' | 'log' | 'testRoutes'>> {
  /** The evaluator's label for a candidate (default: always positive). */
  answer?: (candidate: string) => string;
  contextSize?: number;
}

/** Starts the service on port 0 with its key file under `dataDir`; n=1, k=2, r=1 by default. */
export async function startScriptedApi(dataDir: string, opts: ScriptedApiOptions = {}): Promise<{ api: RunningApiService; key: string }> {
  const keys = new ApiKeyStore(join(dataDir));
  const key = await keys.add('tests');
  const backend = new ScriptedBackend(politeScript({ answer: opts.answer ?? (() => 'positive') }), { id: 'scripted:model', contextSize: opts.contextSize ?? 8192 });
  const api = await startApiService({
    tasks: (await loadBuiltInTasks()).filter((t) => t.id === 'sst2'),
    pairings: [{ name: 'scripted', generator: parseModelSpec('s.gguf'), evaluator: parseModelSpec('s.gguf'), generatorBackend: backend, evaluatorBackend: backend }],
    keys,
    defaults: { ...DEFAULT_SETTINGS, n: 1, k: 2, r: 1 },
    port: 0,
    maxQueue: opts.maxQueue ?? 4,
    concurrency: opts.concurrency ?? 1,
    timeoutMs: 60_000,
    log: opts.log ?? (() => undefined),
    ...(opts.testRoutes ? { testRoutes: opts.testRoutes } : {}),
  });
  return { api, key };
}
