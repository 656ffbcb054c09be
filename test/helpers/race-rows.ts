// A raced experiment's data set for tests of known accuracy: rows "item i" with alternating gold
// labels, and a hash of a row that a scripted evaluator is right on when it falls under its accuracy.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const gold = (i: number): string => (i % 2 === 0 ? 'positive' : 'negative');

/** Writes `rows` rows ("item i", gold) as `<dir>/rows.csv` and returns its path. */
export function writeRaceRows(dir: string, rows: number): string {
  const data = join(dir, 'rows.csv');
  writeFileSync(data, 'text,label\n' + Array.from({ length: rows }, (_, i) => `"item ${i}",${gold(i)}`).join('\n') + '\n');
  return data;
}

/** A number in [0, 1) from `s` (FNV-1a): the same on every run. */
export function unitHash(s: string): number {
  let h = 2166136261;
  for (const ch of s) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return h / 4294967296;
}
