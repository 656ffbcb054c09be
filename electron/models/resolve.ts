// Turning what a user typed (catalog id, hf: URI, https URL) into one https URL and a file name.
// Resolved here rather than by node-llama-cpp, whose resolver can retry for ~12 minutes offline.
import { z } from 'zod';
import { UserError } from '../common/errors';
import { HttpFailure, httpJson } from '../net/http';
import { findCatalogEntry } from './catalog';

export interface ResolvedSource {
  url: string;
  fileName: string;
  /** Approximate size (catalog): progress before the server answers. */
  expectedSize?: number;
}

export interface ResolveOptions {
  signal?: AbortSignal;
  /** For the Hugging Face API lookup of `hf:user/repo:QUANT` (default 5000 ms). */
  timeoutMs?: number;
  catalogPath?: string;
  /** Base of the Hugging Face site (tests point it at a local server); default $TATRA_HF_ENDPOINT or https://huggingface.co. */
  hfEndpoint?: string;
}

function hfEndpoint(explicit?: string): string {
  return (explicit ?? process.env.TATRA_HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
}

const repoPart = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function encodePath(p: string): string {
  return p.split('/').map(encodeURIComponent).join('/');
}

/**
 * The file name a URL's path ends in, decoded and reduced to a base name: `/x/..%2f..%2fm.gguf`
 * is `m.gguf`, never a path that climbs out of the download folder. '' when there is none.
 */
export function urlFileName(pathname: string): string {
  let last = pathname.split('/').pop() ?? '';
  try {
    last = decodeURIComponent(last);
  } catch {
    return '';
  }
  // Decoding can reveal separators (%2f, %5c): only what follows the last one is a name.
  const base = last.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  if (base === '.' || base === '..' || /[\u0000-\u001f\u007f]/.test(base)) return '';
  return base;
}

/** `hf:user/repo/path/file.gguf` → https://huggingface.co/user/repo/resolve/main/path/file.gguf (no network). */
export function resolveHfUri(uri: string, endpoint?: string): ResolvedSource {
  const rest = uri.replace(/^hf:/, '').replace(/^\/+/, '');
  const parts = rest.split('/');
  const [user, repo, ...file] = parts;
  if (!user || !repo || file.length === 0 || !repoPart.test(user) || !repoPart.test(repo.split(':')[0] ?? '')) {
    throw new UserError(`"${uri}" is not an hf: model URI; use hf:user/repo/file.gguf or hf:user/repo:QUANT`, 'bad_uri');
  }
  const filePath = file.join('/');
  if (!/\.gguf$/i.test(filePath) || file.some((f) => f === '' || f === '..' || f === '.')) {
    throw new UserError(`"${uri}" does not name a .gguf file`, 'bad_uri');
  }
  return {
    url: `${hfEndpoint(endpoint)}/${user}/${repo}/resolve/main/${encodePath(filePath)}`,
    fileName: file[file.length - 1] as string,
  };
}

/** The part of the Hugging Face model API's answer read here: the repository's file names. */
const hfModelAnswer = z.looseObject({ siblings: z.array(z.looseObject({ rfilename: z.string() })).optional() });

/** Asks the Hugging Face API which .gguf of `user/repo` has this quantisation (single-file ones only). */
async function resolveHfQuant(user: string, repo: string, quant: string, options: ResolveOptions): Promise<ResolvedSource> {
  const base = hfEndpoint(options.hfEndpoint);
  const host = new URL(base).host;
  let body: z.infer<typeof hfModelAnswer>;
  try {
    body = await httpJson({ method: 'GET', url: `${base}/api/models/${user}/${repo}`, answer: hfModelAnswer, timeoutMs: options.timeoutMs ?? 5000, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (e) {
    if (!(e instanceof HttpFailure)) throw e;
    if (e.status === 404 || e.status === 401) throw new UserError(`Hugging Face has no public model ${user}/${repo}`, 'download_not_found');
    if (e.kind === 'status') throw new UserError(`Hugging Face answered HTTP ${e.status} for ${user}/${repo}`, 'download_failed');
    if (e.kind === 'connect' || e.kind === 'timeout') throw new UserError(`cannot reach ${host}: ${e.message}`, 'download_unreachable');
    throw new UserError(`${host} sent an answer TATRA Studio cannot use (${e.message})`, 'download_failed');
  }
  const q = quant.toLowerCase();
  const files = (body.siblings ?? [])
    .map((s) => s.rfilename)
    .filter((f) => /\.gguf$/i.test(f) && !/-\d{5}-of-\d{5}\.gguf$/i.test(f))
    .filter((f) => {
      const name = f.toLowerCase().replace(/\.gguf$/, '');
      return name.endsWith(`-${q}`) || name.endsWith(`.${q}`) || name.endsWith(`_${q}`);
    });
  const file = files[0];
  if (!file) throw new UserError(`${user}/${repo} has no single-file .gguf with quantisation ${quant}`, 'download_not_found');
  return resolveHfUri(`hf:${user}/${repo}/${file}`, options.hfEndpoint);
}

/**
 * Resolve a catalog id, `hf:user/repo/file.gguf`, `hf:user/repo:QUANT` (asks the Hugging Face
 * API, with its own timeout) or an http(s) URL. UserError for anything else.
 */
export async function resolveModelUri(source: string, options: ResolveOptions = {}): Promise<ResolvedSource> {
  const s = source.trim();
  if (s.startsWith('hf:')) {
    const m = /^hf:\/*([^/]+)\/([^/:]+):([A-Za-z0-9_.-]+)$/.exec(s);
    if (m) return resolveHfQuant(m[1] as string, m[2] as string, m[3] as string, options);
    return resolveHfUri(s, options.hfEndpoint);
  }
  if (/^https?:\/\//i.test(s)) {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      throw new UserError(`"${s}" is not a valid URL`, 'bad_uri');
    }
    const fileName = urlFileName(url.pathname);
    if (!/\.gguf$/i.test(fileName)) throw new UserError(`the URL ${s} does not end in a .gguf file name`, 'bad_uri');
    return { url: url.toString(), fileName };
  }
  const entry = await findCatalogEntry(s, options.catalogPath);
  if (entry) return { ...resolveHfUri(entry.uri, options.hfEndpoint), fileName: entry.fileName, expectedSize: entry.sizeBytes };
  throw new UserError(`"${s}" is not a catalog id, an hf: URI or an https URL (see "tatra models download --help")`, 'bad_uri');
}
