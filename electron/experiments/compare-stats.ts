// A comparison's pairs said with their uncertainty (docs/method.md §16): each pair's accuracy with
// its Wilson interval, the difference of each from the best on the rows both scored (Tango's
// interval, exact McNemar p), and the set not told apart from the best after Holm's correction,
// "tied for best", never one winner by a hair.
import type { ComparisonPair } from '../common/contract/comparisons';
import { seedOf, tiedForBest, wilson, type Outcomes } from '../common/stats';

/** A pair as its job says it, before its uncertainty is added. */
export type PairScores = Omit<ComparisonPair, 'accuracyInterval' | 'best' | 'versusBest' | 'adjustedP' | 'tiedForBest'>;

/** `pairs` with their intervals and the tied-for-best set; `outcomesOf` reads a job's rows right or wrong by index. */
export function pairsVersusBest(id: string, pairs: readonly PairScores[], outcomesOf: (jobId: string) => Outcomes): ComparisonPair[] {
  const scored = pairs.map((p) => {
    if (p.jobId === null || p.accuracy === null) return null;
    const outcomes = outcomesOf(p.jobId);
    let right = 0;
    let n = 0;
    for (const x of outcomes) {
      if (x === null || x === undefined) continue;
      n++;
      if (x) right++;
    }
    return { outcomes, interval: wilson(right, n) };
  });
  const contenders = pairs.map((p, i) => ({ key: String(i), outcomes: [scored[i]?.outcomes ?? []], accuracy: scored[i] ? p.accuracy : null }));
  const { best, versus } = tiedForBest(contenders, { seed: seedOf(id, 'versus best') });
  return pairs.map((p, i) => ({
    ...p,
    accuracyInterval: scored[i]?.interval ?? null,
    best: best === String(i),
    versusBest: versus[i]?.comparison ?? null,
    adjustedP: versus[i]?.adjustedP ?? null,
    tiedForBest: versus[i]?.tied ?? false,
  }));
}

/** The CSV export's columns of a pair's statistics, after its own. */
export const PAIR_STATS_COLUMNS = ['accuracyLow', 'accuracyHigh', 'macroF1Low', 'macroF1High', 'best', 'versusBest', 'versusBestLow', 'versusBestHigh', 'rowsBothScored', 'pValue', 'adjustedP', 'tiedForBest'] as const;

/** Numbers as numbers (a negative difference is no formula: toCsv leaves it unescaped), '' where there is none. */
export function pairStatsCells(p: ComparisonPair): Array<number | string> {
  const v = (x: number | null | undefined) => x ?? '';
  const d = p.versusBest;
  return [v(p.accuracyInterval?.low), v(p.accuracyInterval?.high), v(p.macroF1Interval?.low), v(p.macroF1Interval?.high), String(p.best), v(d?.difference.estimate), v(d?.difference.low), v(d?.difference.high), v(d?.rows), v(d?.pValue), v(p.adjustedP), String(p.tiedForBest)];
}
