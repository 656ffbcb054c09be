// What keeping the models loaded buys: the same inputs classified by `tatra classify` (one process
// per input, each loading the model) and by `tatra api` (one process, models loaded once), then
// the same requests again, answered from the service's cache, by concurrent clients.
//
//   npm run build:node && npx tsx bench/api-service.ts [--model FILE.gguf] [--task sst2] [--data FILE.jsonl]
//                      [--inputs 5] [-n 1 -k 2 -r 1] [--threads 2] [--clients 20] [--cached 2000]
//
// Default model: the qwen2.5-0.5b-shaped synthetic GGUF (real size and tokenizer, random weights).
// The CLI gets a fresh generator cache per process, so each input there makes its own run-scope
// examples; the service makes them for the first input and shares them with the rest (as a job
// does): both are reported, and `apiVsCli` is the CLI's mean seconds per input over the service's.
// Prints JSON.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { readDataset } from '../electron/jobs';
import { ensureSyntheticModel } from '../tools/synthetic-gguf';
import { addApiKey, startTatraApi, TATRA } from './tatra-api';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    task: { type: 'string', default: 'sst2' },
    data: { type: 'string' },
    inputs: { type: 'string', default: '5' },
    n: { type: 'string', short: 'n', default: '1' },
    k: { type: 'string', short: 'k', default: '2' },
    r: { type: 'string', short: 'r', default: '1' },
    threads: { type: 'string', default: '2' },
    clients: { type: 'string', default: '20' },
    cached: { type: 'string', default: '2000' },
  },
});

const model = values.model ? resolve(values.model) : await ensureSyntheticModel('qwen2.5-0.5b');
const data = values.data ?? resolve(repoRoot, '..', 'shared', 'datasets', `${values.task}_test.jsonl`);
const inputs: string[] = [];
for await (const row of readDataset(data, { textColumn: 'input' })) {
  if (inputs.length >= Number(values.inputs)) break;
  inputs.push(row.input);
}
const settingArgs = ['-n', values.n, '-k', values.k, '-r', values.r];
const dataDir = await mkdtemp(join(tmpdir(), 'tatra-bench-api-'));
const env = { ...process.env, TATRA_THREADS: values.threads, TATRA_DATA_DIR: dataDir };
const seconds = (t0: number) => (performance.now() - t0) / 1000;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

try {
  // 1. The CLI: a process per input, each loading the model.
  const cli: { seconds: number; label: string | null }[] = [];
  for (const input of inputs) {
    const t0 = performance.now();
    const { stdout } = await promisify(execFile)(process.execPath, [TATRA, 'classify', '--task', values.task, '--model', model, ...settingArgs, '--json', input], { env, maxBuffer: 64 << 20 });
    cli.push({ seconds: seconds(t0), label: (JSON.parse(stdout.trim().split('\n').pop()!) as { label: string | null }).label });
  }

  // 2. The service: loaded once.
  const key = await addApiKey('bench', env);
  const t0 = performance.now();
  const { server, origin } = await startTatraApi(['--model', model, '--task', values.task, ...settingArgs, '--max-queue', '100000'], env);
  const startSeconds = seconds(t0);
  const agent = new Agent({ keepAlive: true, maxSockets: Number(values.clients) });
  const ask = (input: string) =>
    new Promise<{ label: string; cached: boolean }>((resolveAnswer, reject) => {
      const req = request(`${origin}/v1/chat/completions`, { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('utf8')));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`${res.statusCode}: ${body}`));
          const answer = JSON.parse(body) as { tatra: { label: string; cached: boolean } };
          resolveAnswer(answer.tatra);
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: `tatra/${values.task}`, messages: [{ role: 'user', content: input }] }));
    });
  const api: { seconds: number; label: string }[] = [];
  for (const input of inputs) {
    const t1 = performance.now();
    const answer = await ask(input);
    api.push({ seconds: seconds(t1), label: answer.label });
  }

  // 3. The same requests again, from the cache, by concurrent clients.
  const total = Number(values.cached);
  let next = 0;
  let cachedCount = 0;
  const t2 = performance.now();
  await Promise.all(
    Array.from({ length: Number(values.clients) }, async () => {
      while (next < total) {
        const answer = await ask(inputs[next++ % inputs.length]!);
        if (answer.cached) cachedCount++;
      }
    }),
  );
  const cachedSeconds = seconds(t2);
  agent.destroy();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));

  const cliMean = mean(cli.map((c) => c.seconds));
  const apiMean = mean(api.map((a) => a.seconds));
  process.stdout.write(
    `${JSON.stringify(
      {
        model,
        task: values.task,
        settings: { n: Number(values.n), k: Number(values.k), r: Number(values.r) },
        threads: Number(values.threads),
        inputs: inputs.length,
        cli: { secondsPerInput: cli.map((c) => +c.seconds.toFixed(2)), meanSeconds: +cliMean.toFixed(2) },
        api: {
          startSeconds: +startSeconds.toFixed(2),
          secondsPerInput: api.map((a) => +a.seconds.toFixed(3)),
          meanSeconds: +apiMean.toFixed(3),
          meanSecondsAfterFirst: +mean(api.slice(1).map((a) => a.seconds)).toFixed(3),
        },
        sameLabels: cli.every((c, i) => c.label === api[i]!.label),
        apiVsCli: +(cliMean / apiMean).toFixed(1),
        cached: { requests: total, clients: Number(values.clients), answeredFromCache: cachedCount, requestsPerSecond: +(total / cachedSeconds).toFixed(0) },
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
