// Remote model specs (`openai+http://…#MODEL`, `remote:NAME`; parsed in common/model-spec.ts,
// test/unit/common/model-spec.test.ts) as backend options, the library's remote entries and
// the keys typed into the app: kept server-side in a 0600 file (or encrypted by the desktop app's
// safeStorage), never in a listing, and resolved to backend options only where they are sent.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseModelSpec, type RemoteModelSpec } from '../../../electron/common/model-spec';
import { RemoteLibrary } from '../../../electron/models/remote-library';
import { remoteBackendOptions } from '../../../electron/remote';

const remote = (text: string) => parseModelSpec(text) as RemoteModelSpec;

describe('remote library and keys', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tatra-remote-lib-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps entries; a typed key goes to a 0600 file and never into the entries or their listing', async () => {
    const lib = new RemoteLibrary(dir);
    const entry = await lib.add({ name: 'a100', urls: ['http://gpu1:8000/v1/', 'http://gpu2:8000/v1'], model: 'qwen', key: 'sk-typed-secret' });
    expect(entry).toEqual({ name: 'a100', urls: ['http://gpu1:8000/v1', 'http://gpu2:8000/v1'], model: 'qwen', keyStored: true });
    expect(JSON.stringify(await lib.list())).not.toContain('sk-typed-secret');
    expect(await readFile(join(dir, 'remote-models.json'), 'utf8')).not.toContain('sk-typed-secret');
    expect((await stat(join(dir, 'remote-keys.json'))).mode & 0o777).toBe(0o600);
    expect(await lib.storedKey('a100')).toBe('sk-typed-secret');
    const opts = await remoteBackendOptions(remote('remote:a100'), { lookup: lib });
    expect(opts).toMatchObject({ urls: ['http://gpu1:8000/v1', 'http://gpu2:8000/v1'], model: 'qwen', name: 'a100', key: 'sk-typed-secret', keyStored: true });
    await lib.remove('a100');
    expect(await lib.storedKey('a100')).toBeUndefined();
  });

  it('an entry keeps its requests in flight, and a job\'s record carries them to a resume', async () => {
    const lib = new RemoteLibrary(dir);
    expect(await lib.add({ name: 'big', urls: ['http://gpu1:8000/v1'], model: 'qwen', maxInFlight: 512 })).toEqual({ name: 'big', urls: ['http://gpu1:8000/v1'], model: 'qwen', maxInFlight: 512 });
    expect(await remoteBackendOptions(remote('remote:big'), { lookup: lib })).toMatchObject({ maxInFlight: 512 });
    expect(await remoteBackendOptions(remote('openai+http://gpu1:8000/v1#qwen?inflight=300'))).toMatchObject({ urls: ['http://gpu1:8000/v1'], model: 'qwen', maxInFlight: 300 });
    const ref = { urls: ['http://gpu1:8000/v1'], model: 'qwen', kind: 'vllm' as const, version: '0.12.0', constrained: 'structured-outputs' as const, maxInFlight: 300 };
    expect(await remoteBackendOptions(remote('remote:gone'), { ref })).toMatchObject({ maxInFlight: 300 });
    await expect(lib.add({ name: 'bad', urls: ['http://gpu1:8000/v1'], model: 'qwen', maxInFlight: 0 })).rejects.toThrow('requests in flight must be a whole number from 1 to 4096 (got 0)');
  });

  it('with a protection (safeStorage in Electron) the stored key is encrypted at rest', async () => {
    const protect = { encrypt: (s: string) => Buffer.from(s).toString('base64'), decrypt: (s: string) => Buffer.from(s, 'base64').toString() };
    const lib = new RemoteLibrary(dir, protect);
    await lib.add({ name: 'oa', urls: ['https://api.openai.com/v1'], model: 'gpt-4o-mini', key: 'sk-enc-secret' });
    expect(await readFile(join(dir, 'remote-keys.json'), 'utf8')).not.toContain('sk-enc-secret');
    expect(await lib.storedKey('oa')).toBe('sk-enc-secret');
  });

  it('a key from the environment variable an entry names; one line when it is not set or the entry is unknown', async () => {
    const lib = new RemoteLibrary(dir);
    await lib.add({ name: 'v', urls: ['http://gpu1:8000/v1'], model: 'qwen', keyEnv: 'VLLM_KEY' });
    expect(await remoteBackendOptions(remote('remote:v'), { lookup: lib, env: { VLLM_KEY: 'k1' } })).toMatchObject({ key: 'k1', keyEnv: 'VLLM_KEY' });
    await expect(remoteBackendOptions(remote('remote:v'), { lookup: lib, env: {} })).rejects.toThrow('$VLLM_KEY is not set; it should hold the API key of remote:v');
    await expect(remoteBackendOptions(remote('remote:nope'), { lookup: lib })).rejects.toThrow('no remote model "nope" in the library (there are: remote:v)');
    // A recorded ref reconnects to the recorded endpoints whatever the entry says now.
    await lib.add({ name: 'v', urls: ['http://elsewhere:9000/v1'], model: 'qwen', keyEnv: 'VLLM_KEY' });
    const ref = { name: 'v', urls: ['http://gpu1:8000/v1'], model: 'qwen', keyEnv: 'VLLM_KEY', kind: 'vllm' as const, version: '0.12.0', constrained: 'structured-outputs' as const };
    expect(await remoteBackendOptions(remote('remote:v'), { lookup: lib, ref, env: { VLLM_KEY: 'k1' } })).toMatchObject({ urls: ['http://gpu1:8000/v1'], kind: 'vllm', constrained: 'structured-outputs' });
  });
});
