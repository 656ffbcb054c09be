// Raced experiments in tests of known accuracy: rows "item i" with alternating gold labels, a hash
// of a row that a scripted evaluator is right on when it falls under its accuracy, and a run paused after a given row.
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

/** What the race tests drive of an experiment kind (Experiments.of(kind)). */
interface ExperimentRunning {
  start(id: string): Promise<unknown>;
  wait(id: string): Promise<unknown>;
  pause(id: string): Promise<unknown>;
}

/** Starts experiment `id` and pauses it once `rows` of its rows have finished; resolves once it has stopped. */
export async function runUntilRows(jobs: { on(event: 'row', listener: () => void): () => void }, experiments: ExperimentRunning, id: string, rows: number): Promise<void> {
  let finished = 0;
  let pausing: Promise<unknown> | null = null;
  const off = jobs.on('row', () => {
    if (++finished === rows) pausing ??= experiments.pause(id);
  });
  try {
    await experiments.start(id);
    await experiments.wait(id);
    await pausing;
  } finally {
    off();
  }
}
