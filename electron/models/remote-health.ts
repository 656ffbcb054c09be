// Health of remote models for the library listings (`tatra models list`, the app's library):
// every endpoint probed at once, each within a few seconds, down ones with the reason in one line.
import { UserError, errorMessage } from '../common/errors';
import type { RemoteModelEntry, ServerProbe } from '../common/remote';
import { checkModelListed, probeServer, type RemoteLookup } from '../remote';

export interface EndpointHealth {
  url: string;
  /** Answers and serves the model: usable. */
  up: boolean;
  /** Answered the probe as an OpenAI-compatible server (it may still not serve the model). */
  answers: boolean;
  error: string | null;
  probe: ServerProbe | null;
}

export interface RemoteHealth {
  entry: RemoteModelEntry;
  endpoints: EndpointHealth[];
}

export interface RemoteHealthOptions {
  env?: Record<string, string | undefined>;
  /** For keys typed into the app. */
  lookup?: Pick<RemoteLookup, 'storedKey'>;
  /** Per probe request (default 3000 ms). */
  timeoutMs?: number;
  /** A key typed but not stored yet (the app's "probe" before "add"). */
  key?: string;
}

/** Probes one endpoint for `model` (none: the server alone); never throws for what the server does. */
export async function endpointHealth(url: string, model: string, opts: { key?: string; keyEnv?: string; timeoutMs?: number }): Promise<EndpointHealth> {
  try {
    const probe = await probeServer(url, { ...opts, timeoutMs: opts.timeoutMs ?? 3000 });
    try {
      if (model) checkModelListed(probe, model);
    } catch (e) {
      // The server is up; it just does not serve this model: not the same as down.
      return { url, up: false, answers: true, error: errorMessage(e), probe };
    }
    return { url, up: true, answers: true, error: null, probe };
  } catch (e) {
    return { url, up: false, answers: false, error: errorMessage(e), probe: null };
  }
}

/**
 * The endpoint that refuses a new remote model: one that answers but will not serve it (unknown
 * model, wrong key, not OpenAI-compatible). One merely unreachable is not a refusal: the model
 * is kept and used once the server is back.
 */
export function refusingEndpoint(endpoints: readonly EndpointHealth[]): EndpointHealth | undefined {
  return endpoints.find((e) => !e.up && (e.answers || !/^cannot reach /.test(e.error ?? '')));
}

export async function remoteHealth(entries: readonly RemoteModelEntry[], opts: RemoteHealthOptions = {}): Promise<RemoteHealth[]> {
  const env = opts.env ?? process.env;
  return Promise.all(
    entries.map(async (entry) => {
      let key = opts.key;
      if (!key && entry.keyEnv) key = env[entry.keyEnv];
      // A key kept by the other face of the app (encrypted for the desktop) cannot be read here: probed
      // without it, as the server then answers.
      if (!key && entry.keyStored) key = await opts.lookup?.storedKey(entry.name).catch((e: unknown) => (e instanceof UserError && e.code === 'remote_key_missing' ? undefined : Promise.reject(e)));
      const endpoints = await Promise.all(
        entry.urls.map((url) => endpointHealth(url, entry.model, { ...(key ? { key } : {}), ...(entry.keyEnv ? { keyEnv: entry.keyEnv } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) })),
      );
      return { entry, endpoints };
    }),
  );
}
