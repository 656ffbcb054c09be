// The task editor's draft and its validation as you type, with the one schema (common/task.ts).
import { TaskDefinition, type TaskDefinitionInput } from '../../../electron/common/task';
import { plainIssue, valueAt } from '../../../electron/common/plain-errors';

export interface LabelDraft {
  name: string;
  style: string[];
  topics: string[];
}

export interface TaskDraft {
  id: string;
  name: string;
  description: string;
  kind: 'classification' | 'multiple_choice' | 'math';
  instruction: string;
  inputName: string;
  preserve: string;
  evaluatorMaxTokens: number;
  topics: string[];
  labels: LabelDraft[];
  defaultLabel: string;
  answerFormat: '' | 'integer' | 'tex';
}

export function blankDraft(): TaskDraft {
  return {
    id: '',
    name: '',
    description: '',
    kind: 'classification',
    instruction: '',
    inputName: 'Sentence',
    preserve: '',
    evaluatorMaxTokens: 4,
    topics: [],
    labels: [
      { name: '', style: [], topics: [] },
      { name: '', style: [], topics: [] },
    ],
    defaultLabel: '',
    answerFormat: '',
  };
}

export function draftFromTask(t: TaskDefinition): TaskDraft {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    kind: t.kind,
    instruction: t.instruction,
    inputName: t.inputName,
    preserve: t.preserve,
    evaluatorMaxTokens: t.evaluatorMaxTokens,
    topics: [...t.topics],
    labels: t.labels.map((l) => ({ name: l.name, style: [...l.style], topics: [...l.topics] })),
    defaultLabel: t.defaultLabel ?? '',
    answerFormat: t.answerFormat ?? '',
  };
}

export function taskFromDraft(d: TaskDraft, base?: TaskDefinition): TaskDefinitionInput {
  const out: TaskDefinitionInput = {
    // Fields the editor does not show (answerName, options, abstainLabel) survive a duplicate.
    ...(base ? { answerName: base.answerName, options: base.options, abstainLabel: base.abstainLabel } : {}),
    id: d.id.trim(),
    name: d.name.trim(),
    description: d.description,
    kind: d.kind,
    instruction: d.instruction,
    inputName: d.inputName.trim(),
    preserve: d.preserve,
    evaluatorMaxTokens: d.evaluatorMaxTokens,
    topics: d.topics,
    labels: d.kind === 'math' ? [] : d.labels.map((l) => ({ name: l.name.trim(), style: l.style, topics: l.topics })),
  };
  if (d.defaultLabel && d.kind !== 'math') out.defaultLabel = d.defaultLabel;
  if (d.kind === 'math' && d.answerFormat) out.answerFormat = d.answerFormat;
  if (base?.abstainLabel && d.kind !== 'math') out.abstainLabel = base.abstainLabel;
  return out;
}

export interface DraftCheck {
  task: TaskDefinition | null;
  /** First message per dotted path ("labels.1.name"); "" for the whole task. */
  errors: Record<string, string>;
}

export function checkDraft(d: TaskDraft, base?: TaskDefinition, reservedIds: readonly string[] = []): DraftCheck {
  const parsed = TaskDefinition.safeParse(taskFromDraft(d, base));
  const errors: Record<string, string> = {};
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join('.');
      errors[key] ??= plainIssue(issue, valueAt(taskFromDraft(d, base), issue.path));
    }
  }
  if (reservedIds.includes(d.id.trim())) errors.id ??= `"${d.id.trim()}" is a built-in task; choose another id`;
  return { task: parsed.success && Object.keys(errors).length === 0 ? parsed.data : null, errors };
}
