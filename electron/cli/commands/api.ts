// `tatra api`: a long-running OpenAI-compatible service (electron/service/) that keeps its models
// loaded; `tatra api keys add|list|revoke` manages who may call it. Thin: options are checked,
// the models loaded and held, and the service started.
import { type Command } from 'commander';
import { UserError } from '../../common/errors';
import type { ModelSpec } from '../../common/model-spec';
import { withEarlyStop } from '../../common/settings';
import { TatraSettings } from '../../common/tatra';
import type { TaskDefinition } from '../../common/task';
import { MODEL_KEEP_ALIVE_MS } from '../../api/services';
import { withHeldModels, type BackendProvider } from '../../hold';
import { resolveDataDir } from '../../paths';
import { PAIRING_NAME, pairingName, type LoadedPairing, type Pairing } from '../../service/catalog';
import { ApiKeyStore } from '../../service/keys';
import {
  type ModelCliOptions,
  type TatraSettingsCliOptions,
  addEarlyStopOptions,
  addModelOptions,
  addRuntimeOptions,
  addTatraSettingsOptions,
  intOption,
  modelArgument,
  tatraSettingsFrom,
} from '../options';
import { openCliServices, startLlamaFor, type CliServiceOptions, type CliServices } from '../session';
import { err, onInterrupt, out, outFields, plural } from '../ui';

interface ApiCliOptions extends TatraSettingsCliOptions, ModelCliOptions {
  port: number;
  host: string;
  dataDir?: string;
  pairing: string[];
  task: string[];
  threads?: number;
  contextSize?: number;
  sequences?: number;
  earlyStop?: boolean;
  maxQueue: number;
  concurrency: number;
  timeout: number;
  shutdownGrace: number;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** --pairing NAME=GENERATOR[,EVALUATOR] */
function parsePairing(value: string): Pairing {
  const eq = value.indexOf('=');
  const name = eq > 0 ? value.slice(0, eq) : '';
  const models = eq > 0 ? value.slice(eq + 1).split(',') : [];
  if (!PAIRING_NAME.test(name) || models.length < 1 || models.length > 2 || models.some((m) => m.trim() === '')) {
    throw new UserError(`--pairing must look like NAME=MODEL or NAME=GENERATOR,EVALUATOR (NAME: letters, digits, . _ -), got "${value}"`, 'bad_option');
  }
  const [generator, evaluator = generator] = models.map(modelArgument) as [ModelSpec, ModelSpec?];
  return { name, generator, evaluator };
}

function pairingsFrom(o: ApiCliOptions): Pairing[] {
  const pairings: Pairing[] = [];
  const generator = o.generator ?? o.model;
  const evaluator = o.evaluator ?? o.model;
  if (generator || evaluator) {
    if (!generator || !evaluator) throw new UserError('give --model, or both --generator and --evaluator', 'model_missing');
    const models = { generator: modelArgument(generator), evaluator: modelArgument(evaluator) };
    pairings.push({ name: pairingName(models.generator, models.evaluator), ...models });
  }
  pairings.push(...o.pairing.map(parsePairing));
  if (pairings.length === 0) {
    throw new UserError('no model: give --model <model> (or --generator and --evaluator), or --pairing NAME=MODEL (a GGUF file, remote:NAME or openai+http://HOST:PORT/v1#MODEL)', 'model_missing');
  }
  const seen = new Set<string>();
  for (const p of pairings) {
    if (seen.has(p.name)) throw new UserError(`two pairings are named "${p.name}"; name them with --pairing NAME=…`, 'bad_option');
    seen.add(p.name);
  }
  return pairings;
}

/** Every task of the data folder, or those --task names (an id, or a task file the operator names). */
async function servedTasks(services: CliServices, wanted: string[]): Promise<TaskDefinition[]> {
  if (wanted.length === 0) return (await services.tasks.list()).map((e) => e.task);
  return Promise.all(wanted.map((ref) => services.tasks.resolve(ref)));
}

function registerKeys(api: Command): void {
  const keys = api
    .command('keys')
    .description('API keys: who may call `tatra api`, stored hashed in the data folder (--data-dir or $TATRA_DATA_DIR)');
  // `tatra api keys add NAME --data-dir D` and `tatra api --data-dir D keys add NAME` alike: commander
  // gives --data-dir to `api` wherever it stands, so the key commands read it from there.
  const store = (cmd: Command) => new ApiKeyStore(resolveDataDir(cmd.optsWithGlobals<{ dataDir?: string }>().dataDir));
  keys
    .command('add')
    .description('create a key and print it once on stdout (only its hash is kept)')
    .argument('<name>', 'a name to list and revoke it by')
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const key = await store(cmd).add(name);
      out(key);
      if (process.stdout.isTTY) err(`key "${name}" created; it is shown only now: keep it somewhere safe`);
    });
  keys
    .command('list')
    .description('list the keys by name (the keys themselves are never stored)')
    .action((_o: unknown, cmd: Command) => {
      const list = store(cmd).list();
      if (list.length === 0) err('no API keys; create one with `tatra api keys add NAME`');
      for (const k of list) outFields([k.name, k.createdAt]);
    });
  keys
    .command('revoke')
    .description('revoke a key; a running `tatra api` refuses it from its next request')
    .argument('<name>')
    .action(async (name: string, _o: unknown, cmd: Command) => {
      await store(cmd).revoke(name);
      err(`revoked "${name}"`);
    });
}

/**
 * `tatra api`'s services: a long-lived face, so a model its pool releases stays loaded for a while
 * as in the app (a command's are unloaded at once), besides the pairings held while it runs.
 */
export function openApiServices(o: CliServiceOptions): CliServices {
  return openCliServices({ ...o, keepAliveMs: MODEL_KEEP_ALIVE_MS });
}

/** Runs `work` with every pairing's models held (hold/classify.ts), the first pairing's first. */
function holdPairings<T>(pool: BackendProvider, pairings: readonly Pairing[], work: (loaded: LoadedPairing[]) => Promise<T>, loaded: LoadedPairing[] = []): Promise<T> {
  const next = pairings[loaded.length];
  if (!next) return work(loaded);
  return withHeldModels(pool, next, (generatorBackend, evaluatorBackend) => holdPairings(pool, pairings, work, [...loaded, { ...next, generatorBackend, evaluatorBackend }]));
}

/** Serves until SIGTERM or Ctrl+C, then lets running requests finish within the grace period. */
async function serve(o: ApiCliOptions, what: { tasks: TaskDefinition[]; pairings: LoadedPairing[]; keys: ApiKeyStore; defaults: TatraSettings; dataDir: string }): Promise<void> {
  const { tasks, pairings, keys } = what;
  let service;
  try {
    service = await (await import('../../service/server')).startApiService({
      tasks,
      pairings,
      keys,
      defaults: what.defaults,
      port: o.port,
      hostname: o.host,
      maxQueue: o.maxQueue,
      concurrency: o.concurrency,
      timeoutMs: o.timeout * 1000,
      log: err,
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UserError(`port ${o.port} is in use; pick another with --port (0 picks a free one)`, 'port_in_use');
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new UserError(`cannot listen on ${o.host}: no such interface`, 'bad_option');
    if (code === 'EACCES') throw new UserError(`not allowed to listen on port ${o.port}`, 'bad_option');
    throw e;
  }
  out(`listening on ${service.origin}`);
  err(`tatra api: ${plural(tasks.length, 'task')} as tatra/<task> on ${pairings.map((p) => p.name).join(', ')}; data folder ${what.dataDir}; Ctrl+C stops`);
  if (!keys.hasKeys()) err('tatra api: there are no API keys yet, so every /v1 request is refused: create one with `tatra api keys add NAME`');
  const running = service;
  await new Promise<void>((stopped, failed) => {
    onInterrupt((signal) => {
      err(`tatra api: ${signal}, finishing running requests (up to ${o.shutdownGrace} s)`);
      running.close(o.shutdownGrace * 1000).then(stopped, failed);
    }, ['SIGTERM']);
  });
}

export function registerApi(program: Command): void {
  const cmd = program
    .command('api')
    .description('serve TATRA to other tools: an OpenAI-compatible API (chat completions, models, batch classify) that keeps its models loaded')
    .option('--port <port>', 'port to listen on; 0 picks a free one', intOption('--port', 0, 65535), 5179)
    .option('--host <host>', 'interface to listen on (anything but loopback is reachable from the network)', '127.0.0.1')
    .option('--data-dir <dir>', 'data folder (API keys, your tasks); default $TATRA_DATA_DIR or ~/.tatra-studio')
    .option('--pairing <name=generator[,evaluator]>', 'a further model pairing, served as tatra/<task>@NAME (repeatable)', collect, [])
    .option('--task <id|file>', 'serve only this task: an id or a task JSON file (repeatable; default every task of the data folder)', collect, []);
  addEarlyStopOptions(addRuntimeOptions(addTatraSettingsOptions(addModelOptions(cmd))), 'input')
    .option('--sequences <N>', 'parallel sequences per model (default 4)', intOption('--sequences', 1, 64))
    .option('--max-queue <N>', 'requests taken on at once, running or waiting; one more is answered 429 with Retry-After', intOption('--max-queue', 1, 100_000), 64)
    .option('--concurrency <N>', 'inputs classified at once', intOption('--concurrency', 1, 256), 4)
    .option('--timeout <seconds>', 'longest one classification may take, its wait in the queue included (504 after)', intOption('--timeout', 1, 86_400), 600)
    .option('--shutdown-grace <seconds>', 'on SIGTERM or Ctrl+C, how long running requests may finish before they are cancelled', intOption('--shutdown-grace', 0, 3600), 10)
    .action(async (o: ApiCliOptions) => {
      const pairings = pairingsFrom(o);
      const defaults = TatraSettings.parse(withEarlyStop({ ...tatraSettingsFrom(o), ...(o.earlyStop !== undefined ? { earlyStop: o.earlyStop } : {}) }, 'input'));
      const services = openApiServices(o);
      try {
        const keys = new ApiKeyStore(services.dataDir);
        keys.hasKeys(); // a damaged key file stops the start, not the first request
        const tasks = await servedTasks(services, o.task);
        await startLlamaFor(pairings.flatMap((p) => [p.generator, p.evaluator]));
        // Loaded now and held while the service runs: no request waits for a load.
        await holdPairings(services.pool, pairings, (loaded) => serve(o, { tasks, pairings: loaded, keys, defaults, dataDir: services.dataDir }));
      } finally {
        await services.close();
      }
      // The models and node-llama-cpp are disposed by now; leave no native handle keeping us up.
      process.exit(0);
    });
  registerKeys(cmd);
}
