// A sweep point's accuracy over its seeds (docs/method.md §16): the mean over seeds of each seed's
// accuracy on the rows every seed scored, with an interval that covers both sources of spread, the
// rows (a sample of the inputs) and the seeds (a sample of the generator's draws). One seed is one
// proportion: Wilson's interval.
import type { Interval } from '../contract/interval';
import { bootstrapTable, type BootstrapOptions } from './bootstrap';
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
