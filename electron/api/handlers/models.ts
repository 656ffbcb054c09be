// API handlers for the model library, hardware and fit, the catalog, downloads and remote
// models. Thin: electron/models does the work; this wires it to the data folder's services
// (its one library, model pool and job manager) and the host's event bus.
import { resolve } from 'node:path';
import type { LibraryListing, modelsMethods } from '../../common/contract/models';
import { UserError, errorMessage } from '../../common/errors';
import { DownloadManager, catalogFit, freeMemory, estimateFit, hardwareInfo, inspectModelFile, loadCatalog, recommendCatalog } from '../../models';
import { normaliseBaseUrl } from '../../common/remote';
import { refusingEndpoint, remoteHealth } from '../../models/remote-health';
import type { HandlerGroup, HostDeps } from '../deps';
import { adoptFirstModel } from './settings';

export function createModelsHandlers(deps: HostDeps): HandlerGroup<typeof modelsMethods> {
  const { services } = deps;
  const { remotes } = services;
  const library = () => services.library;
  const downloads = new DownloadManager({ dir: services.downloadDir });
  downloads.on('progress', (s) => {
    deps.emit('download.progress', s);
    if (s.status === 'done') adoptFirstModel(deps, s.dest).catch((e: unknown) => deps.log(`tatra: ${s.dest} downloaded, but not chosen as the model: ${errorMessage(e)}`));
  });
  /** The listing, after making its first usable model the chosen one if none is (settings.ts adoptFirstModel). */
  const adopting = async (listing: LibraryListing): Promise<LibraryListing> => {
    const first = [...listing.models].sort((a, b) => Number(b.hasChatTemplate) - Number(a.hasChatTemplate))[0];
    if (first) await adoptFirstModel(deps, first.path);
    return listing;
  };

  return {
    handlers: {
      'models.list': async () => adopting(await library().list()),
      'models.addFolder': async ({ path }) => adopting(await library().addFolder(path)),
      'models.addFile': async ({ path }) => adopting(await library().addFile(path)),
      'models.remove': ({ path }) => library().remove(path),
      'models.info': async ({ path, fit }) => {
        const file = resolve(path);
        const h = await inspectModelFile(file, { checkData: false });
        const { headerHash: _hash, ...model } = h;
        return { model: { ...model, source: 'file' as const }, fit: await estimateFit(file, fit ?? {}) };
      },
      'models.hardware': () => hardwareInfo(),
      'models.fit': ({ path, contextSize, sequences }) => estimateFit(resolve(path), { contextSize, sequences }),
      'models.catalog': async () => {
        const [entries, hw] = await Promise.all([loadCatalog(), hardwareInfo()]);
        const free = freeMemory(hw);
        const best = recommendCatalog(entries, free);
        return entries.map((e) => ({ ...e, fit: catalogFit(e, free), recommended: e.id === best?.id }));
      },
      'models.download': async ({ source, dir }) => downloads.start(source, dir),
      'models.cancelDownload': async ({ id }) => downloads.cancel(id),
      'models.downloads': async () => downloads.list(),
      'models.dismissDownload': async ({ id }) => ({ dismissed: downloads.forget(id) }),
      'models.remote.list': async ({ probe }) => {
        const entries = await remotes.list();
        if (!probe) return entries.map((entry) => ({ entry, endpoints: null }));
        return remoteHealth(entries, { lookup: remotes });
      },
      'models.remote.probe': async ({ urls, model, keyEnv, key }) => {
        const target = { name: 'probe', urls: urls.map(normaliseBaseUrl), model: model ?? '', ...(keyEnv ? { keyEnv } : {}) };
        const [health] = await remoteHealth([target], { ...(key ? { key } : {}) });
        return health?.endpoints ?? [];
      },
      'models.remote.add': async ({ name, urls, model, keyEnv, key, maxInFlight }) => {
        const target = { name, urls: urls.map(normaliseBaseUrl), model, ...(keyEnv ? { keyEnv } : {}) };
        // Probed before it is saved, like `tatra models add-remote`: refused when a server answers
        // but will not serve (wrong key, unknown model, not OpenAI-compatible); kept when merely down.
        const [health] = await remoteHealth([target], { ...(key ? { key } : {}) });
        const refused = refusingEndpoint(health?.endpoints ?? []);
        if (refused) throw new UserError(refused.error ?? `${refused.url} refused`, 'remote_refused');
        const entry = await remotes.add({ ...target, ...(key ? { key } : {}), ...(maxInFlight !== undefined ? { maxInFlight } : {}) });
        await adoptFirstModel(deps, `remote:${entry.name}`);
        return { entry, endpoints: health?.endpoints ?? null };
      },
      'models.remote.remove': async ({ name }) => {
        await remotes.remove(name.replace(/^remote:/, ''));
        return { ok: true };
      },
    },
    async dispose() {
      await downloads.dispose();
    },
  };
}
