// Every place that takes a model takes all three kinds of model spec: a GGUF file (given relative to
// the working folder), a library entry `remote:NAME` and an inline `openai+http://…#MODEL`. The
// CLI's flags (classify, eval, sweep and compare, as plans and as runs; `tatra api`) and the app's
// methods (plans.*, experiments.start) are tried with each; the remote ones point at the instant
// OpenAI-compatible server (test/helpers/instant-openai-server.ts), the file at the tiny model.
// A compare that resolved every entry as a path once ended in "model file not found:
// <cwd>/remote:NAME" for both remote kinds, `--dry-run` too. The CLI runs in this process
// (tatraInProcess), but for the comparisons run, through the built CLI.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHost } from '../../electron/api/host';
import { startInstantServer, type InstantServer } from '../helpers/instant-server';
import { tinyModelPath } from '../helpers/models';
import { writeReviewsJsonl } from '../helpers/reviews';
import { lastJson, keepModelsBetweenRuns, releaseInProcessRuns, repoRoot, tatraCli, tatraInProcess as cli } from '../helpers/tatra-cli';
import { startTatraApi } from '../helpers/tatra-api';

beforeAll(keepModelsBetweenRuns);
afterAll(releaseInProcessRuns);

const dir = mkdtempSync(join(tmpdir(), 'tatra-model-specs-'));
const dataDir = join(dir, 'data');
/** Rows in the paper's JSONL format, written here: the test needs no ../shared. */
const data = join(dir, 'reviews.jsonl');
writeReviewsJsonl(data, 4);
let server: InstantServer;
let specs: Record<'gguf' | 'library' | 'inline', string>;
let key: string;

beforeAll(async () => {
  server = await startInstantServer({ kind: 'vllm' });
  // The CLI runs in the repository root: the file is given relative to it, as a user types it.
  specs = { gguf: relative(repoRoot, await tinyModelPath()), library: 'remote:inst', inline: `openai+${server.origin}/v1#m` };
  await cli(['models', 'add-remote', 'inst', '--url', `${server.origin}/v1`, '--model', 'm', '--data-dir', dataDir]);
  key = (await cli(['api', 'keys', 'add', 'model-specs', '--data-dir', dataDir])).stdout.trim();
});
afterAll(() => {
  server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const SMALL = ['-n', '1', '-k', '2', '-r', '1', '--seed', '1'];
const ROWS = ['--task', 'sst2', '--data', data, '--limit', '2'];

type Count = number | { min: number; max: number };
/** Calls a plan counts at least. */
const fewest = (c: Count) => (typeof c === 'number' ? c : c.min);

describe.each(['gguf', 'library', 'inline'] as const)('a %s model spec', (kind) => {
  it('is taken by every CLI flag that takes a model, in plans', async () => {
    const spec = specs[kind];
    const plans = [
      ['classify', '--task', 'sst2', '--model', spec, ...SMALL, '--dry-run', '--json', '--data-dir', dataDir, 'A lovely film.'],
      ['classify', '--task', 'sst2', '--generator', spec, '--evaluator', spec, ...SMALL, '--dry-run', '--json', '--data-dir', dataDir, 'A lovely film.'],
      ['eval', ...ROWS, '--model', spec, ...SMALL, '--dry-run', '--json', '--data-dir', dataDir],
      ['sweep', ...ROWS, '--model', spec, '-n', '0,1', '-k', '2', '-r', '1', '--seeds', '1', '--dry-run', '--json', '--data-dir', dataDir],
      ['compare', ...ROWS, '--generators', spec, '--evaluators', spec, ...SMALL, '--dry-run', '--json', '--data-dir', dataDir],
    ];
    for (const args of plans) {
      const { plan } = lastJson<{ plan: { calls: { total: Count } } }>((await cli(args)).stdout);
      expect(fewest(plan.calls.total), args.join(' ')).toBeGreaterThan(0);
    }
  });

  it.skipIf(kind === 'gguf')('runs a comparison on it', async () => {
    const spec = specs[kind];
    const { stdout } = await tatraCli(['compare', ...ROWS, '--generators', spec, '--evaluators', spec, ...SMALL, '--json', '--data-dir', dataDir]);
    const rec = lastJson<{ status: string; spec: { generators: string[] }; pairs: { status: string; rowsDone: number; jobId: string }[] }>(stdout);
    expect(rec.status).toBe('done');
    // Kept as written, so a resume reaches the same server.
    expect(rec.spec.generators).toEqual([spec]);
    expect(rec.pairs).toMatchObject([{ status: 'done', rowsDone: 2 }]);
    // Its job is named with the model's one label (common/model-spec.ts), as the app shows it.
    const label = kind === 'library' ? 'remote:inst' : `m @ ${new URL(server.origin).host}`;
    const jobs = lastJson<{ id: string; name: string }[]>((await cli(['jobs', 'list', '--json', '--data-dir', dataDir])).stdout);
    expect(jobs.find((j) => j.id === rec.pairs[0]!.jobId)?.name).toContain(`: ${label} → ${label}`);
  });

  it('is served by tatra api', async () => {
    const api = await startTatraApi(['--model', specs[kind], '--task', 'sst2', ...SMALL, '--data-dir', dataDir]);
    try {
      const res = await fetch(`${api.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tatra/sst2', messages: [{ role: 'user', content: 'A lovely film.' }] }),
      });
      const body = await res.text();
      expect(res.status, `${body}\n${api.stderr()}`).toBe(200);
      expect(['negative', 'positive']).toContain((JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content);
    } finally {
      expect(await api.stop()).toBe(0);
    }
  });

  it("is taken by the app's plans and experiments", async () => {
    const spec = specs[kind];
    const host = await createApiHost({ dataDir, threads: 1, mode: 'test' });
    try {
      const settings = { n: 1, k: 2, r: 1, seed: 1, scope: 'run' as const };
      const rows = { taskId: 'sst2', dataPath: data, inputColumn: 'input', limit: 2 };
      const asked = {
        classify: await host.invoke('plans.classify', { taskId: 'sst2', input: 'A lovely film.', generator: spec, evaluator: spec, settings }),
        job: await host.invoke('plans.job', { ...rows, goldColumn: 'solution', generator: spec, evaluator: spec, settings }),
        sweep: await host.invoke('plans.sweep', { ...rows, goldColumn: 'solution', generator: spec, evaluator: spec, grid: { n: [0, 1], k: [2], r: [1], seeds: [1] } }),
        compare: await host.invoke('plans.compare', { taskId: 'sst2', dataPath: data, inputColumn: 'input', goldColumn: 'solution', limit: 2, generators: [spec], evaluators: [spec], settings }),
      };
      for (const [name, answer] of Object.entries(asked)) {
        expect(answer, name).toMatchObject({ ok: true });
        expect(fewest((answer as { value: { calls: { total: Count } } }).value.calls.total), name).toBeGreaterThan(0);
      }
      if (kind === 'gguf') return;
      // Listening before the start: the host says in an experiment.progress event when it ends.
      const ended = new Set<string>();
      let wake = () => {};
      const off = host.subscribe((event, payload) => {
        const p = payload as { id?: string; status?: string };
        if (event === 'experiment.progress' && p.id && p.status !== 'running' && p.status !== 'queued') ended.add(p.id);
        wake();
      });
      const started = await host.invoke('experiments.start', {
        kind: 'compare',
        spec: { taskId: 'sst2', dataPath: data, inputColumn: 'input', goldColumn: 'solution', limit: 2, generators: [spec], evaluators: [spec], settings },
      });
      expect(started).toMatchObject({ ok: true });
      const id = (started as { value: { id: string } }).value.id;
      while (!ended.has(id)) await new Promise<void>((resolve) => (wake = resolve));
      off();
      expect(await host.invoke('experiments.get', { id })).toMatchObject({ ok: true, value: { status: 'done' } });
    } finally {
      await host.dispose();
    }
  });
});
