// API handlers for the model library, hardware and fit, the catalog, downloads and pairing
// comparisons. Thin: electron/models does the work; this wires it to the data folder's services
// (its one library, model pool and job manager) and the host's event bus.
import { resolve } from 'node:path';
import type { ComparisonRecord, modelsMethods } from '../../common/contract/models';
import { UserError, errorMessage } from '../../common/errors';
import {
  type ComparisonStore,
  DownloadManager,
  checkComparisonInputs,
  estimateFit,
  executeComparison,
  hardwareInfo,
  inspectModelFile,
  loadCatalog,
  newComparisonRecord,
} from '../../models';
import { normaliseBaseUrl } from '../../common/remote';
import { remoteHealth } from '../../models/remote-health';
import type { HandlerGroup, HostDeps } from '../deps';

export function createModelsHandlers(deps: HostDeps): HandlerGroup<typeof modelsMethods> {
  const { services } = deps;
  const { remotes } = services;
  const library = () => services.library;
  const downloads = new DownloadManager({ dir: services.downloadDir });
  downloads.on('progress', (s) => deps.emit('download.progress', s));

  // Comparisons live in the jobs' SQLite file, in their own table; opened on first use.
  let marked = false;
  const running = new Map<string, { ac: AbortController; done: Promise<unknown> }>();
  const comparisons = (): ComparisonStore => {
    const store = services.comparisons();
    if (!marked) {
      marked = true;
      store.markInterrupted(new Set(running.keys()));
    }
    return store;
  };

  return {
    handlers: {
      'models.list': () => library().list(),
      'models.addFolder': ({ path }) => library().addFolder(path),
      'models.addFile': ({ path }) => library().addFile(path),
      'models.remove': ({ path }) => library().remove(path),
      'models.info': async ({ path, fit }) => {
        const file = resolve(path);
        const h = await inspectModelFile(file, { checkData: false });
        const { headerHash: _hash, ...model } = h;
        return { model: { ...model, source: 'file' as const }, fit: await estimateFit(file, fit ?? {}) };
      },
      'models.hardware': () => hardwareInfo(),
      'models.fit': ({ path, contextSize, sequences }) => estimateFit(resolve(path), { contextSize, sequences }),
      'models.catalog': () => loadCatalog(),
      'models.download': async ({ source, dir }) => downloads.start(source, dir),
      'models.cancelDownload': async ({ id }) => downloads.cancel(id),
      'models.downloads': async () => downloads.list(),
      'models.remote.list': async ({ probe }) => {
        const entries = await remotes.list();
        if (!probe) return entries.map((entry) => ({ entry, endpoints: null }));
        return remoteHealth(entries, { lookup: remotes });
      },
      'models.remote.probe': async ({ urls, model, keyEnv, key }) => {
        const target = { name: 'probe', urls: urls.map(normaliseBaseUrl), model, ...(keyEnv ? { keyEnv } : {}) };
        const [health] = await remoteHealth([target], { ...(key ? { key } : {}) });
        return health?.endpoints ?? [];
      },
      'models.remote.add': async ({ name, urls, model, keyEnv, key, maxInFlight }) => {
        const target = { name, urls: urls.map(normaliseBaseUrl), model, ...(keyEnv ? { keyEnv } : {}) };
        // Probed before it is saved, like `tatra models add-remote`: refused when a server answers
        // but will not serve (wrong key, unknown model, not OpenAI-compatible); kept when merely down.
        const [health] = await remoteHealth([target], { ...(key ? { key } : {}) });
        const refused = health?.endpoints.find((e) => !e.up && !/^cannot reach /.test(e.error ?? ''));
        if (refused) throw new UserError(refused.error ?? `${refused.url} refused`, 'remote_refused');
        const entry = await remotes.add({ ...target, ...(key ? { key } : {}), ...(maxInFlight !== undefined ? { maxInFlight } : {}) });
        return { entry, endpoints: health?.endpoints ?? null };
      },
      'models.remote.remove': async ({ name }) => {
        await remotes.remove(name.replace(/^remote:/, ''));
        return { ok: true };
      },
      'compare.start': async (spec) => {
        const record = newComparisonRecord(spec);
        // Bad models, data sets and columns answer the call itself, not a later event.
        await checkComparisonInputs(record.spec);
        const jobs = services.jobs();
        const { pool } = services;
        const cstore = comparisons();
        cstore.save(record);
        const ac = new AbortController();
        const onHostStop = () => ac.abort();
        deps.signal.addEventListener('abort', onHostStop, { once: true });
        const done = executeComparison(structuredClone(record), {
          jobs,
          pool,
          store: cstore,
          signal: ac.signal,
          onProgress: (r) => deps.emit('compare.progress', r),
        })
          .catch((e: unknown) => {
            // Only an unexpected failure gets here (pair failures are recorded per pair).
            const failed: ComparisonRecord = { ...(cstore.get(record.id) ?? record), status: 'error', error: errorMessage(e), finishedAt: Date.now() };
            cstore.save(failed);
            deps.emit('compare.progress', failed);
          })
          .finally(() => {
            deps.signal.removeEventListener('abort', onHostStop);
            running.delete(record.id);
          });
        running.set(record.id, { ac, done });
        return record;
      },
      'compare.cancel': async ({ id }) => {
        const r = running.get(id);
        if (!r) {
          if (!comparisons().get(id)) throw new UserError(`no comparison "${id}"`, 'compare_unknown');
          return { ok: false };
        }
        r.ac.abort();
        await r.done;
        return { ok: true };
      },
      'compare.list': async () => comparisons().list(),
      'compare.get': async ({ id }) => {
        const rec = comparisons().get(id);
        if (!rec) throw new UserError(`no comparison "${id}"`, 'compare_unknown');
        return rec;
      },
    },
    async dispose() {
      for (const r of running.values()) r.ac.abort();
      await Promise.allSettled([...running.values()].map((r) => r.done));
      await downloads.dispose();
    },
  };
}
