// The remote backend against a real OpenAI-compatible server: llama-server (built from the
// llama.cpp source node-llama-cpp ships, tools/build-llama-server.sh) serving the tiny synthetic
// model. `tatra classify` and a 20-row `tatra eval` through it are well-formed; two llama-server
// processes as two endpoints of one remote model: one is killed in the middle of an evaluation,
// the job still ends with every row exactly once, and the killed one serves again once restarted.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobSummary } from '../../electron/common/contract/jobs';
import type { JobMetrics } from '../../electron/jobs';
import { JobManager, openJobStore } from '../../electron/jobs';
import { ModelPool } from '../../electron/hold';
import { RemoteLibrary } from '../../electron/models/remote-library';
import { connectRemoteBackend, type RemoteBackend } from '../../electron/remote';
import { whenTrue } from '../helpers/events';
import { freePort, startLlamaServer, type RunningLlamaServer } from '../helpers/llama-server';
import { tinyModelPath } from '../helpers/models';
import { fakeServer, type json } from '../unit/remote/fake-server';
import { parseModelSpec } from '../../electron/common/model-spec';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tatra-remote-'));
let a: RunningLlamaServer | undefined;
let b: RunningLlamaServer | undefined;

const SENTENCES = [
  'a gorgeous, witty, seductive movie',
  'the plot is nothing but boilerplate clichés',
  'an utterly charming and hilarious film',
  'it is a dull, lifeless piece of work',
  'one of the best films of the year',
];
/** 20 rows of text,label; the labels alternate so both classes are present. */
function writeDataset(path: string): void {
  const rows = Array.from({ length: 20 }, (_, i) => `"${SENTENCES[i % SENTENCES.length]} (${i})",${i % 2 === 0 ? 'positive' : 'negative'}`);
  writeFileSync(path, `text,label\n${rows.join('\n')}\n`);
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [join(repoRoot, 'bin', 'tatra.js'), ...args], {
    cwd: repoRoot,
    env: { ...process.env, TATRA_THREADS: '1', FORCE_COLOR: '0', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

function lastJson<T>(stdout: string): T {
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (!line) throw new Error(`no JSON in output: ${stdout.slice(0, 500)}`);
  return JSON.parse(line) as T;
}

beforeAll(async () => {
  const model = await tinyModelPath();
  // Two slots each, one thread each: small enough for a contended 2-core machine.
  [a, b] = await Promise.all([startLlamaServer({ model, parallel: 2, threads: 1 }), startLlamaServer({ model, parallel: 2, threads: 1 })]);
}, 900_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('bad input through the CLI: one line, exit 2', () => {
  it('an unreachable URL; an unknown model lists what the server has', async () => {
    const port = await freePort();
    const down = await cli(['classify', '--task', 'sst2', '--model', `openai+http://127.0.0.1:${port}/v1#tiny`, 'fine']).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    // (How fast it fails is pinned without process start-up in test/unit/remote/failures.test.ts.)
    expect(down?.code).toBe(2);
    expect(down?.stderr.trim()).toBe(`tatra: cannot reach http://127.0.0.1:${port}/v1: connection refused`);

    const unknown = await cli(['classify', '--task', 'sst2', '--model', `openai+${a!.url}#qwen-72b`, 'fine']).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(unknown?.code).toBe(2);
    expect(unknown?.stderr.trim()).toBe(`tatra: ${a!.url} has no model "qwen-72b"; it serves: tiny`);
  });

  it('a server that answers HTML (a web server, not an inference server): one line, exit 2', async () => {
    const html = await fakeServer({
      'GET /v1/models': (_req: unknown, res: Parameters<typeof json>[0]) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<!doctype html>\n<html><body><h1>Welcome to nginx!</h1></body></html>');
      },
    });
    try {
      const e = await cli(['classify', '--task', 'sst2', '--model', `openai+${html.origin}/v1#m`, 'fine']).then(
        () => null,
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      expect(e?.code).toBe(2);
      expect(e?.stderr.trim()).toBe(`tatra: ${html.origin}/v1 is not an OpenAI-compatible server: /v1/models answered an HTML page`);
      expect(e?.stdout).toBe('');
    } finally {
      await html.close();
    }
  });

  it('a wrong key against llama-server --api-key (HTTP 401): one line naming the variable, never the key; the right key works', async () => {
    const keyed = await startLlamaServer({ model: await tinyModelPath(), parallel: 1, threads: 1, extraArgs: ['--api-key', 'sk-right-secret'] });
    const dataDir = join(dir, 'keyed');
    try {
      const wrongEnv = { TATRA_TEST_KEY: 'sk-wrong-secret' };
      const refused = await cli(['models', 'add-remote', 'keyed', '--url', keyed.url, '--model', 'tiny', '--key-env', 'TATRA_TEST_KEY', '--data-dir', dataDir], wrongEnv).then(
        () => null,
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      expect(refused?.code).toBe(2);
      expect(refused?.stderr.trim()).toBe(`tatra: ${keyed.url} rejected the API key (HTTP 401: Invalid API Key); check the key in $TATRA_TEST_KEY`);
      // Added without a probe, the same wrong key fails the classification the same way.
      await cli(['models', 'add-remote', 'keyed', '--url', keyed.url, '--model', 'tiny', '--key-env', 'TATRA_TEST_KEY', '--no-probe', '--data-dir', dataDir]);
      const args = ['classify', '--task', 'sst2', '--model', 'remote:keyed', '-n', '0', '-k', '2', '-r', '1', '--data-dir', dataDir, '--json', 'fine'];
      const wrong = await cli(args, wrongEnv).then(
        () => null,
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      expect(wrong?.code).toBe(2);
      expect(wrong?.stderr.trim()).toBe(`tatra: ${keyed.url} rejected the API key (HTTP 401: Invalid API Key); check the key in $TATRA_TEST_KEY`);
      for (const out of [refused!.stdout, refused!.stderr, wrong!.stdout, wrong!.stderr]) expect(out).not.toContain('sk-wrong-secret');
      const right = await cli(args, { TATRA_TEST_KEY: 'sk-right-secret' });
      expect(['negative', 'positive', null]).toContain(lastJson<{ label: string | null }>(right.stdout).label);
      expect(right.stdout + right.stderr).not.toContain('sk-right-secret');
    } finally {
      await keyed.stop();
    }
  });
});

describe('llama-server as a remote model', () => {
  it('tatra classify through openai+http://…#tiny: labels in the set, balanced examples, n paraphrases', async () => {
    const spec = `openai+${a!.url}#tiny`;
    const { stdout } = await cli(['classify', '--task', 'sst2', '--model', spec, '-n', '2', '-k', '4', '-r', '2', '--json', '--data-dir', join(dir, 'classify'), 'a gorgeous, witty, seductive movie']);
    const r = lastJson<{
      label: string | null;
      generator: string;
      constrained: unknown;
      votes: Record<string, number>;
      runs: { examples: { label: string }[]; paraphrases: string[]; predictions: { label: string | null }[] }[];
    }>(stdout);
    expect(r.generator).toBe(spec);
    expect(['negative', 'positive']).toContain(r.label);
    expect(r.runs).toHaveLength(2);
    for (const run of r.runs) {
      expect(run.paraphrases).toHaveLength(2);
      expect(run.predictions).toHaveLength(3);
      // Grammar-constrained on the server: every prediction is a label of the set.
      for (const p of run.predictions) expect(['negative', 'positive']).toContain(p.label);
      const perLabel = new Map<string, number>();
      for (const e of run.examples) perLabel.set(e.label, (perLabel.get(e.label) ?? 0) + 1);
      // Balanced: examples of both labels, no label more than half of k (some gibberish ones may be dropped as duplicates).
      expect([...perLabel.keys()].sort()).toEqual(['negative', 'positive']);
      for (const n of perLabel.values()) expect(n).toBeLessThanOrEqual(2);
    }
    expect(Object.values(r.votes).reduce((s, v) => s + v, 0)).toBe(6);
    expect(r.constrained).toEqual({ generator: 'grammar', evaluator: 'grammar' });
  });

  it('constrained decoding turned off for a server: tatra classify records unconstrained outputs (JSON and the human report)', async () => {
    const dataDir = join(dir, 'free');
    await new RemoteLibrary(dataDir).add({ name: 'free', urls: [a!.url], model: 'tiny', constrained: 'none' });
    const args = ['classify', '--task', 'sst2', '--model', 'remote:free', '-n', '1', '-k', '2', '-r', '1', '--data-dir', dataDir, 'a gorgeous, witty, seductive movie'];
    const r = lastJson<{ constrained: unknown; runs: { predictions: { label: string | null }[] }[] }>((await cli([...args, '--json'])).stdout);
    expect(r.constrained).toEqual({ generator: 'none', evaluator: 'none' });
    // Free text from a gibberish model is parsed and validated: a prediction is a label of the set or no vote.
    for (const p of r.runs[0]!.predictions) expect([null, 'negative', 'positive']).toContain(p.label);
    const human = await cli(args);
    expect(human.stdout).toContain('note: generator outputs unconstrained (parsed and validated only); evaluator outputs unconstrained (parsed and validated only)');
  });

  it('a label answer costs one decoding step per label token: the choice tokens are biased and a whole choice stops the request, the grammar still holds', async () => {
    const backend = await connectRemoteBackend({ urls: [a!.url], model: 'tiny' });
    try {
      // Two requests in flight per slot (2 slots): one waits in the server's queue while another's round trip is on the wire.
      expect(backend.stats().endpoints[0]!.limit).toBe(4);
      const requests = Array.from({ length: 6 }, (_, i) => ({ prompt: { system: 'You classify sentiment.', user: `Text: "review number ${i}"\nAnswer:` }, grammar: 'root ::= "negative" | "positive"', maxTokens: 4 }));
      const results = await backend.generate(requests);
      // Each label's tokens, as the server counts them (two each in the tiny model's vocabulary).
      const tokensOf = async (content: string) => {
        const res = await fetch(`${a!.url.replace(/\/v1$/, '')}/tokenize`, { method: 'POST', body: JSON.stringify({ content }) });
        return ((await res.json()) as { tokens: number[] }).tokens.length;
      };
      const labelTokens = { negative: await tokensOf('negative'), positive: await tokensOf('positive') };
      for (const r of results) {
        expect(['negative', 'positive']).toContain(r.text);
        // A label costs its own tokens and no more; the grammar alone made this gibberish model
        // write invisible tokens up to the limit (4), each after a pass over the whole vocabulary.
        expect(r.completionTokens).toBe(labelTokens[r.text as keyof typeof labelTokens]);
      }
      // Labels whose tokens are byte pieces (not spelled back as text) are answered by the grammar alone.
      const [odd] = await backend.generate([{ ...requests[0]!, grammar: 'root ::= "ᚠ" | "ꙮ"', maxTokens: 8 }]);
      expect(['ᚠ', 'ꙮ']).toContain(odd!.text);
    } finally {
      await backend.dispose();
    }
  });

  it('tatra eval on 20 rows through remote:NAME records the server and gives every row a label of the set', async () => {
    const dataDir = join(dir, 'eval');
    const data = join(dir, 'rows.csv');
    writeDataset(data);
    const added = await cli(['models', 'add-remote', 'tiny-remote', '--url', a!.url, '--model', 'tiny', '--data-dir', dataDir]);
    expect(added.stdout).toContain('added remote:tiny-remote');
    expect(added.stdout).toMatch(/llama-server/);
    const listed = await cli(['models', 'list', '--data-dir', dataDir]);
    expect(listed.stdout).toMatch(new RegExp(`remote:tiny-remote\\s+tiny\\s+llama-server.*${a!.url.replace(/[/.]/g, '\\$&')}\\s+up`));

    const { stdout } = await cli(['eval', '--task', 'sst2', '--data', data, '--model', 'remote:tiny-remote', '-n', '1', '-k', '2', '-r', '1', '--concurrency', '2', '--data-dir', dataDir, '--json']);
    const { job: summary, metrics } = lastJson<{ job: JobSummary; metrics: JobMetrics }>(stdout);
    // A server batches requests as it likes: the job says its rows are not promised again.
    expect(summary).toMatchObject({ status: 'done', rowsTotal: 20, rowsDone: 20, deterministic: false });
    const store = openJobStore(dataDir);
    const job = store.getJob(summary.id)!;
    expect(job).toMatchObject({ rowsFailed: 0 });
    expect(job.generator).toMatchObject({ path: 'remote:tiny-remote', sizeBytes: 0, remote: { name: 'tiny-remote', urls: [a!.url], model: 'tiny', kind: 'llama-server', constrained: 'gbnf' } });
    expect(job.generator.remote?.version).toBeTruthy();
    expect(metrics.evaluated).toBe(20);
    try {
      const rows = store.rows(job.id, { offset: 0, limit: 100 }).rows;
      expect(rows).toHaveLength(20);
      for (const row of rows) expect(['negative', 'positive']).toContain(row.prediction);
    } finally {
      store.close();
    }
  });

  it('two endpoints: one killed mid-evaluation, every row exactly once, and the killed one serves again after a restart', async () => {
    const dataDir = join(dir, 'failover');
    const data = join(dir, 'rows2.csv');
    writeDataset(data);
    const library = new RemoteLibrary(dataDir);
    await library.add({ name: 'pair', urls: [a!.url, b!.url], model: 'tiny' });
    const store = openJobStore(dataDir);
    const pool = new ModelPool({ remote: { lookup: library, tuning: { reprobeMs: 100, backoffBaseMs: 20 } } });
    const manager = new JobManager({ store, backends: pool });
    try {
      const job = await manager.create({
        task: 'sst2',
        settings: { n: 1, k: 2, r: 1, seed: 0, scope: 'run' },
        generatorPath: 'remote:pair',
        evaluatorPath: 'remote:pair',
        dataset: { path: data, mapping: { textColumn: 'text', labelColumn: 'label' } },
        concurrency: 4,
      });
      expect(job.evaluator.remote?.urls).toEqual([a!.url, b!.url]);
      // Hold the job's backend to read its endpoint counters (same recorded endpoints: the same pooled backend).
      const lease = await pool.acquire(parseModelSpec(job.evaluator.path), { remote: job.evaluator.remote! });
      const backend = lease.backend as RemoteBackend;
      let killed = false;
      const off = manager.on('progress', (ev) => {
        if (!killed && ev.progress.jobId === job.id && ev.progress.rowsDone >= 5) {
          killed = true;
          void b!.kill();
        }
      });
      await manager.start(job.id);
      await manager.wait(job.id);
      off();
      const done = manager.get(job.id);
      expect(killed).toBe(true);
      expect(done).toMatchObject({ status: 'done', rowsTotal: 20, rowsDone: 20, rowsFailed: 0 });
      const rows = store.rows(job.id, { offset: 0, limit: 100 }).rows;
      expect(rows).toHaveLength(20);
      expect(new Set(rows.map((r) => r.index)).size).toBe(20);
      for (const row of rows) {
        expect(row.status).toBe('done');
        expect(['negative', 'positive']).toContain(row.prediction);
      }
      expect(manager.metrics(job.id).evaluated).toBe(20);
      const afterKill = backend.stats().endpoints;
      expect(afterKill[1]).toMatchObject({ url: b!.url, up: false });
      expect(afterKill[1]!.failures).toBeGreaterThanOrEqual(1);

      // Restarted on the same port: probed again, set back in, and given requests.
      await b!.restart();
      await whenTrue((listener) => backend.onEndpointUpOrDown(listener), () => backend.stats().endpoints[1]!.up);
      const servedBefore = backend.stats().endpoints[1]!.served;
      await backend.generate(Array.from({ length: 6 }, (_, i) => ({ prompt: { system: '', user: `Text: "row ${i}"\nAnswer:` }, grammar: 'root ::= "negative" | "positive"', maxTokens: 4 })));
      expect(backend.stats().endpoints[1]!.served).toBeGreaterThan(servedBefore);
      await lease.release();
    } finally {
      await manager.dispose();
      await pool.dispose();
      store.close();
    }
  });
});
