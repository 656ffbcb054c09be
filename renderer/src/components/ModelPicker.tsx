// Pick a model for a role: the library's GGUFs (models.list) and remote models (models.remote.list,
// as remote:NAME) as suggestions; any path or openai+http://HOST:PORT/v1#MODEL typed.
import { useEffect, useId, useState } from 'react';
import { formatBytes } from '../../../electron/common/bytes';
import { getApi } from '../api/client';
import { useStore } from '../store';

interface Known {
  path: string;
  name: string;
  detail: string;
}

let cache: Promise<Known[]> | null = null;
let cacheVersion = -1;

function loadModels(version: number): Promise<Known[]> {
  if (cache && cacheVersion === version) return cache;
  cacheVersion = version;
  const api = getApi();
  const local = api
    .call('models.list', {})
    .then((l) =>
      l.models.map((m) => ({
        path: m.path,
        name: m.name,
        detail: [m.architecture, m.quantization, formatBytes(m.sizeBytes)].filter(Boolean).join(' · '),
      })),
    )
    // Without the model library (or with an error) a typed path still works.
    .catch(() => []);
  const remote = api
    .call('models.remote.list', { probe: false })
    .then((l) =>
      l.map((r) => ({
        path: `remote:${r.entry.name}`,
        name: `remote:${r.entry.name}`,
        detail: `${r.entry.model} · ${r.entry.urls.length} endpoint${r.entry.urls.length === 1 ? '' : 's'}`,
      })),
    )
    .catch(() => []);
  cache = Promise.all([local, remote]).then(([a, b]) => [...a, ...b]);
  return cache;
}

export function ModelPicker(props: { label: string; value: string; onChange(path: string): void; testId?: string; error?: string | null }) {
  const version = useStore((s) => s.modelsVersion);
  const [models, setModels] = useState<Known[]>([]);
  const id = useId();
  useEffect(() => {
    let live = true;
    void loadModels(version).then((m) => live && setModels(m));
    return () => {
      live = false;
    };
  }, [version]);
  const known = models.find((m) => m.path === props.value);
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        type="text"
        list={`${id}-models`}
        placeholder="/path/to/model.gguf or remote:NAME"
        value={props.value}
        spellCheck={false}
        data-testid={props.testId}
        onChange={(e) => props.onChange(e.target.value)}
      />
      <datalist id={`${id}-models`}>
        {models.map((m) => (
          <option key={m.path} value={m.path}>
            {m.name} — {m.detail}
          </option>
        ))}
      </datalist>
      {props.error ? <span className="field-error">{props.error}</span> : null}
      <span className="field-hint">{known ? `${known.name} · ${known.detail}` : models.length > 0 ? `${models.length} models in the library; or type a path or remote:NAME` : 'path of a GGUF file on the machine running TATRA, or remote:NAME'}</span>
    </label>
  );
}
