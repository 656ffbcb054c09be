// Both network faces in process, for the web tests: `tatra serve` over a real ApiHost on a temp
// data folder with a small renderer folder of its own, and `tatra api` over one scripted backend
// (scripted-api.ts), each on port 0.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createApiHost, type ApiHost } from '../../electron/api/host';
import { startServer, type RunningServer, type ServeOptions } from '../../electron/server/server';
import type { RunningApiService } from '../../electron/service';
import { startScriptedApi, type ScriptedApiOptions } from './scripted-api';

export interface BothFacesOptions {
  /** Files of the renderer folder besides its index.html, by path inside it. */
  web?: Record<string, string | Buffer>;
  serve?: Omit<Partial<ServeOptions>, 'host' | 'port' | 'staticDir'>;
  api?: ScriptedApiOptions;
}

export interface BothFaces {
  /** The temp folder: the renderer in web/, serve's data folder in serve/, the api's keys in api/. */
  dir: string;
  host: ApiHost;
  serve: RunningServer;
  api: RunningApiService;
  /** An API key of `api`. */
  key: string;
  /** Closes both faces and the host, and removes the folder. */
  close(): Promise<void>;
}

export async function startBothFaces(prefix: string, opts: BothFacesOptions = {}): Promise<BothFaces> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const web = join(dir, 'web');
  for (const [path, content] of Object.entries({ 'index.html': '<!doctype html><title>t</title>', ...opts.web })) {
    mkdirSync(dirname(join(web, path)), { recursive: true });
    writeFileSync(join(web, path), content);
  }
  const host = await createApiHost({ dataDir: join(dir, 'serve'), threads: 1, mode: 'test' });
  const serve = await startServer({ log: () => undefined, ...opts.serve, host, port: 0, staticDir: web });
  const { api, key } = await startScriptedApi(join(dir, 'api'), opts.api);
  return {
    dir,
    host,
    serve,
    api,
    key,
    async close() {
      await serve.close();
      await api.close(0);
      await host.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
