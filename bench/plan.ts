// What a plan of a large file costs (the plan beside Start, `--dry-run`, an experiment's time
// left): the job's plan over --rows sst2 rows (the file repeated), counted with the tiny synthetic
// model's own Qwen2 tokenizer, against its bound in the same run: the tokenizer work no exact plan
// can skip, each row's paraphrase prompt and bare evaluation prompt counted once and its input
// once. Beside it, what the plan leaves the rest of the process: the longest the event loop waited
// while it walked (a server answers nothing else during such a wait), and the memory it grew by.
//
//   npx tsx bench/plan.ts [--rows 20000] [-n 5 -k 8 -r 3] [--early-stop]
//
// Prints JSON. Not a test: timings on a shared machine move from run to run.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_SETTINGS, type TatraSettings } from '../electron/common/tatra';
import { evaluationPrompt, paraphrasePrompt } from '../electron/engine/prompts';
import { readDataset } from '../electron/jobs';
import { assumedLengths, planJob, type PlanModelInfo } from '../electron/jobs/plan';
import { disposeLlamaRuntime } from '../electron/llama';
import { loadTokenCounter } from '../electron/llama/tokens';
import { resolveTask } from '../electron/tasks';
import { tinyModelPath } from '../test/helpers/models';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    n: { type: 'string', short: 'n', default: '5' },
    k: { type: 'string', short: 'k', default: '8' },
    r: { type: 'string', short: 'r', default: '3' },
    'early-stop': { type: 'boolean', default: false },
  },
});

const unique: string[] = [];
for await (const row of readDataset(resolve(repoRoot, '..', 'shared', 'datasets', 'sst2_test.jsonl'), { textColumn: 'input' })) unique.push(row.input);
const inputs = Array.from({ length: Number(values.rows) }, (_, i) => unique[i % unique.length]!);
const settings: TatraSettings = { ...DEFAULT_SETTINGS, n: Number(values.n), k: Number(values.k), r: Number(values.r), earlyStop: values['early-stop'] };

const task = await resolveTask('sst2');
const counter = await loadTokenCounter(await tinyModelPath());
const model: PlanModelInfo = { ...counter, spec: 'tiny', remote: false, price: null };
const lengths = assumedLengths(task, model);

// The bound: each row's prompts counted once, in a counter of its own (so nothing is cached from the plan).
const bound = await loadTokenCounter(await tinyModelPath());
let t0 = performance.now();
for (const input of inputs) {
  const text = input.trim();
  if (settings.n > 0) {
    await bound.counter.count(paraphrasePrompt(task, text, settings.n));
    bound.counter.countText(text);
  }
  await bound.counter.count(evaluationPrompt(task, [], text).prompt);
}
const boundMs = performance.now() - t0;
await bound.dispose();

// The event loop's longest wait: the gaps between ticks of a 1 ms timer, and the last one up to
// the plan's end (a loop the plan never lets turn has one gap, the whole plan).
let lastTick = performance.now();
let longestWait = 0;
const ticker = setInterval(() => {
  const now = performance.now();
  longestWait = Math.max(longestWait, now - lastTick);
  lastTick = now;
}, 1);
const rssBefore = process.memoryUsage().rss;
t0 = performance.now();
const { plan } = await planJob({ task, generator: model, evaluator: model, lengths, throughput: null, settings, inputs });
const planMs = performance.now() - t0;
clearInterval(ticker);
longestWait = Math.max(longestWait, performance.now() - lastTick);
const rssAfter = process.memoryUsage().rss;
await counter.dispose();
await disposeLlamaRuntime();

const perRow = (ms: number) => Number(((ms * 1000) / inputs.length).toFixed(1));
console.log(
  JSON.stringify(
    {
      rows: inputs.length,
      settings: { n: settings.n, k: settings.k, r: settings.r, earlyStop: settings.earlyStop },
      calls: plan.calls.total,
      planSeconds: Number((planMs / 1000).toFixed(2)),
      planMicrosecondsPerRow: perRow(planMs),
      boundMicrosecondsPerRow: perRow(boundMs),
      planOverBound: Number((planMs / boundMs).toFixed(2)),
      longestEventLoopWaitMs: Math.round(longestWait),
      rssGrowthMB: Math.round((rssAfter - rssBefore) / 2 ** 20),
    },
    null,
    2,
  ),
);
