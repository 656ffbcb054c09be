// The layer order (eslint.config.js LAYERS) holds at every depth: each forbidden import below is
// linted as if it were written in that file, and must be reported by `boundaries/dependencies`;
// the allowed ones must not. Paths one, two and three folders deep, so a rule that only matches
// '../x/*' (as the old no-restricted-imports patterns did) fails here.
import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../../../eslint.config.js';
import { layerEdges } from '../../helpers/layer-edges';

const root = resolve(import.meta.dirname, '../../..');
const eslint = new ESLint({ cwd: root });

/** The rules that reported an import problem in `code` written as `file`. */
async function importRules(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(root, file) });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === null || m.ruleId === 'boundaries/dependencies' || m.ruleId === 'no-restricted-imports')
    .map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

const forbidden: [file: string, code: string][] = [
  ['electron/common/contract/x.ts', "import { LlamaBackend } from '../../llama/backend';\nexport const x = LlamaBackend;"],
  ['electron/common/x.ts', "import { classify } from '../engine';\nexport const x = classify;"],
  ['electron/engine/x.ts', "import { openJobStore } from '../jobs/store';\nexport const x = openJobStore;"],
  ['electron/engine/x.ts', "import { loadBuiltInTasks } from '../tasks';\nexport const x = loadBuiltInTasks;"],
  ['electron/jobs/x.ts', "import { createApiHost } from '../api/host';\nexport const x = createApiHost;"],
  ['electron/jobs/x.ts', "import { startServer } from '../server';\nexport const x = startServer;"],
  ['electron/api/handlers/x.ts', "import { startServer } from '../../server/server';\nexport const x = startServer;"],
  ['electron/llama/x.ts', "import { JobManager } from '../jobs/manager';\nexport const x = JobManager;"],
  ['electron/models/x.ts', "import { createApiHost } from '../api';\nexport const x = createApiHost;"],
  // Experiments are built of jobs and the model library, never the other way round.
  ['electron/jobs/x.ts', "import { Experiments } from '../experiments';\nexport const x = Experiments;"],
  ['electron/models/x.ts', "import { comparisonKind } from '../experiments/compare';\nexport const x = comparisonKind;"],
  ['electron/experiments/x.ts', "import { createApiHost } from '../api/host';\nexport const x = createApiHost;"],
  ['electron/server/x.ts', "import { registerServe } from '../cli/commands/serve';\nexport const x = registerServe;"],
  ['electron/preload.ts', "import { createApiHost } from './api/host';\nexport const x = createApiHost;"],
  ['electron/paths.ts', "import { UserError } from './common/errors';\nexport const x = UserError;"],
  ['renderer/src/components/x.ts', "import { classify } from '../../../electron/engine/classify';\nexport const x = classify;"],
  ['renderer/src/x.ts', "import { appRoot } from '../../electron/paths';\nexport const x = appRoot;"],
  // The service face gets its models from the CLI: it never loads one itself, nor reaches into jobs.
  ['electron/service/x.ts', "import { ModelPool } from '../hold/pool';\nexport const x = ModelPool;"],
  // llama/ and remote/ are two backends side by side; what chooses between them (hold/) is above both.
  ['electron/llama/x.ts', "import { connectRemote } from '../remote';\nexport const x = connectRemote;"],
  ['electron/llama/deep/x.ts', "import { RemoteBackend } from '../../remote/backend';\nexport const x = RemoteBackend;"],
  ['electron/remote/x.ts', "import { loadLlamaBackend } from '../llama/backend';\nexport const x = loadLlamaBackend;"],
  ['electron/llama/x.ts', "import { ModelPool } from '../hold';\nexport const x = ModelPool;"],
  ['electron/service/x.ts', "import { openJobStore } from '../jobs';\nexport const x = openJobStore;"],
  // Small state files are a leaf: the store knows files and schemas, nothing that uses it.
  ['electron/state/x.ts', "import { ModelLibrary } from '../models/library';\nexport const x = ModelLibrary;"],
  ['electron/engine/x.ts', "import { JsonFile } from '../state/json-file';\nexport const x = JsonFile;"],
  // The engine is pure: no file system.
  ['electron/engine/x.ts', "import { readFile } from 'node:fs/promises';\nexport const x = readFile;"],
];

const allowed: [file: string, code: string][] = [
  ['electron/common/contract/x.ts', "import { TatraSettings } from '../tatra';\nexport const x = TatraSettings;"],
  ['electron/engine/x.ts', "import { UserError } from '../common/errors';\nexport const x = UserError;"],
  ['electron/jobs/x.ts', "import { classify } from '../engine';\nimport { resolveTask } from '../tasks';\nexport const x = [classify, resolveTask];"],
  ['electron/api/handlers/x.ts', "import { JobManager } from '../../jobs/manager';\nimport { resolveDataDir } from '../../paths';\nexport const x = [JobManager, resolveDataDir];"],
  ['electron/cli/commands/x.ts', "import { startServer } from '../../server';\nexport const x = startServer;"],
  ['electron/experiments/x.ts', "import { JobManager } from '../jobs/manager';\nimport { inspectModelFile } from '../models/gguf';\nexport const x = [JobManager, inspectModelFile];"],
  ['electron/cli/commands/x.ts', "import { startApiService } from '../../service';\nexport const x = startApiService;"],
  ['electron/service/x.ts', "import { classify } from '../engine';\nimport { SECURITY_HEADERS } from '../web/headers';\nexport const x = [classify, SECURITY_HEADERS];"],
  ['electron/hold/x.ts', "import { connectRemote } from '../remote';\nimport { loadLlamaBackend } from '../llama/backend';\nexport const x = [connectRemote, loadLlamaBackend];"],
  ['electron/jobs/x.ts', "import { ModelPool } from '../hold';\nexport const x = ModelPool;"],
  ['electron/llama/x.ts', "import { JsonFile } from '../state/json-file';\nimport { userCacheDir } from '../paths';\nexport const x = [JsonFile, userCacheDir];"],
  ['renderer/src/views/x.ts', "import { INT_SETTINGS } from '../../../electron/common/settings';\nexport const x = INT_SETTINGS;"],
];

describe('layer rules at every depth', () => {
  it.each(forbidden)('%s: forbidden import is reported', async (file, code) => {
    const rule = code.includes("from 'node:") ? 'no-restricted-imports' : 'boundaries/dependencies';
    expect(await importRules(file, code)).toContain(rule);
  });
  it.each(allowed)('%s: allowed import passes', async (file, code) => {
    expect(await importRules(file, code)).toEqual([]);
  });
});

describe('LAYERS is tight', () => {
  const layers = LAYERS;
  const order = Object.keys(layers);

  it('grants no edge that no import uses (an edge nothing needs is one a later import could take unseen)', () => {
    const used = layerEdges();
    const granted = Object.entries(layers).flatMap(([from, tos]) => tos.filter((to) => to !== from).map((to) => `${from} -> ${to}`));
    expect(granted.filter((edge) => !used.has(edge))).toEqual([]);
  });

  it('points down only: each layer is granted leaves (paths) and layers listed before it', () => {
    const up = Object.entries(layers).flatMap(([from, tos]) => tos.filter((to) => to !== from && to !== 'paths' && order.indexOf(to) > order.indexOf(from)).map((to) => `${from} -> ${to}`));
    expect(up).toEqual([]);
  });
});

describe('one HTTP client', () => {
  const rulesOf = async (file: string, code: string) => {
    const [result] = await eslint.lintText(code, { filePath: resolve(root, file) });
    return (result?.messages ?? []).map((m) => m.ruleId);
  };
  it.each([
    ['electron/models/x.ts', 'export const x = fetch;', 'no-restricted-globals'],
    ['electron/remote/x.ts', "import { request } from 'node:http';\nexport const x = request;", 'no-restricted-syntax'],
    ['electron/jobs/x.ts', "import { get } from 'node:https';\nexport const x = get;", 'no-restricted-syntax'],
  ])('%s: a request outside electron/net is reported', async (file, code, rule) => {
    expect(await rulesOf(file, code)).toContain(rule);
  });
  it('electron/net may use fetch, and the server may create one', async () => {
    expect(await rulesOf('electron/net/x.ts', 'export const x = fetch;')).toEqual([]);
    expect(await rulesOf('electron/server/x.ts', "import { createServer } from 'node:http';\nexport const x = createServer;")).toEqual([]);
  });
});
