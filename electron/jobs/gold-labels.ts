// What a gold value means: the one rule every reader applies (goldLabelResolver) and the label
// map suggested from a file's gold values (docs/method.md §11).
import { emptyRecord, own } from '../common/records';
import { answerLabels, labelNames, type TaskDefinition } from '../common/task';
import type { LabelMappingSuggestion } from './types';

/**
 * The one rule for what a gold value means: the label map's entry for it (exact, trimmed), else
 * the label it names in any case, else nothing (counted as unmapped). Without labels (math
 * tasks, or a map still to be suggested) and without a map, the value is its own gold.
 */
export function goldLabelResolver(labelMap: Readonly<Record<string, string>> | undefined, labels: readonly string[] | undefined): (value: string) => string | null {
  const byName = labels ? new Map(labels.map((l) => [l.toLowerCase(), l])) : null;
  if (!labelMap && !byName) return (v) => v;
  return (v) => own(labelMap, v) ?? byName?.get(v.toLowerCase()) ?? null;
}

/** The one label that `value` abbreviates (`pos` → positive, `Neg` → negative), null when none or several. */
function prefixOf(value: string, labels: readonly string[]): string | null {
  const v = value.toLowerCase();
  if (v.length < 2) return null;
  const hits = labels.filter((l) => l.toLowerCase().startsWith(v));
  return hits.length === 1 ? hits[0]! : null;
}

/**
 * Suggests gold value → label: exact, then case-insensitive (trimmed) match against the task's
 * labels, then numeric index (`0`, `1`, … → labels in task order) when every numeric value is a
 * valid index, then an unambiguous prefix (`pos` → positive). Math tasks map nothing: their gold
 * is the answer itself.
 */
export function suggestLabelMapping(goldValueCounts: Record<string, number>, task: TaskDefinition): LabelMappingSuggestion {
  const map = emptyRecord<string>();
  const how: LabelMappingSuggestion['how'] = emptyRecord();
  const unmapped: Array<{ value: string; count: number }> = [];
  if (task.kind === 'math') return { map, how, unmapped };
  const labels = answerLabels(task);
  const lower = new Map(labels.map((l) => [l.toLowerCase(), l]));
  const values = Object.keys(goldValueCounts);
  const numeric = values.filter((v) => /^\d+$/.test(v.trim()));
  const voting = labelNames(task);
  const indexOk = numeric.length > 0 && numeric.every((v) => Number(v.trim()) < voting.length);
  for (const v of values) {
    const t = v.trim();
    if (labels.includes(t)) {
      map[v] = t;
      how[v] = 'exact';
    } else if (lower.has(t.toLowerCase())) {
      map[v] = lower.get(t.toLowerCase())!;
      how[v] = 'case-insensitive';
    } else if (indexOk && /^\d+$/.test(t)) {
      map[v] = voting[Number(t)]!;
      how[v] = 'index';
    } else if (prefixOf(t, labels) !== null) {
      map[v] = prefixOf(t, labels)!;
      how[v] = 'prefix';
    } else unmapped.push({ value: v, count: own(goldValueCounts, v) ?? 0 });
  }
  unmapped.sort((a, b) => b.count - a.count || a.value.localeCompare(b.value));
  return { map, how, unmapped };
}
