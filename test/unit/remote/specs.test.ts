// Remote model specs (`openai+http://…#MODEL`, `remote:NAME`), the library's remote entries and
// the keys typed into the app: kept server-side in a 0600 file (or encrypted by the desktop app's
// safeStorage), never in a listing, and resolved to backend options only where they are sent.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { modelLabel } from '../../../electron/common/contract/models';
import { isRemoteSpec, parseRemoteSpec } from '../../../electron/common/remote';
import { RemoteLibrary } from '../../../electron/models/remote-library';
import { remoteBackendOptions } from '../../../electron/remote';

describe('remote specs', () => {
  it('parses inline and library specs and tells them from GGUF paths', () => {
    expect(parseRemoteSpec('openai+http://gpu1:8000/v1#Qwen/Qwen2.5-7B-Instruct')).toEqual({ type: 'inline', url: 'http://gpu1:8000/v1', model: 'Qwen/Qwen2.5-7B-Instruct' });
    expect(parseRemoteSpec('openai+https://api.openai.com/v1/#gpt-4o-mini')).toEqual({ type: 'inline', url: 'https://api.openai.com/v1', model: 'gpt-4o-mini' });
    expect(parseRemoteSpec('remote:vllm-a100')).toEqual({ type: 'library', name: 'vllm-a100' });
    expect(isRemoteSpec('models/qwen.gguf')).toBe(false);
    expect(isRemoteSpec('remote:x')).toBe(true);
    expect(modelLabel('openai+http://gpu1:8000/v1#qwen')).toBe('qwen@gpu1:8000');
    expect(modelLabel('remote:big')).toBe('remote:big');
    expect(modelLabel('/m/qwen2.5-7b-q4_k_m.gguf')).toBe('qwen2.5-7b-q4_k_m');
  });

  it('refuses malformed specs with one line saying the expected form', () => {
    expect(() => parseRemoteSpec('openai+http://gpu1:8000/v1')).toThrow('names no model; add #MODEL');
    expect(() => parseRemoteSpec('openai+ftp://x/v1#m')).toThrow('is not a remote model');
    expect(() => parseRemoteSpec('openai+http://user:pw@x/v1#m')).toThrow('put no credentials in the URL');
    expect(() => parseRemoteSpec('remote:')).toThrow('is not a remote model name');
  });

  it('takes the requests in flight after the model (?inflight=N) and refuses anything else there', () => {
    expect(parseRemoteSpec('openai+http://gpu1:8000/v1#Qwen/Qwen2.5-7B-Instruct?inflight=512')).toEqual({ type: 'inline', url: 'http://gpu1:8000/v1', model: 'Qwen/Qwen2.5-7B-Instruct', maxInFlight: 512 });
    expect(modelLabel('openai+http://gpu1:8000/v1#qwen?inflight=512')).toBe('qwen@gpu1:8000');
    expect(() => parseRemoteSpec('openai+http://gpu1:8000/v1#m?inflight=0')).toThrow('inflight must be a whole number from 1 to 4096 (got "0")');
    expect(() => parseRemoteSpec('openai+http://gpu1:8000/v1#m?inflight=lots')).toThrow('inflight must be a whole number');
    expect(() => parseRemoteSpec('openai+http://gpu1:8000/v1#m?batch=4')).toThrow('unknown option "batch" (the one option is ?inflight=N');
    expect(() => parseRemoteSpec('openai+http://gpu1:8000/v1#?inflight=4')).toThrow('names no model');
  });
});

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
    const opts = await remoteBackendOptions('remote:a100', { lookup: lib });
    expect(opts).toMatchObject({ urls: ['http://gpu1:8000/v1', 'http://gpu2:8000/v1'], model: 'qwen', name: 'a100', key: 'sk-typed-secret', keyStored: true });
    await lib.remove('a100');
    expect(await lib.storedKey('a100')).toBeUndefined();
  });

  it('an entry keeps its requests in flight, and a job\'s record carries them to a resume', async () => {
    const lib = new RemoteLibrary(dir);
    expect(await lib.add({ name: 'big', urls: ['http://gpu1:8000/v1'], model: 'qwen', maxInFlight: 512 })).toEqual({ name: 'big', urls: ['http://gpu1:8000/v1'], model: 'qwen', maxInFlight: 512 });
    expect(await remoteBackendOptions('remote:big', { lookup: lib })).toMatchObject({ maxInFlight: 512 });
    expect(await remoteBackendOptions('openai+http://gpu1:8000/v1#qwen?inflight=300')).toMatchObject({ urls: ['http://gpu1:8000/v1'], model: 'qwen', maxInFlight: 300 });
    const ref = { urls: ['http://gpu1:8000/v1'], model: 'qwen', kind: 'vllm' as const, version: '0.12.0', constrained: 'structured-outputs' as const, maxInFlight: 300 };
    expect(await remoteBackendOptions('remote:gone', { ref })).toMatchObject({ maxInFlight: 300 });
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
    expect(await remoteBackendOptions('remote:v', { lookup: lib, env: { VLLM_KEY: 'k1' } })).toMatchObject({ key: 'k1', keyEnv: 'VLLM_KEY' });
    await expect(remoteBackendOptions('remote:v', { lookup: lib, env: {} })).rejects.toThrow('$VLLM_KEY is not set; it should hold the API key of remote:v');
    await expect(remoteBackendOptions('remote:nope', { lookup: lib })).rejects.toThrow('no remote model "nope" in the library (there are: remote:v)');
    // A recorded ref reconnects to the recorded endpoints whatever the entry says now.
    await lib.add({ name: 'v', urls: ['http://elsewhere:9000/v1'], model: 'qwen', keyEnv: 'VLLM_KEY' });
    const ref = { name: 'v', urls: ['http://gpu1:8000/v1'], model: 'qwen', keyEnv: 'VLLM_KEY', kind: 'vllm' as const, version: '0.12.0', constrained: 'structured-outputs' as const };
    expect(await remoteBackendOptions('remote:v', { lookup: lib, ref, env: { VLLM_KEY: 'k1' } })).toMatchObject({ urls: ['http://gpu1:8000/v1'], kind: 'vllm', constrained: 'structured-outputs' });
  });
});
