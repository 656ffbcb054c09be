// The first step, where there is no model yet (a fresh install): download the catalog model that
// fits this machine best (its fit shown), add a GGUF file or folder already on disk, or connect a
// server. The first model that arrives becomes the generator and evaluator everywhere (the host
// does that: api/handlers/settings.ts adoptFirstModel), so the form behind this card is ready.
import { useEffect, useState } from 'react';
import { formatBytes } from '../../../electron/common/bytes';
import { useStore } from '../store';
import { ProgressBar } from './Common';
import { duration } from './labels';

/** Whether there is no model at all yet: none in the library, no remote one, none chosen. Null while unknown. */
export function useNoModelYet(): boolean | null {
  const library = useStore((s) => s.library);
  const remotes = useStore((s) => s.remoteModels);
  const settings = useStore((s) => s.settings);
  const loadLibrary = useStore((s) => s.loadLibrary);
  const loadRemotes = useStore((s) => s.loadRemoteModels);
  useEffect(() => {
    if (!library) void loadLibrary();
    if (!remotes) void loadRemotes(false);
  }, [library, remotes, loadLibrary, loadRemotes]);
  if (!library || !remotes || !settings) return null;
  return library.models.length === 0 && remotes.length === 0 && !settings.generator;
}

function DownloadOffer() {
  const catalog = useStore((s) => s.catalog);
  const downloads = useStore((s) => s.downloads);
  const loadCatalog = useStore((s) => s.loadCatalog);
  const start = useStore((s) => s.startDownload);
  const navigate = useStore((s) => s.navigate);
  useEffect(() => {
    if (catalog.length === 0) void loadCatalog();
  }, [catalog.length, loadCatalog]);
  const pick = catalog.find((c) => c.recommended) ?? null;
  const d = pick ? Object.values(downloads).filter((x) => x.source === pick.id).sort((a, b) => b.startedAt - a.startedAt)[0] : undefined;
  const busy = d && (d.status === 'queued' || d.status === 'downloading' || d.status === 'verifying');
  return (
    <div className="welcome-option" data-testid="welcome-download">
      <h3>Download a model</h3>
      {pick ? (
        <>
          <p>
            <strong>{pick.name}</strong> <span className="muted small">· {pick.parameters} · {pick.quantization} · {formatBytes(pick.sizeBytes)}</span>
          </p>
          <p className="small" data-testid="welcome-fit">
            <span className="chip ok">fits {pick.fit.where === 'gpu' ? 'on the GPU' : 'in RAM'}</span> needs about {formatBytes(pick.fit.needBytes)} of {formatBytes(pick.fit.freeBytes)} free. {pick.note}
          </p>
          {d && d.status !== 'cancelled' ? (
            <div className="stack" style={{ gap: 4 }}>
              {d.status !== 'error' ? <ProgressBar value={d.status === 'done' ? 1 : d.total ? d.bytes / d.total : 0} label={`Download of ${pick.name}`} /> : null}
              <span className={d.status === 'error' ? 'small bad-text' : 'muted small'}>
                {d.status === 'error' ? `The download failed: ${d.error}` : d.status === 'done' ? 'Downloaded and verified.' : `${formatBytes(d.bytes)}${d.total ? ` of ${formatBytes(d.total)}` : ''}${d.etaSeconds !== null ? ` · about ${duration(d.etaSeconds * 1000)} left` : ''}`}
              </span>
            </div>
          ) : null}
          <div className="row">
            <button className="btn primary" disabled={busy} onClick={() => void start(pick.id)} data-testid="welcome-download-button">
              {busy ? 'Downloading…' : d?.status === 'error' ? 'Try again' : `Download ${pick.name}`}
            </button>
            <a
              href="#/models"
              className="small"
              onClick={(e) => {
                e.preventDefault();
                navigate({ view: 'models' });
              }}
            >
              other models
            </a>
          </div>
        </>
      ) : (
        <p className="muted small">{catalog.length === 0 ? 'Reading the catalog…' : 'No catalog model fits the free memory of this machine; add a smaller GGUF you have, or use a server.'}</p>
      )}
    </div>
  );
}

function AddExisting() {
  const add = useStore((s) => s.addModelPath);
  const [path, setPath] = useState('');
  const go = async () => {
    const p = path.trim();
    if (p && (await add(p.toLowerCase().endsWith('.gguf') ? 'file' : 'folder', p))) setPath('');
  };
  return (
    <form
      className="welcome-option"
      data-testid="welcome-add"
      onSubmit={(e) => {
        e.preventDefault();
        void go();
      }}
    >
      <h3>Use a model you have</h3>
      <label className="field">
        <span>A GGUF file or a folder of them, on the machine running TATRA</span>
        <input type="text" value={path} onChange={(e) => setPath(e.target.value)} placeholder="/models/qwen2.5-1.5b-instruct-q4_k_m.gguf" spellCheck={false} data-testid="welcome-path" />
      </label>
      <div className="row">
        <button className="btn" type="submit" disabled={!path.trim()} data-testid="welcome-add-button">
          Add
        </button>
        <span className="muted small">Referenced where it is, never copied.</span>
      </div>
    </form>
  );
}

function ConnectServer() {
  const navigate = useStore((s) => s.navigate);
  return (
    <div className="welcome-option" data-testid="welcome-server">
      <h3>Connect a server</h3>
      <p className="small muted">An OpenAI-compatible server you run: vLLM, llama-server, Ollama, LM Studio.</p>
      <div>
        <a
          className="btn"
          href="#/models"
          onClick={(e) => {
            e.preventDefault();
            navigate({ view: 'models' });
            // The remote form is further down the Models page.
            requestAnimationFrame(() => document.querySelector('[data-testid="remote-card"]')?.scrollIntoView({ block: 'start' }));
          }}
        >
          Add a server…
        </a>
      </div>
    </div>
  );
}

/** The welcome card, shown only while there is no model at all. */
export function Welcome() {
  const none = useNoModelYet();
  if (!none) return null;
  return (
    <section className="card welcome" aria-labelledby="welcome-title" data-testid="welcome">
      <div>
        <h2 id="welcome-title">Get a model to start</h2>
        <p className="muted">TATRA asks a language model to write examples and paraphrases and to vote on the labels. The first model you add is chosen for every form.</p>
      </div>
      <div className="welcome-options">
        <DownloadOffer />
        <AddExisting />
        <ConnectServer />
      </div>
    </section>
  );
}
