// The one parse of a model argument (common/model-spec.ts): a GGUF file, `remote:NAME` and
// `openai+http(s)://…#MODEL[?inflight=N]`, each with its record text, id name and label; malformed
// input is one line naming the expected form; what records stored before (plain strings) parses
// as it did, and a label never throws on a record a parse would refuse.
import { describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { isRemote, modelLabel, parseModelPair, parseModelSpec, writtenAsRemote } from '../../../electron/common/model-spec';

describe('parseModelSpec', () => {
  it('parses a GGUF file, kept as given or made absolute by the face', () => {
    expect(parseModelSpec('/m/qwen2.5-7b-q4_k_m.gguf')).toEqual({ kind: 'gguf', text: '/m/qwen2.5-7b-q4_k_m.gguf', path: '/m/qwen2.5-7b-q4_k_m.gguf', name: 'qwen2.5-7b-q4_k_m', label: 'qwen2.5-7b-q4_k_m' });
    expect(parseModelSpec(' models/tiny.GGUF ', { resolvePath: (p) => `/work/${p}` })).toMatchObject({ kind: 'gguf', text: '/work/models/tiny.GGUF', path: '/work/models/tiny.GGUF', label: 'tiny' });
    expect(parseModelSpec('C:\\models\\phi.gguf')).toMatchObject({ kind: 'gguf', label: 'phi' });
  });

  it('parses a library entry and an inline server, never resolved as paths', () => {
    const resolvePath = () => '/never';
    expect(parseModelSpec('remote:vllm-a100', { resolvePath })).toEqual({ kind: 'library', text: 'remote:vllm-a100', entry: 'vllm-a100', name: 'vllm-a100', label: 'remote:vllm-a100' });
    expect(parseModelSpec('openai+http://gpu1:8000/v1#Qwen/Qwen2.5-7B-Instruct', { resolvePath })).toEqual({
      kind: 'inline',
      text: 'openai+http://gpu1:8000/v1#Qwen/Qwen2.5-7B-Instruct',
      url: 'http://gpu1:8000/v1',
      model: 'Qwen/Qwen2.5-7B-Instruct',
      name: 'Qwen/Qwen2.5-7B-Instruct',
      label: 'Qwen/Qwen2.5-7B-Instruct @ gpu1:8000',
    });
    expect(parseModelSpec('openai+https://api.openai.com/v1/#gpt-4o-mini')).toMatchObject({ url: 'https://api.openai.com/v1', model: 'gpt-4o-mini', label: 'gpt-4o-mini @ api.openai.com' });
    expect(isRemote(parseModelSpec('remote:x'))).toBe(true);
    expect(isRemote(parseModelSpec('models/qwen.gguf'))).toBe(false);
  });

  it('takes the requests in flight after the model (?inflight=N), outside the label and the name', () => {
    expect(parseModelSpec('openai+http://gpu1:8000/v1#qwen?inflight=512')).toMatchObject({ model: 'qwen', maxInFlight: 512, name: 'qwen', label: 'qwen @ gpu1:8000', text: 'openai+http://gpu1:8000/v1#qwen?inflight=512' });
  });

  it('refuses malformed input with one UserError line saying the expected form', () => {
    const refusals: [string, string][] = [
      ['', 'no model given: a GGUF file, remote:NAME or openai+http://HOST:PORT/v1#MODEL'],
      ['   ', 'no model given'],
      ['remote:', 'is not a remote model name (remote:NAME'],
      ['remote:a/b', 'is not a remote model name'],
      ['openai+http://gpu1:8000/v1', 'names no model; add #MODEL'],
      ['openai+http://gpu1:8000/v1#', 'names no model'],
      ['openai+ftp://x/v1#m', 'is not a remote model; use openai+http://HOST:PORT/v1#MODEL or remote:NAME'],
      ['openai+http://user:pw@x/v1#m', 'put no credentials in the URL'],
      ['openai+http://gpu1:8000/v1#m?inflight=0', 'inflight must be a whole number from 1 to 4096 (got "0")'],
      ['openai+http://gpu1:8000/v1#m?inflight=lots', 'inflight must be a whole number'],
      ['openai+http://gpu1:8000/v1#m?batch=4', 'unknown option "batch" (the one option is ?inflight=N'],
      ['openai+http://gpu1:8000/v1#?inflight=4', 'names no model'],
    ];
    for (const [text, message] of refusals) {
      let thrown: unknown;
      try {
        parseModelSpec(text);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, text).toBeInstanceOf(UserError);
      expect((thrown as UserError).message, text).toContain(message);
      expect((thrown as UserError).message, text).not.toContain('\n');
    }
  });

  it('reads what records stored before back as the same model (plain strings, as written then)', () => {
    // A job row's generator path and a comparison's model lists hold these strings as they were.
    const stored = ['/home/u/models/qwen.gguf', 'models/relative-from-an-old-eval.gguf', 'remote:vllm-a100', 'openai+http://gpu1:8000/v1#qwen?inflight=300', ' remote:padded '];
    const parsed = stored.map((s) => parseModelSpec(s));
    expect(parsed.map((m) => m.kind)).toEqual(['gguf', 'gguf', 'library', 'inline', 'library']);
    // A relative path stays relative (resolved against the folder the process runs in, as before).
    expect(parsed[1]).toMatchObject({ path: 'models/relative-from-an-old-eval.gguf' });
    // What a record stores parses back to the same spec.
    for (const m of parsed) expect(parseModelSpec(m.text)).toEqual(m);
    expect(parseModelPair({ generator: stored[0]!, evaluator: stored[3]! })).toEqual({ generator: parsed[0], evaluator: parsed[3] });
  });
});

describe('writtenAsRemote', () => {
  it('tells text written as a remote spec, well formed or not, from a file or a search (the app’s model picker)', () => {
    expect(['remote:x', ' remote:', 'openai+http://h/v1#m', 'OPENAI+https://h', 'openai+ftp://x'].map(writtenAsRemote)).toEqual([true, true, true, true, true]);
    expect(['qwen', 'models/remote:x.gguf', '/m/openai+x.gguf', 'remote'].map(writtenAsRemote)).toEqual([false, false, false, false]);
  });
});

describe('modelLabel', () => {
  it('is the same label on every face, and shows a record a parse refuses as written', () => {
    expect(modelLabel('/m/qwen2.5-7b-q4_k_m.gguf')).toBe('qwen2.5-7b-q4_k_m');
    expect(modelLabel('remote:big')).toBe('remote:big');
    expect(modelLabel('openai+http://gpu1:8000/v1#qwen?inflight=512')).toBe('qwen @ gpu1:8000');
    expect(modelLabel('openai+http://gpu1:8000/v1')).toBe('openai+http://gpu1:8000/v1');
  });
});
