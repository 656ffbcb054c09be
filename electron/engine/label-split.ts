// How k examples are split over the labels and what each one should look like (docs/method.md §4).
import { type TaskDefinition, labelNames, topicsFor } from '../common/task';

/** Sentence counts the reference code cycles through, for a mix of short and long examples. */
export const SENTENCE_COUNT_CYCLE: readonly number[] = [1, 2, 1, 3, 2, 1, 3, 2];

/**
 * Examples per label: `k // |labels|` each, the first `k % |labels|` labels one more.
 * Labels that get 0 are still listed so callers can see the whole split.
 */
export function perLabelCounts(k: number, labels: readonly string[]): { label: string; count: number }[] {
  if (labels.length === 0) return [];
  const base = Math.floor(k / labels.length);
  const extra = k % labels.length;
  return labels.map((label, i) => ({ label, count: base + (i < extra ? 1 : 0) }));
}

export interface ExampleShape {
  /** 1-based, as the prompt names it (Example1, Example2, ...). */
  index: number;
  sentences: number;
  topic: string;
}

/** The length and topic of each of `count` examples drawn from one topic pool (method.md §4's diversity). */
export function exampleShapes(count: number, topics: readonly string[]): ExampleShape[] {
  const shapes: ExampleShape[] = [];
  for (let i = 0; i < count; i++) {
    shapes.push({
      index: i + 1,
      sentences: SENTENCE_COUNT_CYCLE[i % SENTENCE_COUNT_CYCLE.length] as number,
      topic: topics.length > 0 ? (topics[i % topics.length] as string) : 'any',
    });
  }
  return shapes;
}

export interface LabelCall {
  /** Null for math tasks (one call writes every example). */
  label: string | null;
  /** Position among the task's labels (0 for math); added to the run seed. */
  labelIndex: number;
  count: number;
  shapes: ExampleShape[];
}

/** The generator calls one run needs: one per label with a non-zero count, one for math. */
export function exampleCalls(task: TaskDefinition, k: number): LabelCall[] {
  if (k <= 0) return [];
  if (task.kind === 'math') {
    return [{ label: null, labelIndex: 0, count: k, shapes: exampleShapes(k, topicsFor(task, null)) }];
  }
  return perLabelCounts(k, labelNames(task))
    .map(({ label, count }, labelIndex) => ({ label, labelIndex, count, shapes: exampleShapes(count, topicsFor(task, label)) }))
    .filter((c) => c.count > 0);
}
