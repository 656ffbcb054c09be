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
// calibration, so no earlier job is the plan's basis. Beside it, "plan from the last job": the
// same setting planned in the data folder of the previous job at the same place, which rests on
// that job (plan.ts jobThroughput), as a user's plan does once a job has run on the models.
//
// --trace FILE records what fed each job's ETA (jobs/row-progress.ts's etaTrace: rows' starts,
// calls and ends, timed); --replay FILE reads such a file and prints the same table from the
// recording alone (test/helpers/eta-replay.ts), in a second: an estimator tried on recorded jobs.
//
//   npx tsx bench/eta.ts --replay FILE [--every 1000] [--looks]
//   npx tsx bench/eta.ts [--settings remote:5x8x5x250,remote:2x4x3x400@2,local:1x2x2x80,...] [--calibrate-on remote:3x4x2,local:2x2x1]
//                        [--latency 50] [--slots 8] [--every 1000] [--threads 2]
//
// A setting is where:n×k×r×rows[@rows in flight] (default: 64 remote, 4 local, as jobs default).
// Not a test: timings on a shared machine move from run to run.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openServices } from '../electron/api/services';
import { parseModelSpec } from '../electron/common/model-spec';
import { countMax, countMin, type CostPlan } from '../electron/common/plan';
import { CONCURRENCY } from '../electron/common/settings';
import { etaTrace, type EtaTraceEvent } from '../electron/jobs/row-progress';
import { disposeLlamaRuntime } from '../electron/llama';
import { etaErrors, formatLook, replayEta, type EtaLook, type EtaTrace } from '../test/helpers/eta-replay';
import { startInstantServer } from '../test/helpers/instant-server';
import { tinyModelPath } from '../test/helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    settings: { type: 'string', default: 'remote:5x8x5x250,remote:10x16x15x50,remote:1x2x2x1200,remote:2x4x3x400@2,local:1x2x2x160,local:4x4x2x64' },
    'calibrate-on': { type: 'string', default: 'remote:3x4x2,local:2x2x1' },
    latency: { type: 'string', default: '50' },
    slots: { type: 'string', default: '8' },
    every: { type: 'string', default: '1000' },
    threads: { type: 'string', default: '2' },
    /** Writes what fed each job's ETA (EtaTrace[] as JSON), to replay. */
    trace: { type: 'string' },
    /** Prints the ETA's errors replayed from a --trace file instead of running jobs. */
    replay: { type: 'string' },
    /** With --replay: every look too (seconds, % of calls, ETA or range, the truth, error). */
    looks: { type: 'boolean', default: false },
    data: { type: 'string', default: resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl') },
  },
});

const header = `| setting | calls | measured | plan (error of its upper end) | plan from the last job | ETA error at 10 % | 25 % | 50 % | 75 % | worst point 10–80 % |`;
const cellsOf = (looks: EtaLook[]) => {
  const { at, worst, ranges } = etaErrors(looks);
  return `${at.map(formatLook).join(' | ')} | ${(worst * 100).toFixed(0)} %${ranges > 0 ? ` (${ranges} ranges)` : ''}`;
};

if (values.replay) {
  const traces = JSON.parse(readFileSync(values.replay, 'utf8')) as EtaTrace[];
  console.log(header);
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const t of traces) {
    const looks = await replayEta(t, Number(values.every));
    if (values.looks) {
      for (const l of looks) {
        const shown = l.eta !== null ? `${l.eta.toFixed(1)} s (${(((l.eta - l.truth) / l.truth) * 100).toFixed(0)} %)` : l.range ? `${l.range.min.toFixed(1)}–${l.range.max.toFixed(1)} s` : 'none';
        console.log(`  ${t.setting} at ${(l.t / 1000).toFixed(1)} s, ${(l.share * 100).toFixed(0)} % of calls: ${shown}, truth ${l.truth.toFixed(1)} s`);
      }
    }
    console.log(`| ${t.setting} (replayed) | | ${(t.end / 1000).toFixed(1)} s | | | ${cellsOf(looks)} |`);
  }
  process.exit(0);
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
const modelOf = async (where: Setting['where']) => parseModelSpec(where === 'local' ? await tinyModelPath() : `openai+${server.origin}/v1#m`);
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
    const plan = await services.planner().eval({
      task: await services.tasks.resolve('sst2'),
      settings: settingsOf(on),
      generator: model,
      evaluator: model,
      data: dataOf(Math.max(64, on.rows)),
      concurrency: s.concurrency,
      calibrate: { pool: services.pool },
    });
    process.stderr.write(`calibrated ${key} on n=${on.n} k=${on.k} r=${on.r} in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${plan.basis}\n`);
  } finally {
    await services.dispose();
  }
  calibrations.set(key, dir);
  return dir;
}

const lines: string[] = [];
const traces: EtaTrace[] = [];
/** The data folder of the last job run at each place, kept to plan the next setting there from that job (what a user sees who ran a job before). */
const lastJob = new Map<Setting['where'], string>();
const planOr = (p: Promise<CostPlan>) =>
  p.catch((e: unknown) => {
    process.stderr.write(`plan failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return null;
  });
const planCell = (plan: CostPlan | null, seconds: number) => {
  const planned = plan?.seconds ?? null;
  if (planned === null) return 'none';
  const shown = countMin(planned) === countMax(planned) ? countMax(planned).toFixed(0) : `${countMin(planned).toFixed(0)}–${countMax(planned).toFixed(0)}`;
  return `${shown} s (${countMax(planned) >= seconds ? '+' : ''}${(((countMax(planned) - seconds) / seconds) * 100).toFixed(0)} %)`;
};
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
      const planSpec = { task, settings, generator: model, evaluator: model, data: dataOf(s.rows), concurrency: s.concurrency };
      const plan = await planOr(services.planner().eval(planSpec));
      let fromLastJob: CostPlan | null | undefined;
      const before = lastJob.get(s.where);
      if (before) {
        const there = open(before);
        try {
          fromLastJob = await planOr(there.planner().eval(planSpec));
        } finally {
          await there.dispose();
        }
      }
      const jobs = services.jobs();
      const job = await jobs.create({
        task: 'sst2',
        settings,
        generatorPath: model.text,
        evaluatorPath: model.text,
        dataset: { path: values.data, mapping: { textColumn: 'input', labelColumn: 'solution' } },
        limit: s.rows,
        concurrency: s.concurrency,
      });
      const looks: EtaLook[] = [];
      const events: EtaTraceEvent[] = [];
      let latest: Omit<EtaLook, 't' | 'truth'> | null = null;
      const off = jobs.on('progress', ({ progress: p }) => {
        if (p.callsTotal > 0) latest = { share: p.callsDone / p.callsTotal, eta: p.etaSeconds, range: p.etaRange ?? null };
      });
      const t0 = Date.now();
      const record = (e: unknown) => events.push({ ...(e as EtaTraceEvent), t: (e as EtaTraceEvent).t - t0 });
      subscribe(etaTrace.name, record);
      // What the app would show if it looked now: the latest progress, read every --every ms.
      const timer = setInterval(() => {
        if (latest) looks.push({ ...latest, t: Date.now(), truth: 0 });
      }, Number(values.every));
      await jobs.start(job.id);
      await jobs.wait(job.id);
      const end = Date.now();
      clearInterval(timer);
      unsubscribe(etaTrace.name, record);
      off();
      const seconds = (end - t0) / 1000;
      for (const l of looks) l.truth = (end - l.t) / 1000;
      traces.push({ setting: text, settings: { n: s.n, k: s.k, r: s.r, scope: settings.scope }, rows: s.rows, end: end - t0, events });
      const calls = plan ? countMax(plan.calls.total) : 0;
      lines.push(`| ${s.where} n=${s.n} k=${s.k} r=${s.r}, ${s.rows} rows, ${s.concurrency} in flight | ${calls} | ${seconds.toFixed(1)} s | ${planCell(plan, seconds)} | ${fromLastJob === undefined ? '–' : planCell(fromLastJob, seconds)} | ${cellsOf(looks)} |`);
      process.stderr.write(`${lines.at(-1)}\n`);
    } finally {
      await services.dispose();
      const before = lastJob.get(s.where);
      if (before) rmSync(before, { recursive: true, force: true });
      lastJob.set(s.where, dir);
    }
  }
} finally {
  server.stop();
  for (const dir of [...calibrations.values(), ...lastJob.values()]) rmSync(dir, { recursive: true, force: true });
  await disposeLlamaRuntime();
  if (values.trace) writeFileSync(values.trace, JSON.stringify(traces));
}
console.log(`remote: ${values.latency} ms a call, ${values.slots} at once; local: the tiny synthetic GGUF, ${values.threads} threads`);
console.log(header);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
