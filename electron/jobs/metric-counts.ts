// A job's metrics as counts: everything jobs/metrics.ts derives its figures from (rows scored and
// correct, each run's and each prefix of runs' correct votes, gold × prediction pairs, rows by
// confidence, the baseline's), so a figure is read from a few hundred numbers instead of from
// every row. The store adds each row to its job's counts in the transaction that saves the row
// (metric-counts-store.ts), so reading the metrics of a 100,000-row job costs what it costs at
// 100 rows, and a running job's live metrics cost nothing more per read than the rows finished
// since. A row can be taken out again (sign -1): the metrics after a person's gold corrections
// are the counts with those rows counted again under their corrected gold (review-report.ts).
import type { TaskDefinition } from '../common/task';
import type { Prediction } from '../common/tatra';
import { mathAnswersEqual } from '../engine/math';
import { tallyVotes, taskVoteOptions, type Vote } from '../engine/vote';
import type { ScoredGroup } from './calibration';
import type { JobRow } from './types';
import type { PairedTable } from '../common/stats';

/** Bump when the counts' shape or meaning changes: stored counts of another version are counted again. */
export const METRIC_COUNTS_VERSION = 2;

/** Rows by (gold, prediction): key JSON [gold, prediction], prediction null for no valid vote. */
export type PairCounts = Map<string, number>;

export interface MetricCounts {
  /** Done rows. */
  rowsDone: number;
  /** Done rows with gold (the denominator of every accuracy). */
  evaluated: number;
  correct: number;
  /** Math: the gold string appears in an output that voted for the winner. */
  lenient: number;
  /** Run j's votes alone correct, j = 0..r-1. */
  perRunCorrect: number[];
  /** The vote over runs 0..j correct. */
  afterCorrect: number[];
  /** Rows with gold by (gold, prediction). */
  pairs: PairCounts;
  /** Done rows by confidence (the winner's vote share). */
  shares: Map<number, number>;
  /** Rows with gold by confidence: [rows, correct]. */
  scored: Map<number, [number, number]>;
  /** `versus`: TATRA (first) against the baseline (second) on the rows both scored (docs/method.md §16). */
  baseline: { evaluated: number; correct: number; pairs: PairCounts; versus: PairedTable };
}

/** What a row contributes: the stored row, or the record the runner saves (runs need only their predictions). */
export interface CountedRow {
  status: JobRow['status'];
  gold: string | null;
  prediction: string | null;
  confidence: number | null;
  lenientCorrect: boolean | null;
  runs: ReadonlyArray<{ run?: number; predictions: readonly Prediction[] }> | null;
  baseline: { label: string | null } | null;
}

export function emptyCounts(r: number): MetricCounts {
  return {
    rowsDone: 0,
    evaluated: 0,
    correct: 0,
    lenient: 0,
    perRunCorrect: new Array<number>(r).fill(0),
    afterCorrect: new Array<number>(r).fill(0),
    pairs: new Map(),
    shares: new Map(),
    scored: new Map(),
    baseline: { evaluated: 0, correct: 0, pairs: new Map(), versus: { both: 0, onlyFirst: 0, onlySecond: 0, neither: 0 } },
  };
}

/** Whether a prediction matches gold: exact label, or equal normalised answers for math. */
export function isCorrect(task: TaskDefinition, gold: string, prediction: string | null): boolean {
  if (prediction === null) return false;
  return task.kind === 'math' ? mathAnswersEqual(gold, prediction) : prediction === gold;
}

/**
 * Re-votes with the predictions of the given runs through the engine's own tally (docs/method.md §9's
 * tie-break, the first included run's original deciding first), so re-voting with all r runs
 * gives back the stored prediction. Used for run j alone and for the first j runs.
 */
export function revote(task: TaskDefinition, runs: ReadonlyArray<{ run?: number; predictions: readonly Prediction[] }>): string | null {
  const votes: Vote[] = runs.flatMap((r, i) => r.predictions.map((p) => ({ run: r.run ?? i, variant: p.variant, label: p.label })));
  if (votes.length === 0) return null;
  return tallyVotes(votes, taskVoteOptions(task)).label;
}

export function pairKey(gold: string, prediction: string | null): string {
  return JSON.stringify([gold, prediction]);
}

export function pairOf(key: string): { gold: string; prediction: string | null } {
  const [gold, prediction] = JSON.parse(key) as [string, string | null];
  return { gold, prediction };
}

function bump<K>(map: Map<K, number>, key: K, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n === 0) map.delete(key);
  else map.set(key, n);
}

/** Adds a row to the counts (sign 1), or takes it out (-1); a row not done counts for nothing. */
export function countRow(counts: MetricCounts, task: TaskDefinition, row: CountedRow, sign: 1 | -1 = 1): void {
  if (row.status !== 'done') return;
  counts.rowsDone += sign;
  if (row.confidence !== null) bump(counts.shares, row.confidence, sign);
  if (row.gold === null) return;
  counts.evaluated += sign;
  const ok = isCorrect(task, row.gold, row.prediction);
  if (ok) counts.correct += sign;
  const confidence = row.confidence ?? 0;
  const scored = counts.scored.get(confidence) ?? [0, 0];
  const next: [number, number] = [scored[0] + sign, scored[1] + (ok ? sign : 0)];
  if (next[0] === 0) counts.scored.delete(confidence);
  else counts.scored.set(confidence, next);
  if (row.lenientCorrect) counts.lenient += sign;
  const runs = row.runs ?? [];
  for (let j = 0; j < counts.perRunCorrect.length; j++) {
    if (isCorrect(task, row.gold, runs[j] ? revote(task, [runs[j]!]) : null)) counts.perRunCorrect[j]! += sign;
    if (isCorrect(task, row.gold, revote(task, runs.slice(0, j + 1)))) counts.afterCorrect[j]! += sign;
  }
  if (task.kind !== 'math') bump(counts.pairs, pairKey(row.gold, row.prediction), sign);
  if (row.baseline) {
    counts.baseline.evaluated += sign;
    const baseOk = isCorrect(task, row.gold, row.baseline.label);
    if (baseOk) counts.baseline.correct += sign;
    counts.baseline.versus[ok ? (baseOk ? 'both' : 'onlyFirst') : baseOk ? 'onlySecond' : 'neither'] += sign;
    if (task.kind !== 'math') bump(counts.baseline.pairs, pairKey(row.gold, row.baseline.label), sign);
  }
}

/** The scored rows by confidence, as calibration.ts takes them. */
export function scoredGroups(counts: MetricCounts): ScoredGroup[] {
  return [...counts.scored].map(([confidence, [rows, correct]]) => ({ confidence, rows, correct }));
}

/** The (gold, prediction) pairs with their counts, as labelScores takes them. */
export function weightedPairs(pairs: PairCounts): Array<{ gold: string; prediction: string | null; n: number }> {
  return [...pairs].map(([key, n]) => ({ ...pairOf(key), n }));
}

// ---------------------------------------------------------------- stored form

/** The counts with each map as an array of its entries; the plain numbers as they are. */
type StoredCounts = Omit<MetricCounts, 'pairs' | 'shares' | 'scored' | 'baseline'> & {
  pairs: Array<[string, string | null, number]>;
  shares: Array<[number, number]>;
  scored: Array<[number, number, number]>;
  baseline: Omit<MetricCounts['baseline'], 'pairs'> & { pairs: Array<[string, string | null, number]> };
};

const storedPairs = (pairs: PairCounts): StoredCounts['pairs'] => [...pairs].map(([key, n]) => [...(JSON.parse(key) as [string, string | null]), n]);
const pairsFrom = (stored: StoredCounts['pairs']): PairCounts => new Map(stored.map(([gold, prediction, n]) => [pairKey(gold, prediction), n]));

/** The counts as JSON: maps as arrays of entries (keys from files are never object keys). */
export function serializeCounts(c: MetricCounts): string {
  const stored: StoredCounts = {
    rowsDone: c.rowsDone,
    evaluated: c.evaluated,
    correct: c.correct,
    lenient: c.lenient,
    perRunCorrect: c.perRunCorrect,
    afterCorrect: c.afterCorrect,
    pairs: storedPairs(c.pairs),
    shares: [...c.shares],
    scored: [...c.scored].map(([confidence, [rows, correct]]) => [confidence, rows, correct]),
    baseline: { evaluated: c.baseline.evaluated, correct: c.baseline.correct, pairs: storedPairs(c.baseline.pairs), versus: c.baseline.versus },
  };
  return JSON.stringify(stored);
}

export function parseCounts(json: string): MetricCounts {
  const s = JSON.parse(json) as StoredCounts;
  return {
    rowsDone: s.rowsDone,
    evaluated: s.evaluated,
    correct: s.correct,
    lenient: s.lenient,
    perRunCorrect: s.perRunCorrect,
    afterCorrect: s.afterCorrect,
    pairs: pairsFrom(s.pairs),
    shares: new Map(s.shares),
    scored: new Map(s.scored.map(([confidence, rows, correct]) => [confidence, [rows, correct]])),
    baseline: { evaluated: s.baseline.evaluated, correct: s.baseline.correct, pairs: pairsFrom(s.baseline.pairs), versus: { ...s.baseline.versus } },
  };
}
