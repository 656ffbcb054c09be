// `tatra classify`: one input through TATRA on local GGUF models, with a vote breakdown (or one
// JSON object with everything). Thin: options are checked, the engine does the work.
import { setMaxListeners } from 'node:events';
import { type Command } from 'commander';
import { UserError } from '../../common/errors';
import { type OutputConstraint, type TatraEvent, type TatraResult, type TatraSettings } from '../../common/tatra';
import { labelNames, type TaskDefinition } from '../../common/task';
import { deterministicLine } from '../../common/reproducible';
import { type TatraBackend, MemoryGenerationCache, classify } from '../../engine';
import { resolveTask } from '../../tasks';
import { ModelPool, disposeLlamaRuntime, getLlamaRuntime } from '../../llama';
import {
  type ModelCliOptions,
  type TatraSettingsCliOptions,
  addEarlyStopOptions,
  addModelOptions,
  addRuntimeOptions,
  addTatraSettingsOptions,
  intOption,
  modelPathsFrom,
  readStdinIfPiped,
  remoteModelsFor,
  tatraSettingsFrom,
} from '../options';
import { userTasksDir } from './tasks';

interface ClassifyCliOptions extends TatraSettingsCliOptions, ModelCliOptions {
  task: string;
  threads?: number;
  contextSize?: number;
  sequences?: number;
  json?: boolean;
  dataDir?: string;
  earlyStop?: boolean;
}

function bar(share: number, width = 24): string {
  const full = Math.round(share * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function humanReport(task: TaskDefinition, result: TatraResult): string {
  const out: string[] = [];
  const total = Object.values(result.votes).reduce((a, b) => a + b, 0);
  const winner = result.label ?? '(no valid vote)';
  out.push(`${winner}  ${(result.confidence * 100).toFixed(0)}% of ${total} vote${total === 1 ? '' : 's'}${result.tieBreak !== 'none' ? `  (tie broken by ${result.tieBreak})` : ''}`);
  out.push('');
  const keys = task.kind === 'math' ? Object.keys(result.votes).sort((a, b) => (result.votes[b] ?? 0) - (result.votes[a] ?? 0)) : Object.keys(result.votes);
  const width = Math.max(...keys.map((k) => k.length), 5);
  for (const key of keys) {
    const count = result.votes[key] ?? 0;
    out.push(`  ${key.padEnd(width)}  ${bar(total > 0 ? count / total : 0)}  ${String(count).padStart(3)}`);
  }
  out.push('');
  for (const [stage, s] of Object.entries(result.stages)) {
    out.push(`  ${stage.padEnd(12)} ${String(s.calls).padStart(4)} calls  ${String(s.promptTokens).padStart(7)} prompt + ${String(s.completionTokens).padStart(6)} generated tokens  ${seconds(s.ms).padStart(8)}`);
  }
  out.push(`  ${'total'.padEnd(12)} ${seconds(result.totalMs)}`);
  out.push('');
  if (result.decidedEarly) {
    out.push(`  decided early after ${result.runs.length} of ${result.settings.r} runs: ${result.votesCast} votes cast, ${result.callsSaved} model calls saved (the rest could not change the winner)`);
  }
  out.push(`  ${deterministicLine(result.deterministic, 'result')}`);
  const notes: string[] = [];
  if (result.filteredExamples > 0) notes.push(`${result.filteredExamples} generated example${result.filteredExamples === 1 ? '' : 's'} dropped by validation`);
  if (result.fallbacks > 0) notes.push(`paraphrases fell back (padded or copies of the input) in ${result.fallbacks} run${result.fallbacks === 1 ? '' : 's'}`);
  const noVote = result.runs.reduce((s, r) => s + r.predictions.filter((p) => p.label === null).length, 0);
  if (noVote > 0) notes.push(`${noVote} prediction${noVote === 1 ? '' : 's'} gave no valid answer`);
  const constraint = constraintNote(result.constrained);
  if (constraint) notes.push(constraint);
  if (notes.length > 0) out.push('', ...notes.map((n) => `  note: ${n}`));
  return out.join('\n');
}

const CONSTRAINT_WORDS: Record<OutputConstraint, string> = {
  grammar: 'held to the grammar',
  choice: 'held to the label choice',
  'json-schema': 'held to a JSON-schema enum',
  none: 'unconstrained (parsed and validated only)',
};

/** A note when some outputs were not held to the engine's grammar (a remote server without GBNF). */
function constraintNote(c: TatraResult['constrained']): string | null {
  if (c.generator === 'grammar' && c.evaluator === 'grammar') return null;
  return `generator outputs ${CONSTRAINT_WORDS[c.generator]}; evaluator outputs ${CONSTRAINT_WORDS[c.evaluator]}`;
}

/** Live progress on a terminal's stderr: one line, rewritten. */
function progressReporter(settings: TatraSettings, labels: number): ((e: TatraEvent) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  const predictionsWanted = settings.r * (settings.n + 1);
  let examples = 0;
  let paraphrases = 0;
  let predictions = 0;
  const examplesWanted = settings.r * Math.max(1, labels);
  const show = (text: string) => process.stderr.write(`\r\x1b[2K${text}`);
  return (e) => {
    if (e.type === 'run-start' && e.run === 0) show(`generating examples for ${settings.r} run${settings.r === 1 ? '' : 's'}...`);
    else if (e.type === 'examples') show(`examples ${++examples}/${examplesWanted}`);
    else if (e.type === 'paraphrases') show(`paraphrases ${++paraphrases}/${settings.r}`);
    else if (e.type === 'prediction') show(`predictions ${++predictions}/${predictionsWanted}`);
    else if (e.type === 'done') process.stderr.write('\r\x1b[2K');
  };
}

async function readText(words: string[]): Promise<string> {
  const fromArgs = words.join(' ');
  if (fromArgs.trim() !== '') return fromArgs;
  const piped = await readStdinIfPiped();
  if (piped !== undefined && piped.trim() !== '') return piped.trim();
  throw new UserError('no text to classify: give it as an argument or on stdin', 'input_empty');
}

export function registerClassify(program: Command): void {
  const cmd = program
    .command('classify')
    .description('classify one text with TATRA (synthetic examples, paraphrases, majority vote)')
    .argument('[text...]', 'the text to classify (or pipe it on stdin)')
    .requiredOption('--task <id|file>', 'task id (see `tatra tasks list`) or a task JSON file');
  addEarlyStopOptions(addRuntimeOptions(addTatraSettingsOptions(addModelOptions(cmd))), true)
    .option('--sequences <N>', 'parallel sequences per model (default 4); 1 decodes one request at a time', intOption('--sequences', 1, 64))
    .option('--data-dir <dir>', 'data folder holding your tasks')
    .option('--json', 'print one JSON object with everything')
    .action(async (words: string[], opts: ClassifyCliOptions) => {
      const task = await resolveTask(opts.task, { userDir: userTasksDir(opts.dataDir) });
      const { generator: generatorPath, evaluator: evaluatorPath } = modelPathsFrom(opts);
      const input = await readText(words);
      // A single input stops once its vote is decided unless told otherwise: the label is the same.
      const settings = { ...tatraSettingsFrom(opts), earlyStop: opts.earlyStop ?? true };

      // The process's Llama first: when node-llama-cpp's bindings are first loaded by the GGUF
      // check (GgufInsights without a Llama), llama.cpp's load warnings later bypass our logger
      // and land on stdout, which would corrupt --json.
      await getLlamaRuntime();
      const pool = new ModelPool({
        remote: remoteModelsFor(opts.dataDir),
        defaults: {
          ...(opts.threads !== undefined ? { threads: opts.threads } : {}),
          ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}),
          ...(opts.sequences !== undefined ? { sequences: opts.sequences } : {}),
        },
      });
      const controller = new AbortController();
      // Every in-flight model request listens on this one signal (dozens at once for r > 2), which
      // is by design, not a leak: without this Node prints MaxListenersExceededWarning on stderr.
      setMaxListeners(0, controller.signal);
      const onSigint = () => controller.abort();
      process.once('SIGINT', onSigint);
      const leases: { release(): Promise<void> }[] = [];
      try {
        const acquire = async (path: string): Promise<TatraBackend> => {
          const lease = await pool.acquire(path, { signal: controller.signal });
          leases.push(lease);
          return lease.backend;
        };
        const generator = await acquire(generatorPath);
        const evaluator = await acquire(evaluatorPath);
        const result = await classify({
          task,
          input,
          settings,
          generator,
          evaluator,
          cache: new MemoryGenerationCache(),
          signal: controller.signal,
          ...(opts.json ? {} : { onEvent: progressReporter(settings, labelNames(task).length) }),
        });
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ task: task.id, generator: generatorPath, evaluator: evaluatorPath, ...result })}\n`);
        } else {
          process.stdout.write(`${humanReport(task, result)}\n`);
        }
      } finally {
        process.off('SIGINT', onSigint);
        for (const lease of leases) await lease.release();
        await pool.dispose();
        await disposeLlamaRuntime();
      }
    });
}
