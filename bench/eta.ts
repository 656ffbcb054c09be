// How far to trust the ETA and the plan: real jobs (sst2 rows) on several settings, remote (the
// instant OpenAI-compatible server answering after --latency ms) and local (the tiny synthetic
// GGUF, in process), each job's progress sampled every --every ms. Printed per setting: the
// plan's time estimate (`planner.job`, what --dry-run says) against the measured time, and the
// ETA's error against the time that really remained when 10/25/50/75 % of the calls were done
// (the first sample at or past each point; the range while there is no point, as "min–max").
//
//   npx tsx bench/eta.ts [--settings remote:2x4x3x40,remote:5x8x5x40,remote:10x16x15x20,remote:1x2x2x80,local:1x2x2x8]
//                        [--latency 50] [--every 500] [--threads 2]
//
// A setting is where:n×k×r×rows. Not a test: timings on a shared machine move from run to run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openServices } from '../electron/api/services';
import { countMax, countMin } from '../electron/common/plan';
import { disposeLlamaRuntime } from '../electron/llama';
import { startInstantServer } from '../test/helpers/instant-server';
import { tinyModelPath } from '../test/helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    settings: { type: 'string', default: 'remote:2x4x3x40,remote:5x8x5x40,remote:10x16x15x20,remote:1x2x2x80,local:1x2x2x8' },
    latency: { type: 'string', default: '50' },
    every: { type: 'string', default: '500' },
    threads: { type: 'string', default: '2' },
    data: { type: 'string', default: resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl') },
  },
});

interface Sample {
  t: number;
  calls: number;
  total: number;
  eta: number | null;
  range: { min: number; max: number } | null;
}

const server = await startInstantServer({ kind: 'openai-compatible', latencyMs: Number(values.latency) });
const lines: string[] = [];
try {
  for (const setting of values.settings.split(',')) {
    const [where, shape] = setting.split(':') as [string, string];
    const [n, k, r, rows] = shape.split('x').map(Number) as [number, number, number, number];
    const model = where === 'local' ? await tinyModelPath() : `openai+${server.origin}/v1#m`;
    const dir = mkdtempSync(join(tmpdir(), 'tatra-eta-'));
    const services = openServices({ dataDir: dir, threads: Number(values.threads), keepAliveMs: 0, taskPaths: true });
    try {
      const settings = { n, k, r, seed: 1, scope: 'run' as const };
      const data = { path: values.data, format: 'jsonl' as const, textColumn: 'input', limit: rows };
      const plan = await services
        .planner()
        .eval({ task: await services.tasks.resolve('sst2'), settings, generator: model, evaluator: model, data })
        .catch((e: unknown) => {
          process.stderr.write(`plan failed: ${e instanceof Error ? e.message : String(e)}\n`);
          return null;
        });
      const jobs = services.jobs();
      const job = await jobs.create({ task: 'sst2', settings, generatorPath: model, evaluatorPath: model, dataset: { path: values.data, mapping: { textColumn: 'input', labelColumn: 'solution' } }, limit: rows });
      const samples: Sample[] = [];
      let latest: Sample | null = null;
      const off = jobs.on('progress', ({ progress: p }) => {
        latest = { t: Date.now(), calls: p.callsDone, total: p.callsTotal, eta: p.etaSeconds, range: p.etaRange ?? null };
      });
      const timer = setInterval(() => {
        if (latest) samples.push({ ...latest, t: Date.now() });
      }, Number(values.every));
      const t0 = Date.now();
      await jobs.start(job.id);
      await jobs.wait(job.id);
      const end = Date.now();
      clearInterval(timer);
      off();
      const seconds = (end - t0) / 1000;
      const cells = [0.1, 0.25, 0.5, 0.75].map((share) => {
        const s = samples.find((x) => x.total > 0 && x.calls / x.total >= share);
        if (!s) return '–';
        const truth = (end - s.t) / 1000;
        const err = (x: number) => `${x >= truth ? '+' : ''}${(((x - truth) / truth) * 100).toFixed(0)} %`;
        if (s.eta !== null) return err(s.eta);
        if (s.range) return `${err(s.range.min)}…${err(s.range.max)}`;
        return 'none';
      });
      const planned = plan?.seconds ?? null;
      const planCell = planned === null ? 'none' : `${countMin(planned).toFixed(0)}–${countMax(planned).toFixed(0)} s (${(((countMax(planned) - seconds) / seconds) * 100).toFixed(0)} %)`;
      lines.push(`| ${where} n=${n} k=${k} r=${r}, ${rows} rows | ${seconds.toFixed(1)} s | ${planCell} | ${cells.join(' | ')} |`);
      process.stderr.write(`${lines.at(-1)}\n`);
    } finally {
      await services.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  server.stop();
  await disposeLlamaRuntime();
}
console.log(`| setting | measured | plan (error of its upper end) | ETA error at 10 % | 25 % | 50 % | 75 % |`);
console.log('|---|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
