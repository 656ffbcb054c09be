// Whether `tatra api` stays small when left running: the real service (the built CLI, a child
// process) on a synthetic GGUF, bursts of concurrent chat completions that each compute (every
// request has an input of its own, so none comes from the cache), no forced GC anywhere, and the
// service's resident memory (its /proc status, VmRSS) after each burst.
//
//   npm run build:node && npx tsx bench/api-soak.ts [--bursts 20] [--requests 200] [--clients 20]
//                      [--shape tiny-full] [--model FILE.gguf] [-n 1 -k 2 -r 1] [--threads 2]
//
// Prints one line per burst (MiB after it, seconds it took, statuses) and then JSON with the curve
// and `lastOverFirst`, the RSS after the last burst over the RSS after the first (the goal: <= 1.5),
// and `lastOverStart`, over the RSS before the first: memory that grows within the first burst
// already (as node-llama-cpp's samplers did, llama/samplers.ts) is seen only there.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureSyntheticModel, type SyntheticShape } from '../tools/synthetic-gguf';
import { addApiKey, startTatraApi } from './tatra-api';

const { values } = parseArgs({
  options: {
    bursts: { type: 'string', default: '20' },
    requests: { type: 'string', default: '200' },
    clients: { type: 'string', default: '20' },
    shape: { type: 'string', default: 'tiny-full' },
    model: { type: 'string' },
    n: { type: 'string', short: 'n', default: '1' },
    k: { type: 'string', short: 'k', default: '2' },
    r: { type: 'string', short: 'r', default: '1' },
    threads: { type: 'string', default: '2' },
  },
});

const model = values.model ? resolve(values.model) : await ensureSyntheticModel(values.shape as SyntheticShape);
const dataDir = await mkdtemp(join(tmpdir(), 'tatra-bench-soak-'));
const env = { ...process.env, TATRA_THREADS: values.threads, TATRA_DATA_DIR: dataDir };
const MiB = 1024 * 1024;

/** The resident memory of a process, bytes (Linux: /proc/<pid>/status). */
function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

try {
  const key = await addApiKey('soak', env);
  const { server, origin } = await startTatraApi(['--model', model, '--task', 'sst2', '-n', values.n, '-k', values.k, '-r', values.r, '--max-queue', '100000', '--concurrency', '4'], env);
  const agent = new Agent({ keepAlive: true, maxSockets: Number(values.clients) });
  const ask = (input: string) =>
    new Promise<number>((resolveStatus, reject) => {
      const req = request(`${origin}/v1/chat/completions`, { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolveStatus(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'tatra/sst2', messages: [{ role: 'user', content: input }] }));
    });

  const startRss = rssOf(server.pid!);
  const curve: { burst: number; rssMiB: number; seconds: number; statuses: Record<string, number> }[] = [];
  let asked = 0;
  for (let burst = 1; burst <= Number(values.bursts); burst++) {
    const t0 = performance.now();
    const statuses: Record<string, number> = {};
    let left = Number(values.requests);
    await Promise.all(
      Array.from({ length: Number(values.clients) }, async () => {
        while (left > 0) {
          left--;
          // An input of its own: computed, never from the cache.
          const status = await ask(`review ${++asked}: ${asked % 2 === 0 ? 'a good film, well made' : 'a dull film, badly made'}`);
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }),
    );
    const rss = rssOf(server.pid!);
    const seconds = (performance.now() - t0) / 1000;
    curve.push({ burst, rssMiB: Math.round(rss / MiB), seconds: +seconds.toFixed(1), statuses });
    process.stdout.write(`burst ${burst}: rss ${Math.round(rss / MiB)} MiB, ${seconds.toFixed(1)} s, ${JSON.stringify(statuses)}\n`);
  }
  agent.destroy();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  const first = curve[0]!.rssMiB;
  const last = curve.at(-1)!.rssMiB;
  process.stdout.write(
    `${JSON.stringify({ model, settings: { n: Number(values.n), k: Number(values.k), r: Number(values.r) }, clients: Number(values.clients), requestsPerBurst: Number(values.requests), startRssMiB: Math.round(startRss / MiB), rssMiB: curve.map((c) => c.rssMiB), lastOverFirst: +(last / first).toFixed(2), lastOverStart: +(last / (startRss / MiB)).toFixed(2) }, null, 2)}\n`,
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
