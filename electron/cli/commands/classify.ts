// `tatra classify`: one input through TATRA on local GGUF models, with a vote breakdown (or one
// JSON object with everything). Thin: options are checked, the engine does the work.
import { type Command } from 'commander';
import { UserError } from '../../common/errors';
import { confidentStopPromise, withEarlyStop } from '../../common/settings';
import { type OutputConstraint, type TatraEvent, type TatraResult, type TatraSettings } from '../../common/tatra';
import { labelNames, type TaskDefinition } from '../../common/task';
import { deterministicLine } from '../../common/reproducible';
import { MemoryGenerationCache } from '../../engine';
import { classifyWithHeld } from '../../hold';
import {
  type ModelCliOptions,
  type TatraSettingsCliOptions,
  addEarlyStopOptions,
  addModelOptions,
  addRuntimeOptions,
  addTatraSettingsOptions,
  earlyStopFrom,
  type EarlyStopCliValue,
  intOption,
  modelsFrom,
  readStdinIfPiped,
  tatraSettingsFrom,
} from '../options';
import { startLlamaFor, withCliServices } from '../session';
import { type PlanCliOptions, addPlanOptions, priceFrom, printPlan } from '../plan';
import { duration, interruptSignal, out, outJson, pct, plural, statusLine, stderrIsTerminal } from '../ui';

interface ClassifyCliOptions extends TatraSettingsCliOptions, ModelCliOptions, PlanCliOptions {
  task: string;
  threads?: number;
  contextSize?: number;
  sequences?: number;
  json?: boolean;
  dataDir?: string;
  earlyStop?: EarlyStopCliValue;
}

function bar(share: number, width = 24): string {
  const full = Math.round(share * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

function formatRisk(p: number): string {
  return p === 0 ? '0' : p < 0.001 ? p.toExponential(1) : p.toFixed(3);
}

function humanReport(task: TaskDefinition, result: TatraResult): string {
  const lines: string[] = [];
  const total = Object.values(result.votes).reduce((a, b) => a + b, 0);
  const winner = result.label ?? '(no valid vote)';
  lines.push(`${winner}  ${pct(result.confidence, { digits: 0 })} of ${plural(total, 'vote')}${result.tieBreak !== 'none' ? `  (tie broken by ${result.tieBreak})` : ''}`);
  lines.push('');
  const keys = task.kind === 'math' ? Object.keys(result.votes).sort((a, b) => (result.votes[b] ?? 0) - (result.votes[a] ?? 0)) : Object.keys(result.votes);
  const width = Math.max(...keys.map((k) => k.length), 5);
  for (const key of keys) {
    const count = result.votes[key] ?? 0;
    lines.push(`  ${key.padEnd(width)}  ${bar(total > 0 ? count / total : 0)}  ${String(count).padStart(3)}`);
  }
  lines.push('');
  for (const [stage, s] of Object.entries(result.stages)) {
    lines.push(`  ${stage.padEnd(12)} ${String(s.calls).padStart(4)} calls  ${String(s.promptTokens).padStart(7)} prompt + ${String(s.completionTokens).padStart(6)} generated tokens  ${duration(s.ms).padStart(8)}`);
  }
  lines.push(`  ${'total'.padEnd(12)} ${duration(result.totalMs)}`);
  lines.push('');
  if (result.decidedEarly) {
    const why =
      result.earlyStop?.rule === 'confident'
        ? `its risk of another label at the stop was ${formatRisk(result.earlyStop.risk ?? 0)}; at ${result.earlyStop.p} ${confidentStopPromise(result.earlyStop.p)}`
        : 'the rest could not change the winner';
    lines.push(`  decided early after ${result.runs.length} of ${result.settings.r} runs: ${result.votesCast} votes cast, ${result.callsSaved} model calls saved (${why})`);
  }
  lines.push(`  ${deterministicLine(result.deterministic, 'result')}`);
  const notes: string[] = [];
  if (result.filteredExamples > 0) notes.push(`${result.filteredExamples} generated example${result.filteredExamples === 1 ? '' : 's'} dropped by validation`);
  if (result.fallbacks > 0) notes.push(`paraphrases fell back (padded or copies of the input) in ${result.fallbacks} run${result.fallbacks === 1 ? '' : 's'}`);
  const noVote = result.runs.reduce((s, r) => s + r.predictions.filter((p) => p.label === null).length, 0);
  if (noVote > 0) notes.push(`${noVote} prediction${noVote === 1 ? '' : 's'} gave no valid answer`);
  const constraint = constraintNote(result.constrained);
  if (constraint) notes.push(constraint);
  if (notes.length > 0) lines.push('', ...notes.map((n) => `  note: ${n}`));
  return lines.join('\n');
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
  if (!stderrIsTerminal()) return undefined;
  const predictionsWanted = settings.r * (settings.n + 1);
  let examples = 0;
  let paraphrases = 0;
  let predictions = 0;
  const examplesWanted = settings.r * Math.max(1, labels);
  const show = statusLine;
  return (e) => {
    if (e.type === 'run-start' && e.run === 0) show(`generating examples for ${settings.r} run${settings.r === 1 ? '' : 's'}...`);
    else if (e.type === 'examples') show(`examples ${++examples}/${examplesWanted}`);
    else if (e.type === 'paraphrases') show(`paraphrases ${++paraphrases}/${settings.r}`);
    else if (e.type === 'prediction') show(`predictions ${++predictions}/${predictionsWanted}`);
    else if (e.type === 'done') statusLine('');
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
  addPlanOptions(addEarlyStopOptions(addRuntimeOptions(addTatraSettingsOptions(addModelOptions(cmd))), 'input', { textArgument: true }))
    .option('--sequences <N>', 'parallel sequences per model (default 4); 1 decodes one request at a time', intOption('--sequences', 1, 64))
    .option('--data-dir <dir>', 'data folder holding your tasks')
    .option('--json', 'print one JSON object with everything')
    .action(async (words: string[], opts: ClassifyCliOptions) => {
      await withCliServices(opts, async (services) => {
        const task = await services.tasks.resolve(opts.task);
        const { generator, evaluator } = modelsFrom(opts);
        // `--early-stop an unforgettable film`: the value the option took is the text's first word.
        const early = opts.earlyStop;
        const input = await readText(typeof early === 'object' && 'text' in early ? [early.text, ...words] : words);
        const settings = withEarlyStop({ ...tatraSettingsFrom(opts), ...earlyStopFrom(opts.earlyStop) }, 'input');
        if (opts.dryRun) {
          const price = priceFrom(opts);
          const plan = await services.planner().classify({ task, settings, generator, evaluator, input, ...(price ? { price } : {}), ...(opts.calibrate ? { calibrate: { pool: services.pool } } : {}) });
          return printPlan(plan, opts.json === true);
        }

        await startLlamaFor([generator, evaluator]);
        const { signal, off } = interruptSignal();
        try {
          const result = await classifyWithHeld(services.pool, {
            task,
            input,
            settings,
            generator,
            evaluator,
            cache: new MemoryGenerationCache(),
            signal,
            ...(opts.json ? {} : { onEvent: progressReporter(settings, labelNames(task).length) }),
          });
          if (opts.json) outJson({ task: task.id, generator: generator.text, evaluator: evaluator.text, ...result });
          else out(humanReport(task, result));
        } finally {
          off();
        }
      });
    });
}
