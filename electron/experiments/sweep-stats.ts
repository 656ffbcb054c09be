// A sweep's points said with their uncertainty (docs/method.md §16): each point's accuracy and
// macro-F1 over its seeds with the percentile bootstrap over rows and seeds, and the points not told apart from the
// best after Holm's correction ("tied for best"), each compared with it on the rows both scored.
import type { SweepPoint } from '../common/contract/sweeps';
import { seedOf, seedsInterval, seedsMacroF1Interval, tiedForBest, type LabelledRow, type Outcomes } from '../common/stats';

/**
 * Resamples for a sweep's intervals: a sweep is read again whenever one of its jobs ends, with a
 * bootstrap for every point and every comparison with the best (27 points: 53), so they stop at
 * 2,000 (bounds within about half a point between seeds, as a running job's), where a job's own
 * go on until they settle.
 */
const SWEEP_RESAMPLES = { minResamples: 2000, maxResamples: 2000 } as const;

/** A point before its uncertainty is added. */
export type PointScores = Omit<SweepPoint, 'accuracyInterval' | 'macroF1Interval' | 'best' | 'versusBest' | 'adjustedP' | 'tiedForBest'>;

/**
 * `points` with their intervals and the tied-for-best set; `outcomes[i]` holds point i's rows right
 * or wrong for each of its seeds (in `points[i].seeds`' order). Points are compared on the seeds
 * every point has (all of them once the sweep is done), so each pair of points is paired seed by seed.
 */
export function pointsVersusBest(
  points: readonly PointScores[],
  outcomes: ReadonlyArray<ReadonlyArray<Outcomes>>,
  /** Classification and multiple choice: each point's rows' gold and votes per seed, as `outcomes`, and the task's label count. */
  votes: { labelled: ReadonlyArray<ReadonlyArray<ReadonlyArray<LabelledRow | null>>>; labels: number } | null = null,
): SweepPoint[] {
  const shared = points.length === 0 ? [] : points.map((p) => p.seeds).reduce((a, b) => a.filter((s) => b.includes(s)));
  const keyOf = (p: PointScores) => `n${p.n} k${p.k} r${p.r}`;
  const onShared = (i: number) => shared.map((s) => outcomes[i]![points[i]!.seeds.indexOf(s)]!);
  const seed = (p: PointScores) => seedOf('sweep point', keyOf(p), ...p.seeds);
  const contenders = points.map((p, i) => ({ key: keyOf(p), outcomes: onShared(i), accuracy: shared.length > 0 ? (p.accuracy?.mean ?? null) : null }));
  const { best, versus } = tiedForBest(contenders, { seed: seedOf('sweep', ...shared), ...SWEEP_RESAMPLES });
  return points.map((p, i) => ({
    ...p,
    accuracyInterval: p.accuracy === null ? null : seedsInterval(outcomes[i]!, { seed: seed(p), ...SWEEP_RESAMPLES }),
    macroF1Interval:
      p.macroF1 === null || !votes ? null : seedsMacroF1Interval(votes.labelled[i]!, votes.labels, votes.labels + 1, { seed: seedOf('sweep point macro-F1', keyOf(p), ...p.seeds), ...SWEEP_RESAMPLES }),
    best: best === keyOf(p),
    versusBest: versus[i]?.comparison ?? null,
    adjustedP: versus[i]?.adjustedP ?? null,
    tiedForBest: versus[i]?.tied ?? false,
  }));
}
