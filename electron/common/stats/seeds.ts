// A sweep point's accuracy over its seeds (docs/method.md §16): the mean over seeds of each seed's
// accuracy on the rows every seed scored, with an interval that covers both sources of spread, the
// rows (a sample of the inputs) and the seeds (a sample of the generator's draws). One seed is one
// proportion: Wilson's interval.
import type { Interval } from '../contract/interval';
import { bootstrapTable, confusionF1, f1Intervals, type BootstrapOptions } from './bootstrap';
import type { Outcomes } from './paired';
import { wilson } from './wilson';

/**
 * The mean accuracy over seeds on the rows every seed scored, with the percentile bootstrap over
 * rows and seeds (`bootstrap-rows-seeds`): a row is resampled with all its seeds (each row as the
 * pattern of its seeds' outcomes, the patterns' counts drawn as a multinomial), then the seeds are
 * drawn with replacement and the statistic is the mean over the drawn seeds. One seed: Wilson.
 * Null when no row was scored by every seed.
 */
export function seedsInterval(seeds: readonly Outcomes[], bootstrap: BootstrapOptions): Interval | null {
  if (seeds.length === 0) return null;
  const rows = Math.min(...seeds.map((o) => o.length));
  const patterns = new Map<number, number>();
  let shared = 0;
  for (let i = 0; i < rows; i++) {
    let code = 0;
    let scored = true;
    for (let s = 0; s < seeds.length && scored; s++) {
      const x = seeds[s]![i];
      if (x === null || x === undefined) scored = false;
      else code = code * 2 + (x ? 1 : 0);
    }
    if (!scored) continue;
    shared++;
    patterns.set(code, (patterns.get(code) ?? 0) + 1);
  }
  if (shared === 0) return null;
  // Seed s's outcome is bit (m − 1 − s) of a row's pattern.
  let right = 0;
  for (const [code, count] of patterns) for (let s = 0; s < seeds.length; s++) right += count * ((code >> s) & 1);
  if (seeds.length === 1) return wilson(right, shared, bootstrap.level);
  const m = seeds.length;
  const codes = [...patterns.keys()];
  const drawn = new Int32Array(m);
  const [interval] = bootstrapTable(
    codes.map((c) => patterns.get(c)!),
    [right / (shared * m)],
    (table, rng, out) => {
      for (let s = 0; s < m; s++) drawn[s] = rng.int(m);
      let n = 0;
      let total = 0;
      for (let p = 0; p < table.length; p++) {
        const count = table[p]!;
        if (count === 0) continue;
        n += count;
        let hits = 0;
        for (let s = 0; s < m; s++) hits += (codes[p]! >> (m - 1 - drawn[s]!)) & 1;
        total += count * hits;
      }
      out[0] = total / (n * m);
    },
    bootstrap,
    'bootstrap-rows-seeds',
  );
  return interval ?? null;
}

/** A scored row as a confusion matrix reads it: its gold label's index and its predicted column's (the last: no valid vote). */
export interface LabelledRow {
  gold: number;
  predicted: number;
}

/**
 * The mean macro-F1 over seeds on the rows every seed scored, with the percentile bootstrap over
 * rows and seeds, as seedsInterval's accuracy: a row is resampled with its gold and every seed's
 * prediction (the pattern's counts drawn as a multinomial), the seeds drawn with replacement, and
 * the statistic is the mean over the drawn seeds of each one's macro-F1 (confusionF1). One seed:
 * the percentile bootstrap over rows of its confusion matrix. `labels` rows of `columns` predicted
 * columns, as confusionF1. Null when no row was scored by every seed.
 */
export function seedsMacroF1Interval(seeds: ReadonlyArray<ReadonlyArray<LabelledRow | null | undefined>>, labels: number, columns: number, bootstrap: BootstrapOptions): Interval | null {
  if (seeds.length === 0 || labels === 0) return null;
  const m = seeds.length;
  const rows = Math.min(...seeds.map((s) => s.length));
  const patterns = new Map<string, { gold: number; predicted: number[]; count: number }>();
  for (let i = 0; i < rows; i++) {
    const at = seeds.map((s) => s[i]);
    if (at.some((x) => x === null || x === undefined)) continue;
    const predicted = at.map((x) => x!.predicted);
    const key = `${at[0]!.gold}:${predicted.join(',')}`;
    const known = patterns.get(key);
    if (known) known.count++;
    else patterns.set(key, { gold: at[0]!.gold, predicted, count: 1 });
  }
  if (patterns.size === 0) return null;
  const list = [...patterns.values()];
  const cells = new Float64Array(labels * columns);
  const f1 = new Float64Array(labels + 1);
  /** Each seed's confusion-matrix cell of each pattern. */
  const cellOf = Array.from({ length: m }, (_, s) => Int32Array.from(list, (p) => p.gold * columns + p.predicted[s]!));
  /** Macro-F1 of seed s over the pattern counts `table`. */
  const macroOf = (table: ArrayLike<number>, s: number): number => {
    cells.fill(0);
    const at = cellOf[s]!;
    for (let i = 0; i < at.length; i++) cells[at[i]!]! += table[i]!;
    confusionF1(cells, labels, columns, f1);
    return f1[0]!;
  };
  const counts = list.map((p) => p.count);
  if (m === 1) {
    macroOf(counts, 0);
    return f1Intervals(
      Array.from({ length: labels }, (_, g) => Array.from(cells.subarray(g * columns, (g + 1) * columns))),
      bootstrap,
    ).macroF1;
  }
  let estimate = 0;
  for (let s = 0; s < m; s++) estimate += macroOf(counts, s) / m;
  const [interval] = bootstrapTable(
    counts,
    [Number.isNaN(estimate) ? null : estimate],
    (table, rng, out) => {
      let sum = 0;
      for (let d = 0; d < m; d++) sum += macroOf(table, rng.int(m));
      out[0] = sum / m;
    },
    bootstrap,
    'bootstrap-rows-seeds',
  );
  return interval ?? null;
}
