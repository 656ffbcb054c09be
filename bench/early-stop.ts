// What stopping early saves, and what it costs in agreement with the full vote, for the exact
// rule and the confident rule at P = 0.95 and 0.99:
//
//   1. stories260K (a real model): each SST-2 input classified with every run (the full vote),
//      then with each rule, on one loaded model; model calls and seconds of each, and whether
//      the label equals the full vote's (the exact rule must always agree: exit 1 otherwise).
//   2. a scripted noisy evaluator: every vote is right with probability q (else one of the other
//      labels at random), independently, for several q and many inputs; calls saved and agreement
//      with the full vote over the same votes. This is not the confident rule's own model (it
//      assumes the shares are drawn from a uniform Dirichlet): it shows how the promise holds
//      when the votes' rate is fixed.
//
//   npx tsx bench/early-stop.ts [--model ../shared/models/stories260K.gguf] [--task sst2] [--data FILE.jsonl]
//                              [--inputs 10] [-n 5 -k 8 -r 15] [--seed 1] [--threads 2] [--sequences 4]
//                              [--scripted-inputs 2000] [--q 0.55,0.6,0.7,0.8,0.9] [--labels 2]
//
// Each classify gets a fresh generator cache, so none reuses another's examples or paraphrases;
// on the real model the order of the four classifies rotates from input to input, so none always
// finds the page cache warm.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MemoryGenerationCache, classify, seededRandom } from '../electron/engine';
import { readDataset } from '../electron/jobs';
import { TaskDefinition } from '../electron/common/task';
import type { TatraResult, TatraSettings } from '../electron/common/tatra';
import type { TatraBackend } from '../electron/engine/backend';
import { disposeLlamaRuntime, loadLlamaBackend } from '../electron/llama';
import { resolveTask } from '../electron/tasks';
import { ScriptedBackend, politeScript } from '../test/helpers/scripted-backend';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    model: { type: 'string', default: resolve(repoRoot, '..', 'shared', 'models', 'stories260K.gguf') },
    task: { type: 'string', default: 'sst2' },
    data: { type: 'string' },
    inputs: { type: 'string', default: '10' },
    n: { type: 'string', short: 'n', default: '5' },
    k: { type: 'string', short: 'k', default: '8' },
    r: { type: 'string', short: 'r', default: '15' },
    seed: { type: 'string', default: '1' },
    threads: { type: 'string', default: '2' },
    sequences: { type: 'string', default: '4' },
    'scripted-inputs': { type: 'string', default: '2000' },
    q: { type: 'string', default: '0.55,0.6,0.7,0.8,0.9' },
    labels: { type: 'string', default: '2' },
  },
});

/** The rules compared with the full vote. */
const RULES: { name: string; settings: Pick<TatraSettings, 'earlyStop' | 'earlyStopConfidence'> }[] = [
  { name: 'exact', settings: { earlyStop: true } },
  { name: 'confident:0.99', settings: { earlyStop: true, earlyStopConfidence: 0.99 } },
  { name: 'confident:0.95', settings: { earlyStop: true, earlyStopConfidence: 0.95 } },
];

const calls = (r: TatraResult) => r.stages.examples.calls + r.stages.paraphrases.calls + r.stages.evaluation.calls;

interface RuleTotals {
  rule: string;
  inputs: number;
  agree: number;
  agreement: number;
  calls: number;
  callsFull: number;
  callsSaved: number;
  /** calls saved / calls of the full vote */
  savedShare: number;
  runs: number;
  runsFull: number;
  seconds?: number;
  secondsFull?: number;
}

function summarise(rule: string, rows: { agree: boolean; calls: number; callsFull: number; runs: number; runsFull: number; seconds?: number; secondsFull?: number }[]): RuleTotals {
  const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((a, r) => a + f(r), 0);
  const callsFull = sum((r) => r.callsFull);
  const c = sum((r) => r.calls);
  const out: RuleTotals = {
    rule,
    inputs: rows.length,
    agree: rows.filter((r) => r.agree).length,
    agreement: +(rows.filter((r) => r.agree).length / Math.max(1, rows.length)).toFixed(4),
    calls: c,
    callsFull,
    callsSaved: callsFull - c,
    savedShare: +((callsFull - c) / Math.max(1, callsFull)).toFixed(4),
    runs: sum((r) => r.runs),
    runsFull: sum((r) => r.runsFull),
  };
  if (rows.every((r) => r.seconds !== undefined)) {
    out.seconds = +sum((r) => r.seconds!).toFixed(1);
    out.secondsFull = +sum((r) => r.secondsFull!).toFixed(1);
  }
  return out;
}

const settings: TatraSettings = { n: Number(values.n), k: Number(values.k), r: Number(values.r), seed: Number(values.seed), scope: 'run' };

// ---------------------------------------------------------------- 1. stories260K

async function realModel() {
  const task = await resolveTask(values.task);
  const data = values.data ?? resolve(repoRoot, '..', 'shared', 'datasets', `${task.id}_test.jsonl`);
  // The paper's JSONL, read as `tatra eval` reads it (its user message is the `input` column).
  const inputs: string[] = [];
  for await (const row of readDataset(data, { textColumn: 'input' })) {
    if (inputs.length >= Number(values.inputs)) break;
    inputs.push(row.input);
  }
  const backend = await loadLlamaBackend({ modelPath: resolve(values.model), threads: Number(values.threads), sequences: Number(values.sequences) });
  try {
    const once = async (input: string, extra: Pick<TatraSettings, 'earlyStop' | 'earlyStopConfidence'>) => {
      const t0 = performance.now();
      const result = await classify({ task, input, settings: { ...settings, ...extra }, generator: backend, evaluator: backend, cache: new MemoryGenerationCache() });
      return { result, seconds: (performance.now() - t0) / 1000 };
    };
    const perRule = new Map<string, Parameters<typeof summarise>[1]>(RULES.map((r) => [r.name, []]));
    const perInput: unknown[] = [];
    for (const [i, input] of inputs.entries()) {
      const plans = [{ name: 'full', settings: { earlyStop: false } }, ...RULES];
      // Rotate which runs first.
      const order = plans.map((_, j) => plans[(i + j) % plans.length]!);
      const got = new Map<string, Awaited<ReturnType<typeof once>>>();
      for (const p of order) got.set(p.name, await once(input, p.settings));
      const full = got.get('full')!;
      const line: Record<string, unknown> = { input: input.length > 50 ? `${input.slice(0, 47)}...` : input, label: full.result.label, callsFull: calls(full.result) };
      for (const rule of RULES) {
        const e = got.get(rule.name)!;
        const agree = e.result.label === full.result.label;
        perRule.get(rule.name)!.push({ agree, calls: calls(e.result), callsFull: calls(full.result), runs: e.result.runs.length, runsFull: settings.r, seconds: e.seconds, secondsFull: full.seconds });
        line[rule.name] = { label: e.result.label, agree, runs: e.result.runs.length, calls: calls(e.result), risk: e.result.earlyStop?.risk ?? null };
      }
      perInput.push(line);
      process.stderr.write(`stories260K ${i + 1}/${inputs.length}: ${RULES.map((r) => `${r.name} ${perRule.get(r.name)!.at(-1)!.runs}/${settings.r} runs${perRule.get(r.name)!.at(-1)!.agree ? '' : ' DIFFERS'}`).join(', ')}\n`);
    }
    return { model: values.model, task: task.id, settings, threads: Number(values.threads), sequences: Number(values.sequences), rules: RULES.map((r) => summarise(r.name, perRule.get(r.name)!)), perInput };
  } finally {
    await backend.dispose();
    await disposeLlamaRuntime();
  }
}

// ---------------------------------------------------------------- 2. scripted noisy evaluator

async function noisyEvaluator() {
  const labelCount = Number(values.labels);
  const labels = Array.from({ length: labelCount }, (_, i) => `label${i}`);
  const task = TaskDefinition.parse({
    id: 'noisy',
    name: 'Noisy votes',
    kind: 'classification',
    labels: labels.map((name) => ({ name })),
    instruction: 'Classify.',
    inputName: 'Sentence',
    topics: ['t'],
    preserve: 'meaning',
    evaluatorMaxTokens: 4,
  });
  const gold = labels[0]!;
  const qs = values.q.split(',').map(Number);
  const inputs = Number(values['scripted-inputs']);
  const results = [];
  for (const q of qs) {
    const perRule = new Map<string, Parameters<typeof summarise>[1]>(RULES.map((r) => [r.name, []]));
    let fullRight = 0;
    for (let i = 0; i < inputs; i++) {
      const rand = seededRandom(Math.round(q * 1e6) + i);
      // One fixed vote per evaluated prompt, so every rule sees the very votes of the full pipeline.
      const votes = new Map<string, string>();
      const script = politeScript({
        answer: (_candidate, req) => {
          let v = votes.get(req.prompt.user);
          if (v === undefined) {
            v = rand() < q ? gold : labels[1 + Math.floor(rand() * (labelCount - 1))]!;
            votes.set(req.prompt.user, v);
          }
          return v;
        },
      });
      const run = async (extra: Pick<TatraSettings, 'earlyStop' | 'earlyStopConfidence'>) => {
        const backend: TatraBackend = new ScriptedBackend(script);
        return classify({ task, input: `input ${i}`, settings: { ...settings, ...extra }, generator: backend, evaluator: backend, cache: new MemoryGenerationCache() });
      };
      const full = await run({ earlyStop: false });
      if (full.label === gold) fullRight++;
      for (const rule of RULES) {
        const e = await run(rule.settings);
        perRule.get(rule.name)!.push({ agree: e.label === full.label, calls: calls(e), callsFull: calls(full), runs: e.runs.length, runsFull: settings.r });
      }
    }
    results.push({ q, fullVoteAccuracy: +(fullRight / inputs).toFixed(4), rules: RULES.map((r) => summarise(r.name, perRule.get(r.name)!)) });
    process.stderr.write(`noisy q=${q}: ${RULES.map((r) => `${r.name} agreement ${summarise(r.name, perRule.get(r.name)!).agreement}, saved ${summarise(r.name, perRule.get(r.name)!).savedShare}`).join('; ')}\n`);
  }
  return { labels: labelCount, inputs, settings, results };
}

const noisy = await noisyEvaluator();
const stories = Number(values.inputs) > 0 ? await realModel() : null;
console.log(JSON.stringify({ stories260K: stories, noisyEvaluator: noisy }, null, 2));
// The exact rule is exact: any disagreement is a bug.
const exactMisses = [...(stories?.rules ?? []), ...noisy.results.flatMap((r) => r.rules)].filter((r) => r.rule === 'exact' && r.agree !== r.inputs);
if (exactMisses.length > 0) process.exitCode = 1;
