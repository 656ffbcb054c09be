// GBNF grammars that make even a model writing gibberish produce well-formed data: the example
// format, exactly n paraphrase lines, one label of the set, and bounded reasoning followed by
// `Final Answer:` for math. Every free-text rule is bounded and limited to printable ASCII, so a
// completion always fits in a token budget of one token per character (see maxTokens helpers).
import { type TaskDefinition, answerLabels, labelNames } from '../common/task';
import { type ExampleShape } from './label-split';
import { answerNameOf } from './parse';

/** A GBNF string literal. */
export function gbnfLiteral(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}"`;
}

/** `first rest{0,max-1}`: one to `max` characters, the first drawn from `first`. */
function bounded(first: string, rest: string, max: number): string {
  return max <= 1 ? first : `${first} ${rest}{0,${max - 1}}`;
}

// Free text starts with a letter or digit: a model with nothing to say cannot produce an example
// or a line made only of punctuation, which validation would have to drop.
/** Printable ASCII without the double quote, for text inside quotes. */
const TEXT_FIRST = '[A-Za-z0-9]';
const TEXT_REST = '[ -!#-~]';
/** Printable ASCII. */
const LINE_FIRST = '[A-Za-z0-9]';
const LINE_REST = '[ -~]';
/** Math may open with TeX or a sign: `\\frac`, `$x$`, `-3`, `(1, 2)`. */
const MATH_FIRST = '[A-Za-z0-9$(\\\\-]';
/** Any printable ASCII but space. */
const ANY_FIRST = '[!-~]';

/** Characters a generated example's text may take: 100 per planned sentence (3-14 words each). */
export function exampleTextLimit(task: TaskDefinition, item: ExampleShape): number {
  if (task.kind === 'multiple_choice') return 400;
  if (task.kind === 'math') return 300;
  return 100 * item.sentences;
}

const OPTION_LIMIT = 60;
const MATH_ANSWER_LIMIT = 40;

function exampleHeader(task: TaskDefinition, index: number): string {
  return `Example${index}:\n${task.inputName}: "`;
}

/** Grammar for one label call (label null for math): exactly `shapes.length` examples in the strict format. */
export function exampleGrammar(task: TaskDefinition, label: string | null, shapes: readonly ExampleShape[]): string {
  const answerName = answerNameOf(task);
  const rules: string[] = [];
  const parts: string[] = [];
  const options = task.options ?? labelNames(task);
  shapes.forEach((item, i) => {
    const last = i === shapes.length - 1;
    const answer = label !== null ? gbnfLiteral(label + (last ? '' : '\n\n')) : `ans${i} ${last ? '' : gbnfLiteral('\n\n')}`.trim();
    parts.push(`ex${i}`);
    rules.push(`ex${i} ::= ${gbnfLiteral(exampleHeader(task, item.index))} text${i} ${gbnfLiteral(`"\n${answerName}: `)} ${answer}`);
    if (task.kind === 'multiple_choice') {
      const opts = options.map((o) => `${gbnfLiteral(` ${o}: `)} option`).join(' ');
      rules.push(`text${i} ::= ${bounded(TEXT_FIRST, TEXT_REST, exampleTextLimit(task, item))} ${opts}`);
    } else {
      rules.push(`text${i} ::= ${bounded(task.kind === 'math' ? MATH_FIRST : TEXT_FIRST, TEXT_REST, exampleTextLimit(task, item))}`);
    }
    if (label === null) rules.push(`ans${i} ::= ${mathAnswerRule(task)}`);
  });
  if (task.kind === 'multiple_choice') rules.push(`option ::= ${bounded(TEXT_FIRST, TEXT_REST, OPTION_LIMIT)}`);
  return [`root ::= ${parts.join(' ')}`, ...rules].join('\n');
}

/** Token budget that always fits an example call's grammar (a token is at least one character). */
export function exampleMaxTokens(task: TaskDefinition, label: string | null, shapes: readonly ExampleShape[]): number {
  const answerName = answerNameOf(task);
  const optionCount = (task.options ?? labelNames(task)).length;
  let chars = 0;
  for (const item of shapes) {
    chars += exampleHeader(task, item.index).length + exampleTextLimit(task, item) + 3 + answerName.length + 2;
    chars += label !== null ? label.length : MATH_ANSWER_LIMIT;
    if (task.kind === 'multiple_choice') chars += optionCount * (OPTION_LIMIT + 6);
    chars += 2;
  }
  return chars + 8;
}

function mathAnswerRule(task: TaskDefinition): string {
  return task.answerFormat === 'integer' ? `"-"? [0-9] [0-9,]{0,14}` : bounded(ANY_FIRST, LINE_REST, MATH_ANSWER_LIMIT);
}

/** Longest paraphrase line the grammar allows for an input: room to reword, not to ramble. */
export function paraphraseLineLimit(input: string): number {
  return Math.min(600, Math.max(40, Math.ceil(input.length * 1.5) + 20));
}

/** Exactly n non-empty bounded lines. */
export function paraphraseGrammar(n: number, lineLimit: number): string {
  if (n <= 0) return 'root ::= ""';
  const lines = Array.from({ length: n }, () => 'line').join(' "\\n" ');
  return `root ::= ${lines}\nline ::= ${bounded(LINE_FIRST, LINE_REST, lineLimit)}`;
}

/** What the evaluator may answer: one label of the set (plus the abstain label), or for math bounded reasoning then `Final Answer: <answer>`. */
export function evaluationGrammar(task: TaskDefinition): string {
  if (task.kind === 'math') {
    const budget = mathReasoningLimit(task);
    const reasoning = budget > 0 ? `(reasoning "\\n")? ` : '';
    const lines = budget > 0 ? `\nreasoning ::= ${bounded(ANY_FIRST, '[ -~\\n]', budget)}` : '';
    return `root ::= ${reasoning}"Final Answer: " answer${lines}\nanswer ::= ${mathAnswerRule(task)}`;
  }
  return `root ::= ${answerLabels(task).map(gbnfLiteral).join(' | ')}`;
}

/**
 * Characters of reasoning allowed before the final line: generous (about four characters a token,
 * like English prose), so a real model's step-by-step reasoning is not squeezed. The token limit
 * decides where a long answer stops; an answer cut off before its final line is finished by a
 * short second call (finalAnswerGrammar), so it still votes.
 */
export function mathReasoningLimit(task: TaskDefinition): number {
  return Math.max(0, task.evaluatorMaxTokens * 4);
}

/** New tokens allowed for the second call that writes a cut-off math answer's final line. */
export const FINAL_ANSWER_MAX_TOKENS = 48;

/** The final line's answer alone, continuing an assistant turn that ends with `Final Answer:`. */
export function finalAnswerGrammar(task: TaskDefinition): string {
  return `root ::= " " answer\nanswer ::= ${mathAnswerRule(task)}`;
}
