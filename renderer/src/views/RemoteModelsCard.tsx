// Remote models: OpenAI-compatible servers (vLLM, llama-server, Ollama, LM Studio, OpenAI) used as
// `remote:NAME` wherever a model is chosen. Adding one probes the servers first and shows what they
// are (kind, version, models, constrained output, context length). A key typed here goes to the
// host, which keeps it (Electron: OS keychain; browser mode: a server-side 0600 file); it is never
// sent back to the page.
import { useEffect, useState } from 'react';
import type { EndpointHealth } from '../../../electron/common/contract/models';
import { MAX_IN_FLIGHT } from '../../../electron/common/remote';
import { useStore } from '../store';

const CONSTRAINED: Record<string, string> = {
  gbnf: 'GBNF grammar',
  'structured-outputs': 'structured_outputs',
  guided: 'guided_* (vLLM < 0.12)',
  'ollama-format': 'format (JSON schema, labels)',
  'json-schema': 'response_format (JSON schema, labels)',
  none: 'none: outputs parsed and validated',
};

/** One endpoint: up; answering but not serving the model (a wrong id, not a dead server); or down. */
function EndpointLine({ e, onPickModel }: { e: EndpointHealth; onPickModel?: (id: string) => void }) {
  const p = e.probe;
  return (
    <div className="stack" style={{ gap: 2 }} data-testid="remote-endpoint">
      <span className="row small" style={{ gap: 6 }}>
        <span className={e.up ? 'chip ok' : e.answers ? 'chip warn' : 'chip bad'} data-testid="remote-health">
          {e.up ? 'up' : e.answers ? 'up · model not served' : 'down'}
        </span>
        <code>{e.url}</code>
      </span>
      {p && (
        <span className="muted small" data-testid="remote-probe">
          {p.kind}
          {p.version ? ` ${p.version}` : ''} · constrained output: {CONSTRAINED[p.constrained] ?? p.constrained} · context {p.contextLength?.toLocaleString('en-US') ?? 'unknown'}
          {p.slots ? ` · ${p.slots} slots` : ''}
        </span>
      )}
      {p && p.models.length > 0 ? (
        <span className="row small" style={{ gap: 4 }} data-testid="remote-served">
          <span className="muted">serves:</span>
          {onPickModel
            ? p.models.slice(0, 12).map((id) => (
                <button key={id} type="button" className="btn small" onClick={() => onPickModel(id)} title={`Use ${id}`} data-testid="remote-served-model">
                  {id}
                </button>
              ))
            : p.models.slice(0, 12).map((id) => (
                <code key={id} className="tag">
                  {id}
                </code>
              ))}
          {p.models.length > 12 ? <span className="muted">(+{p.models.length - 12})</span> : null}
        </span>
      ) : null}
      {e.error && <span className={e.answers ? 'small field-warn' : 'small bad-text'}>{e.error}</span>}
    </div>
  );
}

/** Requests in flight per server: blank for what the server's kind takes, else a whole number in range. */
function InFlightField({ value, bad, onChange }: { value: string; bad: boolean; onChange(v: string): void }) {
  return (
    <label className="field" style={{ flex: 1, minWidth: 140 }}>
      <span>Requests in flight per server</span>
      <input
        type="number"
        min={MAX_IN_FLIGHT.min}
        max={MAX_IN_FLIGHT.max}
        step={1}
        value={value}
        placeholder="auto"
        aria-invalid={bad}
        data-testid="remote-in-flight"
        onChange={(e) => onChange(e.target.value)}
      />
      {bad ? (
        <span className="small bad-text">a whole number from {MAX_IN_FLIGHT.min} to {MAX_IN_FLIGHT.max}</span>
      ) : (
        <span className="field-hint">blank: vLLM 256, llama-server 2 × its slots, others 8</span>
      )}
    </label>
  );
}

/** What a probe found: its error, or each endpoint's line (with the model ids it serves, to pick). */
function ProbeFound({ found, onPickModel }: { found: EndpointHealth[] | { error: string } | null; onPickModel(id: string): void }) {
  if (!found) return null;
  if ('error' in found) return <span className="small bad-text">{found.error}</span>;
  return (
    <div className="stack" style={{ gap: 6 }} data-testid="remote-probe-result">
      {found.map((e) => (
        <EndpointLine key={e.url} e={e} onPickModel={onPickModel} />
      ))}
    </div>
  );
}

function AddRemote() {
  const probe = useStore((s) => s.probeRemote);
  const add = useStore((s) => s.addRemoteModel);
  const [name, setName] = useState('');
  const [urls, setUrls] = useState('');
  const [model, setModel] = useState('');
  const [keyEnv, setKeyEnv] = useState('');
  const [key, setKey] = useState('');
  const [inFlight, setInFlight] = useState('');
  const [found, setFound] = useState<EndpointHealth[] | { error: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const input = () => ({
    urls: urls
      .split(/[\s,]+/)
      .map((u) => u.trim())
      .filter(Boolean),
    model: model.trim(),
    ...(keyEnv.trim() ? { keyEnv: keyEnv.trim() } : {}),
    ...(key ? { key } : {}),
  });
  // Blank: what the server's kind takes (llama-server twice its slots, vLLM 256, others 8).
  const maxInFlight = inFlight.trim() === '' ? undefined : Number(inFlight);
  const inFlightBad = maxInFlight !== undefined && !(Number.isInteger(maxInFlight) && maxInFlight >= MAX_IN_FLIGHT.min && maxInFlight <= MAX_IN_FLIGHT.max);
  // A server can be probed before a model id is known: the probe lists the ids it serves.
  const canProbe = urls.trim() !== '' && !busy;
  const ready = canProbe && model.trim() !== '';
  const pickModel = (id: string) => {
    setModel(id);
    if (!name.trim()) setName(id.split('/').pop()!.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').slice(0, 40));
  };
  return (
    <div className="stack" style={{ gap: 8 }} data-testid="add-remote">
      <div className="row" style={{ gap: 8, flexWrap: 'wrap' }}>
        <label className="field" style={{ flex: 2, minWidth: 260 }}>
          <span>Server URL(s): the OpenAI API root; several are replicas of one model</span>
          <input type="text" value={urls} placeholder="http://gpu1:8000/v1 http://gpu2:8000/v1" spellCheck={false} data-testid="remote-urls" onChange={(e) => setUrls(e.target.value)} />
        </label>
        <label className="field" style={{ flex: 1, minWidth: 160 }}>
          <span>Model id on the server (Probe lists them)</span>
          <input type="text" value={model} placeholder="Qwen/Qwen2.5-7B-Instruct" spellCheck={false} data-testid="remote-model" onChange={(e) => setModel(e.target.value)} />
        </label>
      </div>
      <div className="row" style={{ gap: 8, flexWrap: 'wrap' }}>
        <label className="field" style={{ flex: 1, minWidth: 140 }}>
          <span>Name (used as remote:NAME)</span>
          <input type="text" value={name} placeholder="vllm-a100" spellCheck={false} data-testid="remote-name" onChange={(e) => setName(e.target.value)} />
        </label>
        <label className="field" style={{ flex: 1, minWidth: 140 }}>
          <span>Key from environment variable</span>
          <input type="text" value={keyEnv} placeholder="VLLM_API_KEY" spellCheck={false} disabled={key !== ''} onChange={(e) => setKeyEnv(e.target.value)} />
        </label>
        <label className="field" style={{ flex: 1, minWidth: 140 }}>
          <span>or type the key (kept by the app, never shown)</span>
          <input type="password" value={key} autoComplete="off" disabled={keyEnv !== ''} data-testid="remote-key" onChange={(e) => setKey(e.target.value)} />
        </label>
        <InFlightField value={inFlight} bad={inFlightBad} onChange={setInFlight} />
      </div>
      <div className="row" style={{ gap: 8 }}>
        <button
          className="btn"
          disabled={!canProbe}
          data-testid="remote-probe-btn"
          onClick={async () => {
            setBusy(true);
            setFound(await probe(input()));
            setBusy(false);
          }}
        >
          {busy ? 'Probing…' : 'Probe'}
        </button>
        <button
          className="btn primary"
          disabled={!ready || name.trim() === '' || inFlightBad}
          data-testid="remote-add-btn"
          onClick={async () => {
            setBusy(true);
            const ok = await add({ ...input(), name: name.trim(), ...(maxInFlight !== undefined ? { maxInFlight } : {}) });
            setBusy(false);
            if (ok) {
              setName('');
              setUrls('');
              setModel('');
              setKey('');
              setKeyEnv('');
              setInFlight('');
              setFound(null);
            }
          }}
        >
          Add remote model
        </button>
      </div>
      <ProbeFound found={found} onPickModel={pickModel} />
    </div>
  );
}

export function RemoteModelsCard() {
  const remotes = useStore((s) => s.remoteModels);
  const load = useStore((s) => s.loadRemoteModels);
  const remove = useStore((s) => s.removeRemoteModel);
  useEffect(() => {
    void load(true);
  }, [load]);
  return (
    <div className="card" data-testid="remote-card">
      <div className="card-head">
        <h2>Remote models</h2>
        <span className="sub">OpenAI-compatible servers: vLLM, llama-server, Ollama, LM Studio, OpenAI</span>
        <span className="spacer" />
        <button className="btn ghost small" onClick={() => void load(true)} data-testid="remote-refresh">
          Check health
        </button>
      </div>
      <div className="list" data-testid="remote-list">
        {remotes?.length === 0 && <span className="muted small">None yet. Add one below; it can then be picked in Classify, Evaluate and Compare as remote:NAME.</span>}
        {remotes?.map((r) => (
          <div className="list-item" key={r.entry.name} data-testid="remote-row">
            <div className="row" style={{ justifyContent: 'space-between', gap: 8 }}>
              <div className="stack" style={{ gap: 4 }}>
                <strong>
                  remote:{r.entry.name} <span className="muted small">{r.entry.model}</span>
                  {r.entry.keyEnv && <span className="chip">key: ${r.entry.keyEnv}</span>}
                  {r.entry.keyStored && <span className="chip">key kept</span>}
                  {r.entry.maxInFlight && <span className="chip">{r.entry.maxInFlight} in flight</span>}
                </strong>
                {r.endpoints
                  ? r.endpoints.map((e) => <EndpointLine key={e.url} e={e} />)
                  : r.entry.urls.map((u) => (
                      <code key={u} className="small">
                        {u}
                      </code>
                    ))}
              </div>
              <button className="btn ghost small" onClick={() => void remove(r.entry.name)}>
                Remove
              </button>
            </div>
          </div>
        ))}
      </div>
      <h3 className="small muted" style={{ marginTop: 12 }}>
        Add a remote model
      </h3>
      <AddRemote />
    </div>
  );
}
