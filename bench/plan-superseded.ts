// The plan beside Start when the settings change while it is being made: the page asks again for
// each change and (since plans stop once nobody waits for them) drops the plan it asked before.
// Side by side in one run, through a real `tatra serve` over a real host on --rows sst2 rows (the
// file repeated) with the tiny synthetic model's tokenizer: the time from the last change to its
// plan's answer when the earlier plans are dropped, against when they are left to run (as before),
// and against the same plan asked alone (the bound).
//
//   npx tsx bench/plan-superseded.ts [--rows 20000] [--changes 3] [--gap-ms 500]
//
// Prints JSON. Not a test: timings on a shared machine move from run to run.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createApiHost } from '../electron/api/host';
import { readDataset } from '../electron/jobs';
import { startServer } from '../electron/server/server';
import { tinyModelPath } from '../test/helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    changes: { type: 'string', default: '3' },
    'gap-ms': { type: 'string', default: '500' },
  },
});
const rows = Number(values.rows);
const changes = Number(values.changes);
const gapMs = Number(values['gap-ms']);

const dir = mkdtempSync(join(tmpdir(), 'tatra-bench-superseded-'));
const unique: string[] = [];
for await (const row of readDataset(resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl'), { textColumn: 'input' })) unique.push(row.input);
const dataPath = join(dir, 'rows.jsonl');
writeFileSync(dataPath, Array.from({ length: rows }, (_, i) => JSON.stringify({ input: unique[i % unique.length] })).join('\n') + '\n');

const model = await tinyModelPath();
const host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test' });
const server = await startServer({ host, port: 0, staticDir: dir, log: () => undefined });

/** The page's request for settings r (each change asks for another r). */
function ask(r: number, signal?: AbortSignal): Promise<unknown> {
  return fetch(`${server.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': server.token, Origin: server.origin },
    body: JSON.stringify({ method: 'plans.job', input: { taskId: 'sst2', generator: model, evaluator: model, dataPath, inputColumn: 'input', settings: { n: 5, k: 8, r, seed: 1, scope: 'run' } } }),
    ...(signal ? { signal } : {}),
  }).then(async (res) => {
    const reply = (await res.json()) as { ok: boolean; error?: { message: string } };
    if (!reply.ok) throw new Error(reply.error?.message);
  });
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** `changes` asks `gapMs` apart; the seconds from the last ask to its answer. */
async function changing(drop: boolean): Promise<number> {
  const asked: Promise<unknown>[] = [];
  let before: AbortController | null = null;
  for (let i = 0; i < changes - 1; i++) {
    before?.abort();
    before = drop ? new AbortController() : null;
    asked.push(ask(3 + i, before?.signal).catch(() => undefined));
    await sleep(gapMs);
  }
  before?.abort();
  const t0 = performance.now();
  await ask(3 + changes - 1);
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(asked);
  return seconds;
}

await ask(2); // the tokenizer loaded and the file read once, for every case alike
const t0 = performance.now();
await ask(9);
const alone = (performance.now() - t0) / 1000;
const kept = await changing(false);
const dropped = await changing(true);
console.log(JSON.stringify({ rows, changes, gapMs, aloneSeconds: +alone.toFixed(2), earlierKeptSeconds: +kept.toFixed(2), earlierDroppedSeconds: +dropped.toFixed(2), droppedOverAlone: +(dropped / alone).toFixed(2), keptOverAlone: +(kept / alone).toFixed(2) }));
await server.close();
await host.dispose();
rmSync(dir, { recursive: true, force: true });
