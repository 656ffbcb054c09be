// What early decision saves on single inputs: each input classified twice on one loaded model,
// once deciding early (`tatra classify`'s default) and once running every run (--no-early-stop),
// with the model calls made and the wall time of each, and whether the labels agree (they must:
// the bench exits 1 when one does not).
//
//   npx tsx bench/early-stop.ts [--model ../shared/models/stories260K.gguf] [--task sst2] [--data FILE.jsonl]
//                              [--inputs 10] [-n 5 -k 8 -r 15] [--seed 1] [--threads 2] [--sequences 4]
//
// Each classify gets a fresh generator cache, so neither run reuses the other's examples or
// paraphrases; the two alternate which goes first, so neither always finds the page cache warm.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MemoryGenerationCache, classify } from '../electron/engine';
import { readDataset } from '../electron/jobs';
import type { TatraResult } from '../electron/common/tatra';
import { disposeLlamaRuntime, loadLlamaBackend } from '../electron/llama';
import { resolveTask } from '../electron/tasks';

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
  },
});

const task = await resolveTask(values.task);
const data = values.data ?? resolve(repoRoot, '..', 'shared', 'datasets', `${task.id}_test.jsonl`);
// The paper's JSONL, read as `tatra eval` reads it (its user message is the `input` column).
const inputs: string[] = [];
for await (const row of readDataset(data, { textColumn: 'input' })) {
  if (inputs.length >= Number(values.inputs)) break;
  inputs.push(row.input);
}
const settings = { n: Number(values.n), k: Number(values.k), r: Number(values.r), seed: Number(values.seed), scope: 'run' as const };

const backend = await loadLlamaBackend({ modelPath: resolve(values.model), threads: Number(values.threads), sequences: Number(values.sequences) });
const calls = (r: TatraResult) => r.stages.examples.calls + r.stages.paraphrases.calls + r.stages.evaluation.calls;
try {
  const once = async (input: string, earlyStop: boolean) => {
    const t0 = performance.now();
    const result = await classify({ task, input, settings: { ...settings, earlyStop }, generator: backend, evaluator: backend, cache: new MemoryGenerationCache() });
    return { result, seconds: (performance.now() - t0) / 1000 };
  };
  interface InputFigures {
    input: string;
    label: string | null;
    sameLabel: boolean;
    runsMade: number;
    votesCast: number;
    callsEarly: number;
    callsFull: number;
    callsSavedReported: number;
    secondsEarly: number;
    secondsFull: number;
  }
  const perInput: InputFigures[] = [];
  for (const [i, input] of inputs.entries()) {
    const early = i % 2 === 0 ? await once(input, true) : undefined;
    const full = await once(input, false);
    const e = early ?? (await once(input, true));
    const row: InputFigures = {
      input: input.length > 60 ? `${input.slice(0, 57)}...` : input,
      label: full.result.label,
      sameLabel: e.result.label === full.result.label,
      runsMade: e.result.runs.length,
      votesCast: e.result.votesCast,
      callsEarly: calls(e.result),
      callsFull: calls(full.result),
      callsSavedReported: e.result.callsSaved,
      secondsEarly: +e.seconds.toFixed(2),
      secondsFull: +full.seconds.toFixed(2),
    };
    perInput.push(row);
    process.stderr.write(`${i + 1}/${inputs.length} ${row.sameLabel ? 'same label' : 'LABELS DIFFER'}, runs ${row.runsMade}/${settings.r}, calls ${row.callsEarly}/${row.callsFull}, ${row.secondsEarly}s/${row.secondsFull}s\n`);
  }
  const total = (f: (r: InputFigures) => number) => perInput.reduce((a, r) => a + f(r), 0);
  const summary = {
    model: values.model,
    task: task.id,
    settings,
    threads: Number(values.threads),
    sequences: Number(values.sequences),
    inputs: perInput.length,
    labelsAgree: perInput.every((r) => r.sameLabel),
    decidedEarly: perInput.filter((r) => r.runsMade < settings.r).length,
    runsMade: total((r) => r.runsMade),
    runsFull: perInput.length * settings.r,
    callsEarly: total((r) => r.callsEarly),
    callsFull: total((r) => r.callsFull),
    callsSavedReported: total((r) => r.callsSavedReported),
    secondsEarly: +total((r) => r.secondsEarly).toFixed(1),
    secondsFull: +total((r) => r.secondsFull).toFixed(1),
    perInput,
  };
  console.log(JSON.stringify(summary, null, 2));
  if (!summary.labelsAgree) process.exitCode = 1;
} finally {
  await backend.dispose();
  await disposeLlamaRuntime();
}
