// Models: the library (valid models with their header facts and fit badges, unusable files with
// their reasons), the machine's hardware, the curated catalog and downloads with live progress.
import { useEffect, useState } from 'react';
import type { DownloadState, LibraryListing, ModelEntry } from '../../../electron/common/contract/models';
import { formatBytes, formatParams } from '../../../electron/common/bytes';
import { backendLabel } from '../../../electron/common/gpu';
import { BreakableName, ErrorBanner, JumpTo, ProgressBar, TableWrap } from '../components/Common';
import { duration } from '../components/labels';
import { useStore } from '../store';
import { Welcome } from '../components/Welcome';
import { RemoteModelsCard } from './RemoteModelsCard';
import { FitBadge } from '../components/FitBadge';

function HardwareCard() {
  const hw = useStore((s) => s.hardware);
  return (
    <div className="card" data-testid="hardware-card">
      <div className="card-head">
        <h2>Hardware</h2>
        <span className="sub">what models are estimated against</span>
      </div>
      {!hw ? (
        <div className="skeleton" style={{ height: 60 }} />
      ) : (
        <div className="metrics hardware">
          <div className="card metric" data-testid="gpu-backend">
            <span className="name">GPU backend</span>
            <span className="value">{hw.gpu.backend === 'cpu' ? 'none (CPU)' : backendLabel(hw.gpu.backend)}</span>
            <span className="muted small">{hw.gpu.standIn ? 'stand-in, not this machine' : hw.gpu.backend === 'cpu' ? 'models run on the CPU' : hw.gpu.unifiedMemory ? 'memory shared with the CPU' : 'layers offload to the cards'}</span>
          </div>
          <div className="card metric" data-testid="gpu-cards">
            <span className="name">{hw.gpu.cards.length > 1 ? `${hw.gpu.cards.length} cards · ` : hw.gpu.cards.length === 1 ? 'Card · ' : ''}{hw.gpu.unifiedMemory ? 'memory free' : 'VRAM free'}</span>
            <span className="value">{hw.gpu.backend === 'cpu' ? '–' : formatBytes(hw.gpu.vram.free)}</span>
            {hw.gpu.backend !== 'cpu' && (
              <span className="muted small">
                {hw.gpu.cards.map((c) => (
                  <span key={c.name} className="gpu-card" data-testid="gpu-card" style={{ display: 'block' }}>
                    {c.name}
                    {c.vramFree !== null && c.vramTotal !== null ? ` · ${formatBytes(c.vramFree)} of ${formatBytes(c.vramTotal)}` : ''}
                  </span>
                ))}
                {hw.gpu.cards.length !== 1 && <span style={{ display: 'block' }}>of {formatBytes(hw.gpu.vram.total)} in all</span>}
              </span>
            )}
          </div>
          <div className="card metric">
            <span className="name">RAM free</span>
            <span className="value" data-testid="ram">
              {formatBytes(hw.ram.free)}
            </span>
            <span className="muted small">of {formatBytes(hw.ram.total)}</span>
          </div>
          <div className="card metric">
            <span className="name">CPU cores · threads</span>
            <span className="value">
              {hw.cpuCores} · {hw.threads}
            </span>
          </div>
        </div>
      )}
    </div>
  );
}

function AddPath() {
  const [path, setPath] = useState('');
  const add = useStore((s) => s.addModelPath);
  const go = async (kind: 'folder' | 'file') => {
    if (path.trim() && (await add(kind, path.trim()))) setPath('');
  };
  return (
    <div className="row" style={{ gap: 8, flexWrap: 'wrap' }}>
      <label className="field" style={{ flex: 1, minWidth: 260 }}>
        <span>Add a folder or a GGUF file (referenced in place, never copied)</span>
        <input
          type="text"
          value={path}
          placeholder="/path/to/models or /path/to/model.gguf"
          spellCheck={false}
          data-testid="add-path"
          onChange={(e) => setPath(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') void go(path.trim().toLowerCase().endsWith('.gguf') ? 'file' : 'folder');
          }}
        />
      </label>
      <button className="btn" disabled={!path.trim()} onClick={() => void go('folder')} data-testid="add-folder">
        Add folder
      </button>
      <button className="btn" disabled={!path.trim()} onClick={() => void go('file')} data-testid="add-file">
        Add file
      </button>
    </div>
  );
}

function LibraryCard() {
  const library = useStore((s) => s.library);
  const loading = useStore((s) => s.libraryLoading);
  const error = useStore((s) => s.libraryError);
  const remove = useStore((s) => s.removeModelPath);
  const models: ModelEntry[] = library?.models ?? [];
  return (
    <div className="card">
      <div className="card-head">
        <h2>Library</h2>
        <span className="sub">
          {library ? `${models.length} model${models.length === 1 ? '' : 's'}${library.invalid.length ? `, ${library.invalid.length} unusable` : ''} · default folder ${library.defaultDir}` : loading ? 'scanning…' : ''}
        </span>
      </div>
      <ErrorBanner message={error} />
      <AddPath />
      {library && (library.folders.length > 0 || library.files.length > 0) && (
        <div className="row" style={{ gap: 6, flexWrap: 'wrap', marginTop: 8 }}>
          <span className="muted small">Added:</span>
          {[...library.folders, ...library.files].map((p) => (
            <span className="tag" key={p}>
              {p}
              <button className="btn ghost xs" aria-label={`Remove ${p} from the library`} onClick={() => void remove(p)}>
                ✕
              </button>
            </span>
          ))}
        </div>
      )}
      <LibraryTable models={models} loading={loading} />
      {library && library.invalid.length > 0 && <UnusableFiles invalid={library.invalid} />}
    </div>
  );
}

function DownloadProgress({ d }: { d: DownloadState }) {
  const cancel = useStore((s) => s.cancelDownload);
  const dismiss = useStore((s) => s.dismissDownload);
  const active = d.status === 'queued' || d.status === 'downloading' || d.status === 'verifying';
  const frac = d.total ? d.bytes / d.total : 0;
  return (
    <div className="stack" style={{ gap: 4 }} data-testid="download-row" data-status={d.status}>
      <div className="row" style={{ gap: 8, justifyContent: 'space-between' }}>
        <span className="small">
          <strong>
            <BreakableName text={d.fileName || d.source} />
          </strong>{' '}
          <span className={d.status === 'done' ? 'chip ok' : d.status === 'error' ? 'chip bad' : d.status === 'cancelled' ? 'chip' : 'chip run'}>{d.status}</span>
        </span>
        {active ? (
          <button className="btn ghost small" onClick={() => void cancel(d.id)}>
            Cancel
          </button>
        ) : d.status !== 'done' ? (
          <button className="btn ghost small" onClick={() => void dismiss(d.id)} aria-label={`Dismiss the download of ${d.fileName || d.source}`} data-testid="download-dismiss">
            Dismiss
          </button>
        ) : null}
      </div>
      {d.status !== 'error' && <ProgressBar value={d.status === 'done' ? 1 : frac} label={`Download of ${d.fileName || d.source}`} />}
      <span className="muted small" data-testid="download-stats">
        {d.status === 'error'
          ? d.error
          : d.status === 'cancelled'
            ? `cancelled at ${formatBytes(d.bytes)}${d.total ? ` of ${formatBytes(d.total)}` : ''}; the partial file is kept for resuming`
          : d.status === 'done'
            ? `${formatBytes(d.bytes)} · verified · ${d.dest}`
            : `${formatBytes(d.bytes)}${d.total ? ` of ${formatBytes(d.total)}` : ''} · ${formatBytes(d.rate)}/s · ETA ${d.etaSeconds === null ? '…' : duration(d.etaSeconds * 1000)}${d.resumedFrom > 0 ? ` · resumed at ${formatBytes(d.resumedFrom)}` : ''}`}
      </span>
    </div>
  );
}

function CatalogCard() {
  const catalog = useStore((s) => s.catalog);
  const downloads = useStore((s) => s.downloads);
  const start = useStore((s) => s.startDownload);
  const [source, setSource] = useState('');
  const catalogIds = new Set(catalog.map((c) => c.id));
  const library = useStore((s) => s.library);
  const busySources = new Set(
    Object.values(downloads)
      .filter((d) => d.status === 'queued' || d.status === 'downloading' || d.status === 'verifying')
      .map((d) => d.source),
  );
  const partials = (library?.partials ?? []).filter((p) => !busySources.has(p.source));
  const others = Object.values(downloads)
    .filter((d) => !catalogIds.has(d.source))
    .sort((a, b) => b.startedAt - a.startedAt);
  return (
    <div className="card">
      <div className="card-head">
        <h2>Download</h2>
        <span className="sub">resumable; size and GGUF header verified before the file appears in the library</span>
      </div>
      <div className="row" style={{ gap: 8, flexWrap: 'wrap' }}>
        <label className="field" style={{ flex: 1, minWidth: 260 }}>
          <span>hf: URI or https URL</span>
          <input
            type="text"
            value={source}
            placeholder="hf:user/repo/file.gguf, hf:user/repo:Q4_K_M or https://…/model.gguf"
            spellCheck={false}
            data-testid="download-input"
            onChange={(e) => setSource(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && source.trim()) void start(source.trim()).then((s) => s && setSource(''));
            }}
          />
        </label>
        <button className="btn primary" disabled={!source.trim()} data-testid="download-button" onClick={() => void start(source.trim()).then((s) => s && setSource(''))}>
          Download
        </button>
      </div>
      {partials.length > 0 && <PartialDownloads partials={partials} />}
      {others.length > 0 && (
        <div className="stack" style={{ gap: 12, marginTop: 12 }}>
          {others.map((d) => (
            <DownloadProgress key={d.id} d={d} />
          ))}
        </div>
      )}
      <CatalogList />
    </div>
  );
}

/** The library's models as a table: facts, fit and path, or how to get one when there is none. */
function LibraryTable({ models, loading }: { models: ModelEntry[]; loading: boolean }) {
  return (
    <TableWrap label="Models in the library" style={{ marginTop: 12 }}>
      <table className="data" data-testid="library-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Arch</th>
            <th className="num">Params</th>
            <th>Quant</th>
            <th className="num">Size</th>
            <th className="num">Context</th>
            <th>Template</th>
            <th>Fit</th>
            <th>Path</th>
          </tr>
        </thead>
        <tbody>
          {models.length === 0 && (
            <tr>
              <td colSpan={9} className="muted">
                {loading ? (
                  'Scanning…'
                ) : (
                  <>
                    No models yet: <JumpTo target='[data-testid="catalog"]'>download one from the catalog</JumpTo>, add a file or folder above, or <JumpTo target='[data-testid="remote-card"]'>connect a server</JumpTo>.
                  </>
                )}
              </td>
            </tr>
          )}
          {models.map((m) => (
            <tr key={m.path} data-testid="model-row">
              <td>
                <strong>{m.name}</strong>
              </td>
              <td>{m.architecture}</td>
              <td className="num">{formatParams(m.parameters)}</td>
              <td>{m.quantization ?? '–'}</td>
              <td className="num">{formatBytes(m.sizeBytes)}</td>
              <td className="num">{m.contextLength?.toLocaleString('en-US') ?? '–'}</td>
              <td>{m.hasChatTemplate ? 'yes' : <span className="muted">no</span>}</td>
              <td>
                <FitBadge path={m.path} />
              </td>
              <td className="muted small" title={m.path}>
                <BreakableName text={m.path} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

/** Files in the library's folders that could not be read as models, and why. */
function UnusableFiles({ invalid }: { invalid: LibraryListing['invalid'] }) {
  return (
    <>
    <>
      <h3 className="section-label" style={{ marginTop: 16 }}>
        Unusable files
      </h3>
      <TableWrap label="Unusable files">
        <table className="data" data-testid="invalid-models">
          <thead>
            <tr>
              <th>File</th>
              <th>Why</th>
            </tr>
          </thead>
          <tbody>
            {invalid.map((i) => (
              <tr key={i.path} data-testid="invalid-row" data-code={i.code}>
                <td>
                  <BreakableName text={i.path} />
                </td>
                <td>
                  <span className="chip bad">{i.code.replace('_', ' ')}</span> {i.reason}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </>
    </>
  );
}

/** Downloads stopped part-way (their bytes kept on disk), each with a Resume. */
function PartialDownloads({ partials }: { partials: LibraryListing['partials'] }) {
  const start = useStore((s) => s.startDownload);
  return (
      <div className="stack" style={{ gap: 6, marginTop: 12 }} data-testid="partial-downloads">
        <span className="section-label">Unfinished downloads</span>
        {partials.map((p) => (
          <div className="row" key={p.path} style={{ gap: 8, justifyContent: 'space-between' }} data-testid="partial-row">
            <span className="small">
              <strong>{p.path.split(/[\\/]/).pop()}</strong>{' '}
              <span className="muted">
                {formatBytes(p.bytes)}
                {p.total ? ` of ${formatBytes(p.total)}` : ''} · from {p.source}
              </span>
            </span>
            <button className="btn small" onClick={() => void start(p.source, p.path.replace(/[\\/][^\\/]*$/, ''))}>
              Resume
            </button>
          </div>
        ))}
      </div>
  );
}

/** The catalog's models, each with its fit here, its download button and its download's progress. */
function CatalogList() {
  const catalog = useStore((s) => s.catalog);
  const downloads = useStore((s) => s.downloads);
  const start = useStore((s) => s.startDownload);
  const latestFor = (src: string) =>
    Object.values(downloads)
      .filter((d) => d.source === src)
      .sort((a, b) => b.startedAt - a.startedAt)[0];
  return (
    <>
      <h3 className="section-label" style={{ marginTop: 16 }}>
        Catalog
      </h3>
      <div className="list" data-testid="catalog">
        {catalog.map((c) => {
          const d = latestFor(c.id);
          const busy = d && (d.status === 'queued' || d.status === 'downloading' || d.status === 'verifying');
          return (
            <div className="list-item" key={c.id} data-testid="catalog-row">
              <div className="row" style={{ justifyContent: 'space-between', gap: 8, flexWrap: 'nowrap' }}>
                <div className="stack" style={{ gap: 2, flex: 1, minWidth: 0 }}>
                  <strong className="row" style={{ gap: 6 }}>
                    {c.name} {c.paper && <span className="chip">paper</span>}
                    {c.recommended ? <span className="chip run">recommended here</span> : null}
                    <span className={c.fit.fits ? 'chip ok' : 'chip bad'} title={`needs about ${formatBytes(c.fit.needBytes)}; ${formatBytes(c.fit.freeBytes)} free ${c.fit.where === 'gpu' ? 'VRAM' : 'RAM'}`} data-testid="catalog-fit">
                      {c.fit.fits ? `fits ${c.fit.where === 'gpu' ? 'on the GPU' : 'in RAM'}` : "won't fit"} · {formatBytes(c.fit.needBytes)}
                    </span>
                  </strong>
                  <span className="muted small">
                    {c.parameters} · {c.quantization} · ~{formatBytes(c.sizeBytes)} · context {c.contextLength.toLocaleString('en-US')} · {c.note}
                  </span>
                </div>
                <button className="btn" disabled={busy || d?.status === 'done'} onClick={() => void start(c.id)}>
                  {/* "Resume" only when bytes are on disk to resume from; a download that never started is tried again. */}
                  {d?.status === 'done' ? 'Downloaded' : busy ? 'Downloading…' : (d?.status === 'cancelled' || d?.status === 'error') && d.bytes > 0 ? 'Resume' : d?.status === 'error' ? 'Try again' : 'Download'}
                </button>
              </div>
              {d && <DownloadProgress d={d} />}
            </div>
          );
        })}
      </div>
    </>
  );
}

export function ModelsView() {
  const loadLibrary = useStore((s) => s.loadLibrary);
  const loadHardware = useStore((s) => s.loadHardware);
  const loadCatalog = useStore((s) => s.loadCatalog);
  const loadDownloads = useStore((s) => s.loadDownloads);
  useEffect(() => {
    void loadLibrary();
    void loadHardware();
    void loadCatalog();
    void loadDownloads();
  }, [loadLibrary, loadHardware, loadCatalog, loadDownloads]);
  return (
    <div className="page">
      <div className="page-head">
        <h1>Models</h1>
        <span className="spacer" />
        <button className="btn ghost" onClick={() => void loadLibrary()} data-testid="rescan">
          Rescan
        </button>
      </div>
      <Welcome />
      <HardwareCard />
      <LibraryCard />
      <RemoteModelsCard />
      <CatalogCard />
    </div>
  );
}
