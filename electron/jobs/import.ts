// A job's rows into the store: one pass over the data set in batched transactions, the gold
// values counted as they go so a label map can be suggested from them (docs/method.md §11), and a
// failed import undone (on a full disk, said in one line naming the folder).
import { dirname } from 'node:path';
import { UserError } from '../common/errors';
import { diskFullError, isDiskFull } from '../common/env-errors';
import { emptyRecord, own, recordFrom } from '../common/records';
import type { TaskDefinition } from '../common/task';
import { shownName } from './dataset';
import { suggestLabelMapping } from './gold-labels';
import type { JobStore } from './store';
import type { ColumnMapping, DatasetReader, DatasetRow, DatasetStats } from './types';

const IMPORT_BATCH = 1000;
/** A batch also ends at this much input text: each is checkpointed, and on a full disk the store's reserve must hold one. */
const IMPORT_BATCH_CHARS = 96 * 1024;

/** No gold value maps to a label: one line naming the column, a few of its values and the labels, bounded whatever the file holds. */
function unmappedGoldError(column: string, taskId: string, values: readonly string[], labels: readonly string[], fix: string): UserError {
  const seen = values.slice(0, 6).map((v) => shownName(v, 40));
  return new UserError(
    `no value of the gold column "${shownName(column)}" maps to a label of task ${taskId} (values ${seen.join(', ')}${values.length > seen.length ? ', …' : ''}; labels ${labels.join(', ')}): ${fix} or run without gold labels (--no-label)`,
    'label_unmapped',
  );
}

/** A given label map none of whose entries is a value of the file: one line naming a few of each. */
function unmatchedMapError(column: string, keys: readonly string[], values: readonly string[]): UserError {
  const list = (xs: readonly string[]) => xs.slice(0, 6).map((v) => shownName(v, 40)).join(', ') + (xs.length > 6 ? ', …' : '');
  return new UserError(
    `the label map maps none of the values of the gold column "${shownName(column)}" (map entries ${list(keys)}; values ${list(values)}): fix the label map (--label-map value=label,…), leave it out to use the suggested one, or run without gold labels (--no-label)`,
    'label_unmapped',
  );
}

export interface ImportOptions {
  task: TaskDefinition;
  /** The job's mapping; given no label map, the suggested one is set on it. */
  mapping: ColumnMapping;
  /** The labels a gold value may map to (the task's labels and its abstain label). */
  labels: string[];
  /** No map was given: count the gold values and suggest one from the whole file. */
  suggest: boolean;
  /** A map was given: refuse it if it maps none of the file's values. */
  explicitMap: boolean;
  dataPath: string;
  limit?: number;
}

/** Reads `reader` into job `id`'s rows and marks the job imported; on failure the job is removed and the error thrown. */
export async function importRows(store: JobStore, id: string, reader: DatasetReader, opts: ImportOptions): Promise<void> {
  const { mapping, suggest, explicitMap } = opts;
  let count = 0;
  try {
    let batch: DatasetRow[] = [];
    let chars = 0;
    // Gold values of the imported rows, and (a row limit given) of the whole file: the suggestion
    // weighs them all, as when it was made from a scan of the file.
    const imported = emptyRecord<number>();
    const whole = emptyRecord<number>();
    let atLimit: DatasetStats | null = null;
    // Imported rows whose gold value is one of the given map's own keys, and the values seen.
    let mapHits = 0;
    const seen = new Set<string>();
    for await (const row of reader) {
      if (atLimit) {
        if (row.goldRaw !== null) whole[row.goldRaw] = (own(whole, row.goldRaw) ?? 0) + 1;
        continue;
      }
      batch.push(row);
      count++;
      chars += row.input.length;
      if (explicitMap && row.goldRaw !== null) {
        if (own(mapping.labelMap, row.goldRaw) !== undefined) mapHits++;
        else if (seen.size < 6) seen.add(row.goldRaw);
      }
      if (suggest && row.goldRaw !== null) {
        imported[row.goldRaw] = (own(imported, row.goldRaw) ?? 0) + 1;
        whole[row.goldRaw] = (own(whole, row.goldRaw) ?? 0) + 1;
      }
      if (batch.length >= IMPORT_BATCH || chars >= IMPORT_BATCH_CHARS) {
        store.insertRows(id, batch);
        batch = [];
        chars = 0;
      }
      if (opts.limit !== undefined && count >= opts.limit) {
        if (!suggest) break;
        atLimit = { ...reader.stats, unmappedGold: recordFrom(Object.entries(reader.stats.unmappedGold)) };
      }
    }
    if (batch.length > 0) store.insertRows(id, batch);
    if (count === 0) throw new UserError(`${opts.dataPath} has no rows with a non-empty "${shownName(mapping.textColumn)}"`, 'dataset_empty');
    const stats = atLimit ?? reader.stats;
    if (explicitMap) {
      // A map that maps none of the file's values: the job would run for hours and score nothing.
      const unmappedRows = Object.values(stats.unmappedGold).reduce((a, b) => a + b, 0);
      if (unmappedRows > 0 && stats.rows - stats.missingGold - unmappedRows === 0) {
        throw unmappedGoldError(mapping.labelColumn!, opts.task.id, Object.keys(stats.unmappedGold), opts.labels, 'fix the label map (--label-map value=label,…)');
      }
      // A map none of whose entries is a value of the file (`__proto__=positive` on a file of
      // positive/negative) is refused too, even when every value names a label by itself: what
      // was given is not what the file holds.
      if (mapHits === 0 && seen.size > 0) throw unmatchedMapError(mapping.labelColumn!, Object.keys(mapping.labelMap ?? {}), [...seen]);
    }
    if (suggest) {
      const suggestion = suggestLabelMapping(whole, opts.task);
      if (Object.keys(suggestion.map).length === 0 && suggestion.unmapped.length > 0) {
        // Not one row could be scored: running would spend hours to report no accuracy at all.
        throw unmappedGoldError(mapping.labelColumn!, opts.task.id, suggestion.unmapped.map((u) => u.value), opts.labels, 'give a label map (--label-map value=label,…)');
      }
      mapping.labelMap = suggestion.map;
      store.mapGold(id, suggestion.map, count, IMPORT_BATCH);
      stats.unmappedGold = recordFrom(Object.entries(imported).filter(([value]) => own(suggestion.map, value) === undefined));
    }
    store.updateDatasetStats(id, stats, await reader.fingerprint(), suggest ? mapping : undefined);
    store.markImported(id);
  } catch (e) {
    throw undoImport(store, id, opts.dataPath, count, e);
  }
}

/**
 * Removes the job of an import that failed and returns the error to throw: the import's own,
 * or for a full disk one line naming the folder and saying whether the partial job is gone.
 */
function undoImport(store: JobStore, id: string, dataPath: string, rowsRead: number, e: unknown): unknown {
  let undone = true;
  try {
    store.deleteJob(id);
  } catch (cleanup) {
    if (!isDiskFull(e)) throw cleanup;
    undone = false;
  }
  if (!isDiskFull(e)) return e;
  const what = `the import of ${dataPath} stopped after reading ${rowsRead} rows`;
  return diskFullError(
    dirname(store.path),
    undone
      ? `${what} and was undone; free some space and create the job again`
      : `${what}; the partial job ${id} is marked failed: delete it (tatra jobs delete ${id}) once there is space`,
  );
}
