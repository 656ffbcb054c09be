// Prompt templates, in our own words, carrying the constraints of docs/method.md §4, §6 and §7. Everything
// task-specific comes from the task file; the kinds (classification, multiple choice, math) only
// change the shape of an example.
import { type Example } from '../common/tatra';
import { type TaskDefinition, answerLabels, labelNames } from '../common/task';
import { type ChatPrompt } from './backend';
import { type ExampleShape } from './label-split';
import { answerNameOf, quoteSafe } from './parse';

function kindNoun(task: TaskDefinition): string {
  if (task.kind === 'math') return 'math problems';
  if (task.kind === 'multiple_choice') return 'multiple-choice questions';
  return 'labelled examples';
}

/** Generator prompt for one label's examples (label null: a math task's whole set). */
export function examplePrompt(task: TaskDefinition, label: string | null, shapes: readonly ExampleShape[]): ChatPrompt {
  const answerName = answerNameOf(task);
  const count = shapes.length;
  const options = task.options ?? labelNames(task);
  const placeholder =
    task.kind === 'multiple_choice'
      ? `<question text> ${options.map((o) => `${o}: <option>`).join(' ')}`
      : task.kind === 'math'
        ? '<problem>'
        : '<text>';
  const answerShown = label ?? '<answer>';
  const format = [1, 2]
    .filter((i) => i <= count)
    .map((i) => `Example${i}:\n${task.inputName}: "${placeholder}"\n${answerName}: ${answerShown}`)
    .join('\n\n');
  const labelDef = label !== null ? task.labels.find((l) => l.name === label) : undefined;

  const system = `You write training examples for a few-shot prompt. Task: ${task.name}. ${task.description}`.trim();
  const lines: string[] = [];
  lines.push(`Write exactly ${count} ${kindNoun(task)}, in this format and nothing else:`);
  lines.push('');
  lines.push(format + (count > 2 ? `\n\n... up to Example${count}.` : ''));
  lines.push('');
  if (label !== null) lines.push(`Every example's label is: ${label}`);
  lines.push('');
  lines.push('Plan for the examples (follow it):');
  for (const item of shapes) {
    lines.push(
      task.kind === 'classification'
        ? `- Example${item.index}: exactly ${item.sentences} sentence${item.sentences === 1 ? '' : 's'}, about ${item.topic}.`
        : `- Example${item.index}: topic ${item.topic}.`,
    );
  }
  lines.push('');
  lines.push('Rules:');
  if (task.kind === 'classification') {
    lines.push('- Give each example exactly the number of sentences the plan asks for; keep sentences short (about 3 to 14 words).');
    lines.push(`- One ${task.inputName} line per example; several sentences go inside the same quotes, separated by a space.`);
  }
  if (task.kind === 'multiple_choice') {
    lines.push(`- Each question lists every option, ${options.map((o) => `${o}:`).join(' ')}, inside the quotes.`);
    lines.push(`- The correct option is always ${label ?? options[0]}; make the scenario realistic and the other options plausible but wrong.`);
  }
  if (task.kind === 'math') {
    lines.push('- Each problem is well-formed and solvable; its answer is the correct final result.');
    lines.push(task.answerFormat === 'integer' ? '- Every answer is a whole number, written with digits only.' : '- Write math in TeX; the answer is a short expression.');
  }
  if (labelDef && labelDef.style.length > 0) lines.push(`- Style for ${label}: ${labelDef.style.join('; ')}.`);
  lines.push('- ASCII characters only; no double quotes inside the text; no Markdown or code fences.');
  lines.push('- Output the examples only: no title, no explanation, nothing after the last one.');
  return { system, user: lines.join('\n').replace(/\n{3,}/g, '\n\n') };
}

/** Generator prompt for n paraphrases of one input. */
export function paraphrasePrompt(task: TaskDefinition, input: string, n: number): ChatPrompt {
  return {
    system: `You reword inputs for the task "${task.name}" without changing what matters for it.`,
    user: [
      `Write exactly ${n} different paraphrase${n === 1 ? '' : 's'} of the ${task.inputName.toLowerCase()} below.`,
      `Keep ${task.preserve} unchanged.`,
      'Put one paraphrase on each line. No numbering, no bullets, no quotes, no comments.',
      '',
      `${task.inputName}:`,
      input,
    ].join('\n'),
  };
}

/** How one example appears in the evaluator's prompt. */
export function formatExample(task: TaskDefinition, ex: Example): string {
  const answerName = answerNameOf(task);
  if (task.kind === 'classification') return `${task.inputName}: "${quoteSafe(ex.text)}"\n${answerName}: ${ex.label}`;
  return `${task.inputName}: ${ex.text}\n${answerName}: ${ex.label}`;
}

// A run's examples are one array shared by every candidate of every row of a job: their text is
// built once per array, not once per evaluator call (examples and tasks are never changed in place).
const prefixes = new WeakMap<readonly Example[], { task: TaskDefinition; prefix: string }>();
const systems = new WeakMap<TaskDefinition, string>();

/** The part of the evaluator's user turn shared by every candidate of a run: the examples. */
export function evaluationPrefix(task: TaskDefinition, examples: readonly Example[]): string {
  if (examples.length === 0) return '';
  const known = prefixes.get(examples);
  if (known?.task === task) return known.prefix;
  const prefix = `${examples.map((ex) => formatExample(task, ex)).join('\n\n')}\n\n`;
  prefixes.set(examples, { task, prefix });
  return prefix;
}

/** What follows the examples: the candidate and the line that elicits the answer. */
export function evaluationSuffix(task: TaskDefinition, candidate: string): string {
  const answerName = answerNameOf(task);
  if (task.kind === 'classification') return `${task.inputName}: "${quoteSafe(candidate)}"\n${answerName}:`;
  return `${task.inputName}: ${candidate}\n${answerName}:`;
}

/** The evaluator's system turn: the task's instruction, plus the output rule for its kind. */
export function evaluationSystem(task: TaskDefinition): string {
  let system = systems.get(task);
  if (system === undefined) {
    system = systemFor(task);
    systems.set(task, system);
  }
  return system;
}

function systemFor(task: TaskDefinition): string {
  if (task.kind === 'math') {
    return `${task.instruction}\nReason briefly, then end with a last line of the form "Final Answer: <answer>".`;
  }
  return `${task.instruction}\nAnswer with exactly one of: ${answerLabels(task).join(', ')}. Nothing else.`;
}

/** The evaluator prompt for one candidate, and how much of its user turn every candidate of the run shares. */
export function evaluationPrompt(task: TaskDefinition, examples: readonly Example[], candidate: string): { prompt: ChatPrompt; sharedUserPrefixLength: number } {
  const prefix = evaluationPrefix(task, examples);
  return {
    prompt: { system: evaluationSystem(task), user: prefix + evaluationSuffix(task, candidate) },
    sharedUserPrefixLength: prefix.length,
  };
}
