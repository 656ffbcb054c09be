// How far to trust the ETA and the plan: real jobs (sst2 rows) on several settings, remote (the
// instant OpenAI-compatible server answering after --latency ms, at most --slots calls at once,
// as a server's batch) and local (the tiny synthetic GGUF, in process), each job's progress
// sampled every --every ms. Printed per setting: the plan's time estimate (`planner.eval`, what
// --dry-run says) against the measured time, and the ETA's error against the time that really
// remained when 10/25/50/75 % of the calls were done (the first sample at or past each point; a
// range, while there is no point, as "min…max").
//
// The plans rest on a calibration (--calibrate) made on its own setting (--calibrate-on, one per
// place and row concurrency), never on the setting planned: what a user sees who calibrated once
// and then plans other settings. Each job runs in a fresh data folder holding only that
// calibration, so no earlier job is the plan's basis.
//
//   npx tsx bench/eta.ts [--settings remote:5x8x5x250,remote:2x4x3x400@2,local:1x2x2x80,...] [--calibrate-on remote:3x4x2,local:2x2x1]
//                        [--latency 50] [--slots 8] [--every 1000] [--threads 2]
//
// A setting is where:n×k×r×rows[@rows in flight] (default: 64 remote, 4 local, as jobs default).
// Not a test: timings on a shared machine move from run to run.
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openServices } from '../electron/api/services';
import { countMax, countMin, type CostPlan } from '../electron/common/plan';
import { CONCURRENCY } from '../electron/common/settings';
import { disposeLlamaRuntime } from '../electron/llama';
import { startInstantServer } from '../test/helpers/instant-server';
import { tinyModelPath } from '../test/helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    settings: { type: 'string', default: 'remote:5x8x5x250,remote:10x16x15x50,remote:1x2x2x1200,remote:2x4x3x400@2,local:1x2x2x80,local:4x4x2x24' },
    'calibrate-on': { type: 'string', default: 'remote:3x4x2,local:2x2x1' },
    latency: { type: 'string', default: '50' },
    slots: { type: 'string', default: '8' },
    every: { type: 'string', default: '1000' },
    threads: { type: 'string', default: '2' },
    /** Writes every progress event's (ms since start, calls done, calls total) per setting as JSON: the ETA's input, to replay. */
    trace: { type: 'string' },
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

interface Setting {
  where: 'local' | 'remote';
  n: number;
  k: number;
  r: number;
  rows: number;
  concurrency: number;
}

function parseSetting(text: string): Setting {
  const m = /^(local|remote):(\d+)x(\d+)x(\d+)(?:x(\d+))?(?:@(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`a setting is where:NxKxRxROWS[@C], got "${text}"`);
  const where = m[1] as Setting['where'];
  const concurrency = m[6] ? Number(m[6]) : where === 'remote' ? CONCURRENCY.defaultRemote : CONCURRENCY.default;
  return { where, n: Number(m[2]), k: Number(m[3]), r: Number(m[4]), rows: Number(m[5] ?? 0), concurrency };
}

const server = await startInstantServer({ kind: 'openai-compatible', latencyMs: Number(values.latency), capacity: Number(values.slots) });
const modelOf = async (where: Setting['where']) => (where === 'local' ? await tinyModelPath() : `openai+${server.origin}/v1#m`);
const settingsOf = (s: Setting) => ({ n: s.n, k: s.k, r: s.r, seed: 1, scope: 'run' as const });
const dataOf = (rows: number) => ({ path: values.data, format: 'jsonl' as const, textColumn: 'input', limit: rows });
const open = (dir: string) => openServices({ dataDir: dir, threads: Number(values.threads), keepAliveMs: 0, taskPaths: true });

/** Calibration folders by place and rows in flight: made once, copied into each job's folder. */
const calibrations = new Map<string, string>();
async function calibrationFor(s: Setting): Promise<string> {
  const key = `${s.where}@${s.concurrency}`;
  const known = calibrations.get(key);
  if (known) return known;
  const on = values['calibrate-on'].split(',').map(parseSetting).find((c) => c.where === s.where);
  if (!on) throw new Error(`no --calibrate-on setting for ${s.where}`);
  const dir = mkdtempSync(join(tmpdir(), 'tatra-eta-cal-'));
  const services = open(dir);
  try {
    const model = await modelOf(s.where);
    const t0 = Date.now();
    await services.planner().eval({
      task: await services.tasks.resolve('sst2'),
      settings: settingsOf(on),
      generator: model,
      evaluator: model,
      data: dataOf(Math.max(64, on.rows)),
      concurrency: s.concurrency,
      calibrate: { pool: services.pool },
    });
    process.stderr.write(`calibrated ${key} on n=${on.n} k=${on.k} r=${on.r} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  } finally {
    await services.dispose();
  }
  calibrations.set(key, dir);
  return dir;
}

const lines: string[] = [];
const traces: { setting: string; end: number; events: [number, number, number][] }[] = [];
try {
  for (const text of values.settings.split(',')) {
    const s = parseSetting(text);
    const model = await modelOf(s.where);
    const calibrated = await calibrationFor(s);
    const dir = mkdtempSync(join(tmpdir(), 'tatra-eta-'));
    if (existsSync(join(calibrated, 'calibration.json'))) copyFileSync(join(calibrated, 'calibration.json'), join(dir, 'calibration.json'));
    const services = open(dir);
    try {
      const settings = settingsOf(s);
      const task = await services.tasks.resolve('sst2');
      const plan: CostPlan | null = await services
        .planner()
        .eval({ task, settings, generator: model, evaluator: model, data: dataOf(s.rows), concurrency: s.concurrency })
        .catch((e: unknown) => {
          process.stderr.write(`plan failed: ${e instanceof Error ? e.message : String(e)}\n`);
          return null;
        });
      const jobs = services.jobs();
      const job = await jobs.create({
        task: 'sst2',
        settings,
        generatorPath: model,
        evaluatorPath: model,
        dataset: { path: values.data, mapping: { textColumn: 'input', labelColumn: 'solution' } },
        limit: s.rows,
        concurrency: s.concurrency,
      });
      const samples: Sample[] = [];
      const events: [number, number, number][] = [];
      let latest: Sample | null = null;
      const off = jobs.on('progress', ({ progress: p }) => {
        latest = { t: Date.now(), calls: p.callsDone, total: p.callsTotal, eta: p.etaSeconds, range: p.etaRange ?? null };
        events.push([latest.t, p.callsDone, p.callsTotal]);
      });
      // What the app would show if it looked now: the latest progress, read every --every ms.
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
      traces.push({ setting: text, end: end - t0, events: events.map(([t, d, n]) => [t - t0, d, n]) });
      const cells = [0.1, 0.25, 0.5, 0.75].map((share) => {
        const x = samples.find((y) => y.total > 0 && y.calls / y.total >= share);
        if (!x) return '–';
        const truth = (end - x.t) / 1000;
        const err = (v: number) => `${v >= truth ? '+' : ''}${(((v - truth) / truth) * 100).toFixed(0)} %`;
        if (x.eta !== null) return err(x.eta);
        if (x.range) return `${err(x.range.min)}…${err(x.range.max)}`;
        return 'none';
      });
      const planned = plan?.seconds ?? null;
      const planCell =
        planned === null ? 'none' : `${countMin(planned) === countMax(planned) ? countMax(planned).toFixed(0) : `${countMin(planned).toFixed(0)}–${countMax(planned).toFixed(0)}`} s (${countMax(planned) >= seconds ? '+' : ''}${(((countMax(planned) - seconds) / seconds) * 100).toFixed(0)} %)`;
      const calls = plan ? countMax(plan.calls.total) : 0;
      lines.push(`| ${s.where} n=${s.n} k=${s.k} r=${s.r}, ${s.rows} rows, ${s.concurrency} in flight | ${calls} | ${seconds.toFixed(1)} s | ${planCell} | ${cells.join(' | ')} |`);
      process.stderr.write(`${lines.at(-1)}\n`);
    } finally {
      await services.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  server.stop();
  for (const dir of calibrations.values()) rmSync(dir, { recursive: true, force: true });
  await disposeLlamaRuntime();
  if (values.trace) writeFileSync(values.trace, JSON.stringify(traces));
}
console.log(`remote: ${values.latency} ms a call, ${values.slots} at once; local: the tiny synthetic GGUF, ${values.threads} threads`);
console.log(`| setting | calls | measured | plan (error of its upper end) | ETA error at 10 % | 25 % | 50 % | 75 % |`);
console.log('|---|---|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
