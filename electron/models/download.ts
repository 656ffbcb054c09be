// Verified, resumable downloads with HTTP Range on the one HTTP client (net/http.ts), so we control
// timeouts, resume and verification (node-llama-cpp's downloader can retry for ~12 minutes
// offline, and its `signal` does not reach the first request).
//
// On disk, while it runs: `<dir>/<file>.gguf.partial` (the bytes so far: never ends in .gguf, so
// nothing mistakes it for a model) and `<file>.gguf.partial.json` (url, expected size, etag).
// A later attempt resumes with Range when the sidecar matches; the result is renamed into place
// only after its size and GGUF header check out.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve as resolvePath } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import type { DownloadState } from '../common/contract/models';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import { formatBytes } from '../common/bytes';
import { defaultModelsDir } from '../paths';
import { readSmallRegularFile } from '../regular-file';
import { HttpFailure, httpStream, type HttpStream } from '../net/http';
import { resolveModelUri, type ResolvedSource } from './resolve';
import { invalidReason, validateModelFile } from './gguf';

export interface DownloadOptions {
  /** Folder the model goes into (default: the app's models/ folder). */
  dir?: string;
  signal?: AbortSignal;
  /** Until the server's response headers arrive, in ms (default 5000). */
  connectTimeoutMs?: number;
  /** Longest silence once data flows, in ms (default 30000). */
  idleTimeoutMs?: number;
  /** Resumed attempts after the connection drops mid-transfer (default 3). */
  retries?: number;
  /** Shortest interval between progress reports, in ms (default 250). */
  progressIntervalMs?: number;
  catalogPath?: string;
  hfEndpoint?: string;
  onProgress?: (state: DownloadState) => void;
  /** @internal the id the manager assigned. */
  id?: string;
}

interface Sidecar {
  url: string;
  source: string;
  /** Total length the server declared. */
  total: number | null;
  etag: string | null;
  /** The server's Last-Modified, the validator left when it sends no ETag. */
  lastModified: string | null;
}

const PARTIAL = '.partial';

/** Paths a download uses for a final file. */
export function partialPaths(dest: string): { partial: string; sidecar: string } {
  return { partial: dest + PARTIAL, sidecar: `${dest}${PARTIAL}.json` };
}

async function fileSize(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch {
    return null;
  }
}

async function readSidecar(path: string): Promise<Sidecar | null> {
  try {
    const s = JSON.parse(await readSmallRegularFile(path)) as Partial<Sidecar>;
    if (typeof s.url !== 'string') return null;
    return {
      url: s.url,
      source: String(s.source ?? ''),
      total: typeof s.total === 'number' ? s.total : null,
      etag: typeof s.etag === 'string' ? s.etag : null,
      lastModified: typeof s.lastModified === 'string' ? s.lastModified : null,
    };
  } catch {
    return null;
  }
}

/**
 * GET `url` on the one HTTP client: the headers within `connectTimeoutMs` (DNS, TCP and the wait
 * for headers; redirects followed), then a body that fails after `idleTimeoutMs` of silence.
 * Unreachable hosts are one UserError line.
 */
async function openResponse(url: string, headers: Record<string, string>, settings: TransferSettings, signal: AbortSignal | undefined): Promise<HttpStream> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UserError(`invalid download URL ${url}`, 'bad_uri');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new UserError(`unsupported URL scheme in ${url}`, 'bad_uri');
  try {
    // identity: byte counts, Range offsets and the size check all refer to the file itself.
    return await httpStream({ url, headers: { 'user-agent': 'tatra-studio', 'accept-encoding': 'identity', ...headers }, timeoutMs: settings.connectTimeoutMs, idleTimeoutMs: settings.idleTimeoutMs, ...(signal ? { signal } : {}) });
  } catch (e) {
    if (e instanceof HttpFailure) throw new UserError(`cannot reach ${u.host}: ${e.message}`, 'download_unreachable');
    throw e;
  }
}

/** Parses `Content-Range: bytes a-b/total`. */
function parseContentRange(v: string | null): { start: number; end: number; total: number | null } | null {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(v?.trim() ?? '');
  if (!m) return null;
  return { start: Number(m[1]), end: Number(m[2]), total: m[3] === '*' ? null : Number(m[3]) };
}

/** The tunables of one download, with their defaults. */
interface TransferSettings {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  retries: number;
  interval: number;
}

function transferSettings(options: DownloadOptions): TransferSettings {
  return { connectTimeoutMs: options.connectTimeoutMs ?? 5000, idleTimeoutMs: options.idleTimeoutMs ?? 30_000, retries: options.retries ?? 3, interval: options.progressIntervalMs ?? 250 };
}

/**
 * Download one model to `<dir>/<file>.gguf` through `<file>.gguf.partial` (+ `.partial.json`),
 * resuming a partial file with Range, verifying size and GGUF header, then renaming atomically.
 * Resolves with the final state (status "done"); rejects with UserError for bad sources,
 * unreachable hosts, size mismatches or corrupt files, and AbortError when cancelled (the
 * partial file stays, so the same download resumes later).
 */
export async function downloadModel(source: string, options: DownloadOptions = {}): Promise<DownloadState> {
  const settings = transferSettings(options);
  const signal = options.signal;
  const resolved: ResolvedSource = await resolveModelUri(source, { signal, timeoutMs: settings.connectTimeoutMs, catalogPath: options.catalogPath, hfEndpoint: options.hfEndpoint });
  const { dir, dest } = await destinationFor(resolved, options.dir);
  const progress = new Progress(initialState(source, resolved, dest, options.id), settings.interval, options.onProgress);
  const existing = await fileSize(dest);
  if (existing !== null) return acceptExisting(dest, existing, progress);
  const transfer: Transfer = { source, resolved, dir, files: partialPaths(dest), settings, signal, progress };
  await transferUntilComplete(transfer);
  return verifyAndPlace(transfer, dest);
}

/** The folder (created if need be) and the final path; whatever the source said, the file lands in the folder itself. */
async function destinationFor(resolved: ResolvedSource, dirOption: string | undefined): Promise<{ dir: string; dest: string }> {
  const dir = resolvePath(dirOption ?? defaultModelsDir());
  try {
    await mkdir(dir, { recursive: true });
  } catch (e) {
    throw new UserError(`cannot create the download folder ${dir}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`, 'download_failed');
  }
  const dest = join(dir, resolved.fileName);
  // A catalog or URL could name a path.
  if (dirname(dest) !== dir || basename(dest) !== resolved.fileName) {
    throw new UserError(`refusing to download "${resolved.fileName}": the name would put the file outside ${dir}`, 'bad_uri');
  }
  return { dir, dest };
}

export function initialState(source: string, resolved: ResolvedSource, dest: string, id: string | undefined): DownloadState {
  return {
    id: id ?? randomUUID(),
    source,
    url: resolved.url,
    dest,
    fileName: resolved.fileName,
    status: 'downloading',
    bytes: 0,
    total: resolved.expectedSize ?? null,
    rate: 0,
    etaSeconds: null,
    resumedFrom: 0,
    error: null,
    startedAt: Date.now(),
    finishedAt: null,
  };
}

/** The state of one download and its reports: at most one per interval unless forced; rate over a sliding window. */
class Progress {
  // Rate over a sliding window of a few seconds, so ETA follows the current speed.
  private readonly samples: { t: number; b: number }[] = [];
  private lastEmit = 0;

  constructor(
    readonly state: DownloadState,
    private readonly interval: number,
    private readonly onProgress: ((state: DownloadState) => void) | undefined,
  ) {}

  emit(force = false): void {
    const now = Date.now();
    if (!force && now - this.lastEmit < this.interval) return;
    this.lastEmit = now;
    this.onProgress?.({ ...this.state });
  }

  /** Bytes arrived: update rate and ETA, and report. */
  noteBytes(n: number): void {
    const state = this.state;
    state.bytes += n;
    const now = Date.now();
    this.samples.push({ t: now, b: state.bytes });
    while (this.samples.length > 2 && now - (this.samples[0] as { t: number }).t > 3000) this.samples.shift();
    const first = this.samples[0] as { t: number; b: number };
    const dt = (now - first.t) / 1000;
    if (dt > 0.2) state.rate = (state.bytes - first.b) / dt;
    state.etaSeconds = state.total !== null && state.rate > 0 ? Math.max(0, (state.total - state.bytes) / state.rate) : null;
    this.emit();
  }

  /** An attempt starts at `have` bytes of `total`. */
  startAttempt(have: number, total: number | null): void {
    Object.assign(this.state, { bytes: have, total: total ?? this.state.total, status: 'downloading' });
    this.samples.length = 0;
    this.emit(true);
  }

  /** The transfer stopped: report what is really on disk, so a UI shows where a resume starts. */
  stopped(onDisk: number): void {
    Object.assign(this.state, { bytes: onDisk, rate: 0, etaSeconds: null });
    this.emit(true);
  }
}

/** A file already at the destination: checked, never downloaded again or overwritten. */
async function acceptExisting(dest: string, size: number, progress: Progress): Promise<DownloadState> {
  try {
    await validateModelFile(dest);
  } catch (e) {
    throw new UserError(`${dest} already exists and is not a usable model (${invalidReason(e, dest)}); delete it to download again`, 'download_exists');
  }
  Object.assign(progress.state, { status: 'done', bytes: size, total: size, finishedAt: Date.now() });
  progress.emit(true);
  return { ...progress.state };
}

/** What one download works with, across its attempts. */
interface Transfer {
  source: string;
  resolved: ResolvedSource;
  dir: string;
  files: { partial: string; sidecar: string };
  settings: TransferSettings;
  signal: AbortSignal | undefined;
  progress: Progress;
}

/** How the server answered a request: a body to write, nothing left to fetch, or start over (giving up with `giveUp` when attempts run out). */
type Answer = { kind: 'body'; total: number | null; append: boolean; have: number } | { kind: 'complete' } | { kind: 'restart'; giveUp: string };

/** Fetches into the partial file until it holds the whole declared length, resuming and retrying. */
async function transferUntilComplete(t: Transfer): Promise<void> {
  const { files, settings, signal, progress, resolved } = t;
  let attempt = 0;
  let firstAttempt = true;
  for (;;) {
    signal?.throwIfAborted();
    const start = await resumablePartial(t);
    if (start === 'complete') return;
    const res = await openResponse(resolved.url, resumeHeaders(start.have, start.side), settings, signal);
    const answer = await readAnswer(t, res, start);
    if (answer.kind === 'complete') return;
    if (answer.kind === 'restart') {
      if (++attempt > settings.retries + 1) throw new UserError(answer.giveUp, 'download_failed');
      continue;
    }
    const { total, append, have } = answer;
    await checkDiskSpace(t, res, total, have);
    const meta = await writeSidecar(t, res, total);
    if (firstAttempt) progress.state.resumedFrom = have;
    firstAttempt = false;
    progress.startAttempt(have, total);

    const failure = await receiveBody(t, res, append);
    // What is on disk is the truth for the next attempt, whatever the stream counters said.
    const onDisk = (await fileSize(files.partial)) ?? 0;
    progress.state.bytes = onDisk;
    if (failure !== null) {
      progress.stopped(onDisk);
      signal?.throwIfAborted();
      if (isAbortError(failure)) throw failure;
      if (++attempt <= settings.retries) {
        await new Promise((r) => setTimeout(r, onDisk > have ? 100 : 300 * attempt));
        continue;
      }
      const of = total !== null ? ` of ${formatBytes(total)}` : '';
      throw new UserError(`download of ${resolved.fileName} interrupted after ${formatBytes(onDisk)}${of} (${errorMessage(failure)}); run it again to resume`, 'download_interrupted');
    }
    if (total !== null && onDisk < total) {
      // The body ended early without an error: resume for the rest.
      if (++attempt <= settings.retries) continue;
      throw new UserError(`download of ${resolved.fileName} is truncated: ${formatBytes(onDisk)} of ${formatBytes(total)}; run it again to resume`, 'download_truncated');
    }
    if (total !== null && onDisk > total) {
      await rm(files.partial, { force: true });
      await rm(files.sidecar, { force: true });
      throw new UserError(`download of ${resolved.fileName} is larger than the server declared (${onDisk} > ${total} bytes); discarded`, 'download_corrupt');
    }
    if (total === null) await writeFile(files.sidecar, JSON.stringify({ ...meta, total: onDisk }));
    return;
  }
}

/** The partial file to resume from (`have` bytes, its sidecar), 'complete' when an earlier run finished it; one we cannot vouch for is removed. */
async function resumablePartial(t: Transfer): Promise<{ have: number; side: Sidecar | null } | 'complete'> {
  const { partial, sidecar } = t.files;
  const side = await readSidecar(sidecar);
  let have = (await fileSize(partial)) ?? 0;
  if (have > 0 && (!side || side.url !== t.resolved.url)) {
    // A partial file we cannot vouch for (other URL, no sidecar): start over.
    await rm(partial, { force: true });
    have = 0;
  }
  if (side?.total != null && have === side.total && have > 0) return 'complete';
  if (side?.total != null && have > side.total) {
    await rm(partial, { force: true });
    have = 0;
  }
  return { have, side };
}

/** Range (and If-Range) for a resume from `have` bytes. */
function resumeHeaders(have: number, side: Sidecar | null): Record<string, string> {
  const headers: Record<string, string> = {};
  if (have > 0) {
    headers.range = `bytes=${have}-`;
    // If the file changed on the server, If-Range makes it send the whole new file (200).
    // Without a strong ETag the Last-Modified date is the validator If-Range allows.
    if (side?.etag && !side.etag.startsWith('W/')) headers['if-range'] = side.etag;
    else if (side?.lastModified) headers['if-range'] = side.lastModified;
  }
  return headers;
}

/** The validators a response carries for the file it sends (ETag, Last-Modified). */
function validatorsOf(res: HttpStream): { etag: string | null; lastModified: string | null } {
  return { etag: res.headers.get('etag'), lastModified: res.headers.get('last-modified') };
}

/**
 * Whether a 206 answer to a resume continues the very file the partial holds: the range starts
 * where the partial ends, and every validator the partial recorded (ETag, Last-Modified, total
 * length) is still the same and still sent. A server that ignores If-Range answers 206 for a file
 * that changed since; splicing it would yield a mix of two versions that may even pass the header
 * check. The one rule for every resume: anything else starts over from zero.
 */
function continuesPartial(res: HttpStream, cr: ReturnType<typeof parseContentRange>, have: number, side: Sidecar | null): boolean {
  if (!cr || cr.start !== have || !side) return false;
  const now = validatorsOf(res);
  // A weak ETag (W/"…") still changes when the file does; compare the opaque tags.
  const tag = (etag: string) => etag.replace(/^W\//, '');
  if (side.etag !== null && (now.etag === null || tag(now.etag) !== tag(side.etag))) return false;
  if (side.lastModified !== null && (now.lastModified === null || now.lastModified !== side.lastModified)) return false;
  if (side.total !== null && cr.total !== null && cr.total !== side.total) return false;
  return true;
}

/** Decides from the status (and Content-Range, and validators) what to do with the response. */
async function readAnswer(t: Transfer, res: HttpStream, start: { have: number; side: Sidecar | null }): Promise<Answer> {
  const { partial, sidecar } = t.files;
  const { resolved } = t;
  const { have, side } = start;
  const host = new URL(resolved.url).host;
  const status = res.status;
  const startOver = async (giveUp: string): Promise<Answer> => {
    res.body.destroy();
    await rm(partial, { force: true });
    await rm(sidecar, { force: true });
    return { kind: 'restart', giveUp };
  };
  if (status === 206) {
    const cr = parseContentRange(res.headers.get('content-range'));
    if (!cr || cr.start !== have) return startOver(`the server at ${host} answered a resume with the wrong byte range`);
    if (!continuesPartial(res, cr, have, side)) return startOver(`${resolved.fileName} keeps changing on the server at ${host}; try again later`);
    return { kind: 'body', total: cr.total, append: true, have };
  }
  if (status === 200) {
    // A fresh copy from byte zero: either we asked for it, or the server ignored Range, or the
    // file changed (If-Range). Written over the partial, never appended to it.
    const header = res.headers.get('content-length');
    const len = Number(header);
    return { kind: 'body', total: header !== null && Number.isFinite(len) ? len : null, append: false, have: 0 };
  }
  if (status === 416 && have > 0) {
    res.body.resume();
    const cr = parseContentRange(res.headers.get('content-range'));
    if (cr?.total === have && side) {
      await writeFile(sidecar, JSON.stringify({ ...side, total: have }));
      return { kind: 'complete' };
    }
    return startOver(`the server at ${host} refused to resume the download`);
  }
  res.body.resume();
  const what = status === 404 ? 'not found' : status === 401 || status === 403 ? 'access denied (gated or private model?)' : `HTTP ${status}`;
  throw new UserError(`download of ${resolved.fileName} failed: ${what} (${resolved.url})`, status === 404 ? 'download_not_found' : 'download_failed');
}

/** Fail now rather than after hours of transfer with a full disk. */
async function checkDiskSpace(t: Transfer, res: HttpStream, total: number | null, have: number): Promise<void> {
  if (total === null) return;
  // A file system that cannot say its free space (statfs unsupported) leaves the check to the write.
  const fs = await statfs(t.dir).catch((e: unknown) => {
    if (['ENOSYS', 'ENOTSUP', 'EOPNOTSUPP'].includes((e as { code?: string }).code ?? '')) return null;
    throw e;
  });
  const free = fs ? fs.bavail * fs.bsize : Infinity;
  if (total - have > free) {
    res.body.destroy();
    throw new UserError(`not enough disk space in ${t.dir} for ${t.resolved.fileName}: needs ${formatBytes(total - have)}, ${formatBytes(free)} free`, 'download_no_space');
  }
}

/** Records what the partial file is a part of (url, declared total, validators), for a later resume. */
async function writeSidecar(t: Transfer, res: HttpStream, total: number | null): Promise<Sidecar> {
  const meta: Sidecar = { url: t.resolved.url, source: t.source, total, ...validatorsOf(res) };
  await writeFile(t.files.sidecar, JSON.stringify(meta));
  return meta;
}

/** Streams the body into the partial file, counting bytes; a stall (the client's idle timeout) or a cancel ends it. Resolves with the failure, null when the body ended. */
async function receiveBody(t: Transfer, res: HttpStream, append: boolean): Promise<unknown> {
  const { progress } = t;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      progress.noteBytes(chunk.length);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(res.body, counter, createWriteStream(t.files.partial, { flags: append ? 'a' : 'w' }));
    return null;
  } catch (e) {
    return e;
  }
}

/** Checks the complete transfer is a usable GGUF and renames it into place; one that is not is discarded (resuming cannot fix it). */
async function verifyAndPlace(t: Transfer, dest: string): Promise<DownloadState> {
  const { partial, sidecar } = t.files;
  const { state } = t.progress;
  state.status = 'verifying';
  state.bytes = (await fileSize(partial)) ?? 0;
  state.total = state.total ?? state.bytes;
  t.progress.emit(true);
  try {
    await validateModelFile(partial);
  } catch (e) {
    await rm(partial, { force: true });
    await rm(sidecar, { force: true });
    throw new UserError(`downloaded ${t.resolved.fileName} is not a usable model (${invalidReason(e, partial)}); discarded`, 'download_corrupt');
  }
  await rename(partial, dest);
  await rm(sidecar, { force: true });
  Object.assign(state, { status: 'done', etaSeconds: 0, finishedAt: Date.now() });
  t.progress.emit(true);
  return { ...state };
}
