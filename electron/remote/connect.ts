// From what a user wrote (`openai+http://HOST:PORT/v1#MODEL`, `remote:NAME`) or what a job
// recorded (RemoteModelRef) to a connected RemoteBackend. Keys come from the environment variable
// an entry names, or from the host's key store (a key typed into the app); an inline spec may take
// one from $TATRA_API_KEY. No file access here: the library lookup is passed in.
import { UserError } from '../common/errors';
import type { RemoteModelSpec } from '../common/model-spec';
import type { RemoteModelEntry, RemoteModelRef } from '../common/remote';
import { connectRemoteBackend, type RemoteBackend, type RemoteBackendOptions } from './backend';

/** The model library's remote entries and stored keys, as the host has them. */
export interface RemoteLookup {
  /** The entry called `name`; UserError when there is none. */
  entry(name: string): Promise<RemoteModelEntry>;
  /** The key typed into the app for entry `name`, if any. */
  storedKey(name: string): Promise<string | undefined>;
}

/** Knobs for the backend (timeouts, in-flight limits); tests and benchmarks set them. */
export type RemoteTuning = Partial<Omit<RemoteBackendOptions, 'urls' | 'model' | 'name' | 'key' | 'keyEnv' | 'keyStored' | 'kind' | 'constrained' | 'signal'>>;

export interface ConnectRemoteOptions {
  /** What a job recorded: connect to exactly these endpoints (resume). */
  ref?: RemoteModelRef;
  lookup?: RemoteLookup;
  env?: Record<string, string | undefined>;
  tuning?: RemoteTuning;
  signal?: AbortSignal;
}

/** The environment variable an inline spec's key is read from. */
export const INLINE_KEY_ENV = 'TATRA_API_KEY';

async function keyFor(source: { name?: string; keyEnv?: string; keyStored?: boolean }, opts: ConnectRemoteOptions): Promise<string | undefined> {
  const env = opts.env ?? process.env;
  if (source.keyEnv) {
    const key = env[source.keyEnv];
    if (!key) throw new UserError(`$${source.keyEnv} is not set; it should hold the API key of ${source.name ? `remote:${source.name}` : 'this server'}`, 'remote_key_missing');
    return key;
  }
  if (source.keyStored && source.name) {
    const key = await opts.lookup?.storedKey(source.name);
    if (!key) throw new UserError(`the key kept for remote:${source.name} is gone; type it again in the model library`, 'remote_key_missing');
    return key;
  }
  return undefined;
}

/** The backend options for a spec or a recorded ref (key resolved, never stored in the result's source). */
export async function remoteBackendOptions(spec: RemoteModelSpec, opts: ConnectRemoteOptions = {}): Promise<RemoteBackendOptions> {
  const tuning = opts.tuning ?? {};
  const signal = opts.signal ? { signal: opts.signal } : {};
  if (opts.ref) {
    const ref = opts.ref;
    const key = await keyFor(ref, opts);
    return {
      ...tuning,
      ...signal,
      urls: ref.urls,
      model: ref.model,
      ...(ref.name ? { name: ref.name } : {}),
      ...(key ? { key } : {}),
      ...(ref.keyEnv ? { keyEnv: ref.keyEnv } : {}),
      ...(ref.keyStored ? { keyStored: true } : {}),
      // The same server behaviour as when the job started, whatever a probe would say now.
      kind: ref.kind,
      constrained: ref.constrained,
      ...(ref.maxInFlight ? { maxInFlight: ref.maxInFlight } : {}),
    };
  }
  if (spec.kind === 'inline') {
    const env = opts.env ?? process.env;
    const key = env[INLINE_KEY_ENV];
    return { ...tuning, ...signal, urls: [spec.url], model: spec.model, ...(key ? { key, keyEnv: INLINE_KEY_ENV } : {}), ...(spec.maxInFlight ? { maxInFlight: spec.maxInFlight } : {}) };
  }
  if (!opts.lookup) throw new UserError(`${spec.text} needs the model library of a data folder`, 'remote_unknown');
  const entry = await opts.lookup.entry(spec.entry);
  const key = await keyFor(entry, opts);
  return {
    ...tuning,
    ...signal,
    urls: entry.urls,
    model: entry.model,
    name: entry.name,
    ...(key ? { key } : {}),
    ...(entry.keyEnv ? { keyEnv: entry.keyEnv } : {}),
    ...(entry.keyStored ? { keyStored: true } : {}),
    ...(entry.kind ? { kind: entry.kind } : {}),
    ...(entry.constrained ? { constrained: entry.constrained } : {}),
    ...(entry.maxInFlight ? { maxInFlight: entry.maxInFlight } : {}),
  };
}

/** Connects a remote model (probing its endpoints); one clear UserError line when it cannot. */
export async function connectRemote(spec: RemoteModelSpec, opts: ConnectRemoteOptions = {}): Promise<RemoteBackend> {
  return connectRemoteBackend(await remoteBackendOptions(spec, opts));
}
