// Validation problems in plain words, made once for every face: the API's invalid-input answer,
// the CLI's task and settings errors and the page's messages under each field. A schema's own
// wording ("choose a model") is kept; zod's defaults ("Too big: expected string to have <=20000
// characters") become a sentence about the field ("The input is too long: 25,012 characters; at
// most 20,000"), and a field is named, never given as a schema path ("classify.start: input").
// common/: no Node, no DOM.
import type { z } from 'zod';
import { INT_SETTINGS } from './settings';

type Issue = z.core.$ZodIssue;

/** How a field is named in a sentence, by its key; other keys are spelt out from camelCase. */
const FIELD_NAMES: Record<string, string> = {
  input: 'the input',
  taskId: 'the task',
  task: 'the task',
  generator: 'the generator model',
  evaluator: 'the evaluator model',
  generators: 'the generators',
  evaluators: 'the evaluators',
  dataPath: 'the data file',
  dataset: 'the data file',
  path: 'the path',
  inputColumn: 'the input column',
  goldColumn: 'the gold label column',
  textColumn: 'the input column',
  labelColumn: 'the gold label column',
  labelMap: 'the label mapping',
  limit: 'the row limit',
  name: 'the name',
  id: 'the id',
  urls: 'the server URLs',
  model: 'the model id',
  seeds: 'the seeds',
  scope: 'where examples are made',
  instruction: 'the instruction',
  inputName: 'the input name',
  preserve: 'what a paraphrase must preserve',
  topics: 'the topics',
  labels: 'the labels',
  defaultLabel: 'the default label',
  evaluatorMaxTokens: 'the evaluator token limit',
  ...Object.fromEntries(Object.entries(INT_SETTINGS).map(([key, s]) => [key, s.label.toLowerCase()])),
};

const bare = (key: string) => (FIELD_NAMES[key] ?? key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()).replace(/^the /, '');

/** "the input", "paraphrases n", "label 2's name" (items counted from one, as people count); null for the whole value. */
export function fieldName(path: readonly PropertyKey[]): string | null {
  const last = path.findLast((p): p is string => typeof p === 'string');
  if (last === undefined) return null;
  const at = path.findIndex((p) => typeof p === 'number');
  const list = at > 0 ? path[at - 1] : undefined;
  if (typeof list !== 'string') return FIELD_NAMES[last] ?? bare(last);
  const item = `${bare(list).replace(/s$/, '')} ${Number(path[at]) + 1}`;
  return last === list ? item : `${item}'s ${bare(last)}`;
}

const ZOD_DEFAULT = /^(Too (big|small)|Invalid|Expected|Unrecognized)/;
const count = (n: number | bigint) => Number(n).toLocaleString('en-US');

/** The value at a path inside `input` (undefined where it stops). */
export function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/**
 * What is wrong with one value, without naming it: "is too long: 25,012 characters; at most
 * 20,000". `value` (the value at the issue's path) lets a length be said.
 */
export function plainIssue(issue: Issue, value?: unknown): string {
  if (!ZOD_DEFAULT.test(issue.message)) return issue.message;
  switch (issue.code) {
    case 'too_big': {
      const max = count(issue.maximum);
      if (issue.origin === 'string') return `is too long${typeof value === 'string' ? `: ${count(value.length)} characters` : ''}; at most ${max}`;
      if (issue.origin === 'array' || issue.origin === 'set') return `must have at most ${max} entries${Array.isArray(value) ? ` (it has ${count(value.length)})` : ''}`;
      return `must be at most ${max}`;
    }
    case 'too_small': {
      const min = count(issue.minimum);
      if (issue.origin === 'string') return Number(issue.minimum) <= 1 ? 'is empty' : `is too short; at least ${min} characters`;
      if (issue.origin === 'array' || issue.origin === 'set') return Number(issue.minimum) <= 1 ? 'must have at least one entry' : `must have at least ${min} entries`;
      return `must be at least ${min}`;
    }
    case 'invalid_type':
      if (value === undefined) return 'is missing';
      if (issue.expected === 'int') return 'must be a whole number';
      if (issue.expected === 'number') return 'must be a number';
      return issue.expected === 'string' ? 'must be text' : `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => `"${String(v)}"`).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'url' ? 'is not a URL' : issue.format === 'regex' ? 'has characters that are not allowed here' : `is not a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'unrecognized_keys':
      return `has ${issue.keys.length === 1 ? 'a field' : 'fields'} it does not know: ${issue.keys.join(', ')}`;
    default:
      return 'is not valid';
  }
}

/** One sentence for one issue, naming its field: "The input is too long: …". */
export function plainIssueSentence(issue: Issue, input?: unknown): string {
  const what = plainIssue(issue, valueAt(input, issue.path));
  const field = fieldName(issue.path);
  if (!field) return what.charAt(0).toUpperCase() + what.slice(1);
  // A schema's own wording names its field itself ("choose a model"); lead with the field anyway.
  const sentence = ZOD_DEFAULT.test(issue.message) ? `${field} ${what}` : `${field}: ${what}`;
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** The first problems of a failed parse as one line for a person. `input` is what was parsed. */
export function plainZodError(error: z.ZodError, input?: unknown): string {
  const parts = error.issues.slice(0, 3).map((i) => plainIssueSentence(i, input));
  const more = error.issues.length > 3 ? ` (and ${error.issues.length - 3} more)` : '';
  return `${parts.join('; ')}${more}`;
}
