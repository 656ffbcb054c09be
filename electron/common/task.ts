// The one schema every task obeys: the eleven shipped in tasks/*.json and every task a user
// writes. Nothing in the engine is task-specific beyond `kind`; everything else is data here.
// This module is in common/: no Node, no DOM, importable by the renderer (validation as you type).
import { z } from 'zod';
import { UserError } from './errors';
import { plainZodError } from './plain-errors';

export const TaskKind = z.enum(['classification', 'multiple_choice', 'math']);
export type TaskKind = z.infer<typeof TaskKind>;

const nonEmpty = z.string().trim().min(1);

export const LabelDefinition = z.object({
  /** The label exactly as the evaluator must answer it (e.g. "positive", "B"). */
  name: nonEmpty.regex(/^[^\n"]+$/, 'a label is one line without double quotes'),
  /** Style rules for generated examples of this label (e.g. "praise, enjoyment"). */
  style: z.array(nonEmpty).default([]),
  /** Topic pool for this label's examples; when empty, the task's shared `topics` are used. */
  topics: z.array(nonEmpty).default([]),
});
export type LabelDefinition = z.infer<typeof LabelDefinition>;

export const TaskDefinition = z
  .object({
    id: nonEmpty.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lower-case letters, digits, - and _ only'),
    name: nonEmpty,
    description: z.string().default(''),
    kind: TaskKind,
    /**
     * Ordered labels. Classification and multiple choice need at least two; math tasks have none
     * (their answers are free-form, voted on after extraction and normalisation).
     */
    labels: z.array(LabelDefinition).default([]),
    /** Label chosen when ties survive every other rule; must be one of `labels`. */
    defaultLabel: z.string().optional(),
    /** A label the evaluator may answer that never wins the vote (SUBJ's "unsure"). */
    abstainLabel: z.string().optional(),
    /** What the evaluator is told the task is and which outputs are allowed. */
    instruction: nonEmpty,
    /** How the input is named in prompts: Sentence, Question, Headline, Problem. */
    inputName: nonEmpty.regex(/^[A-Za-z][A-Za-z ]{0,31}$/),
    /** Name of the answer line in prompts: "Label" for classification, "Answer" otherwise. */
    answerName: nonEmpty.regex(/^[A-Za-z][A-Za-z ]{0,31}$/).optional(),
    /** Shared topic pool, used for labels without their own (and for math tasks). */
    topics: z.array(nonEmpty).default([]),
    /** What a paraphrase must keep (e.g. "the sentiment and its intensity"). */
    preserve: nonEmpty,
    /** Evaluator's new-token limit (reference code: classification 4, MedQA 8, GSM8K 512, ...). */
    evaluatorMaxTokens: z.number().int().min(1).max(4096),
    /** Math only: how answers look, which decides normalisation ("integer" or "tex"). */
    answerFormat: z.enum(['integer', 'tex']).optional(),
    /** Multiple choice only: the option letters every generated question must carry. */
    options: z.array(nonEmpty).optional(),
  })
  .superRefine((task, ctx) => {
    const names = task.labels.map((l) => l.name);
    if (task.kind !== 'math' && names.length < 2) {
      ctx.addIssue({ code: 'custom', path: ['labels'], message: 'a classification task needs at least two labels' });
    }
    if (task.kind === 'math' && names.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['labels'], message: 'a math task has no fixed labels' });
    }
    const seen = new Set<string>();
    names.forEach((n, i) => {
      const key = n.toLowerCase();
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['labels', i, 'name'], message: `duplicate label "${n}"` });
      seen.add(key);
    });
    if (task.defaultLabel !== undefined && !names.includes(task.defaultLabel)) {
      ctx.addIssue({ code: 'custom', path: ['defaultLabel'], message: `default label "${task.defaultLabel}" is not one of the labels` });
    }
    if (task.abstainLabel !== undefined && names.includes(task.abstainLabel)) {
      ctx.addIssue({ code: 'custom', path: ['abstainLabel'], message: 'the abstain label must not also be a voting label' });
    }
    if (task.kind !== 'math') {
      task.labels.forEach((l, i) => {
        if (l.topics.length === 0 && task.topics.length === 0) {
          ctx.addIssue({ code: 'custom', path: ['labels', i, 'topics'], message: `label "${l.name}" has no topics and the task has no shared topics` });
        }
      });
    } else if (task.topics.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['topics'], message: 'a math task needs a topic pool' });
    }
  });
export type TaskDefinition = z.infer<typeof TaskDefinition>;
/** What a task file may contain before defaults are applied. */
export type TaskDefinitionInput = z.input<typeof TaskDefinition>;

/** Label names in order. */
export function labelNames(task: TaskDefinition): string[] {
  return task.labels.map((l) => l.name);
}

/** What an evaluator may answer: the task's labels in order, then its abstain label (counted, never wins). */
export function answerLabels(task: TaskDefinition): string[] {
  return [...labelNames(task), ...(task.abstainLabel !== undefined ? [task.abstainLabel] : [])];
}

/** Topic pool for one label (its own, else the task's shared pool). */
export function topicsFor(task: TaskDefinition, label: string | null): string[] {
  const own = label === null ? undefined : task.labels.find((l) => l.name === label)?.topics;
  return own && own.length > 0 ? own : task.topics;
}

/** One line from a zod error: `labels.1.name: a label is one line without double quotes; ...`. */
export function formatZodError(err: unknown): string {
  if (err instanceof z.ZodError) return plainZodError(err);
  return err instanceof Error ? err.message : String(err);
}

/** Parses and validates task JSON text; `source` names it in the error. */
export function parseTaskJson(text: string, source: string): TaskDefinition {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${source} is not valid JSON: ${e instanceof Error ? e.message : String(e)}`, 'task_invalid');
  }
  const parsed = TaskDefinition.safeParse(data);
  if (!parsed.success) throw new UserError(`${source} is not a valid task: ${formatZodError(parsed.error)}`, 'task_invalid');
  return parsed.data;
}
