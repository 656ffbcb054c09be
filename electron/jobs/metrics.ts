// Metrics of an evaluation job: pure functions from a job's metric counts (metric-counts.ts, kept
// as rows finish), so they can be tested against hand-computed values and read at any time (also
// on a job that is half done) without reading its rows.
import { labelNames, type TaskDefinition } from '../common/task';
import { NO_VOTE_COLUMN, accuracyOf } from '../common/contract/jobs';
import type { JobMetrics, JobRow, LabelMetrics } from './types';
import { answeredMetrics, calibration, selectiveCurve } from './calibration';
import { countRow, emptyCounts, pairOf, scoredGroups, weightedPairs, type MetricCounts } from './metric-counts';

export { isCorrect, revote } from './metric-counts';

export interface MetricsInput {
  task: TaskDefinition;
  /** Runs per row (settings.r). */
  r: number;
  rowsTotal: number;
  /** Any rows; only done ones count. */
  rows: Iterable<JobRow>;
  /** Rows below this confidence count as abstained in `answered` (selective prediction). */
  minConfidence?: number;
}

/** Per-label precision/recall/F1 and macro-F1 over (gold, prediction) pairs, each counting `n` rows (default 1). */
export function labelScores(labels: readonly string[], pairs: ReadonlyArray<{ gold: string; prediction: string | null; n?: number }>): { perLabel: LabelMetrics[]; macroF1: number | null } {
  const perLabel = labels.map((label): LabelMetrics => {
    let support = 0;
    let predicted = 0;
    let tp = 0;
    for (const { gold, prediction, n = 1 } of pairs) {
      if (gold === label) support += n;
      if (prediction === label) predicted += n;
      if (gold === label && prediction === label) tp += n;
    }
    const precision = predicted === 0 ? 0 : tp / predicted;
    const recall = support === 0 ? 0 : tp / support;
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
    return { label, support, predicted, truePositives: tp, precision, recall, f1 };
  });
  // Like scikit-learn's default: average over labels present in gold or predictions, so a label
  // that never occurs on either side does not drag macro-F1 down.
  const present = perLabel.filter((m) => m.support > 0 || m.predicted > 0);
  const macroF1 = present.length === 0 ? null : present.reduce((s, m) => s + m.f1, 0) / present.length;
  return { perLabel, macroF1 };
}

/** The metrics of rows read one by one (a test's rows, a job without stored counts). */
export function computeMetrics(input: MetricsInput): JobMetrics {
  const counts = emptyCounts(input.r);
  for (const row of input.rows) countRow(counts, input.task, row);
  return metricsFromCounts(input.task, input.rowsTotal, counts, input.minConfidence);
}

/** Gold labels as rows, predictions as columns, the last for no valid vote. */
function confusionOf(labels: readonly string[], pairs: MetricCounts['pairs']): number[][] {
  const confusion = labels.map(() => new Array<number>(labels.length + 1).fill(0));
  for (const [key, n] of pairs) {
    const { gold, prediction } = pairOf(key);
    const gi = labels.indexOf(gold);
    if (gi < 0) continue;
    const pi = prediction === null ? -1 : labels.indexOf(prediction);
    confusion[gi]![pi >= 0 ? pi : labels.length]! += n;
  }
  return confusion;
}

/** A job's metrics from its counts: every figure of JobMetrics, in time independent of the rows. */
export function metricsFromCounts(task: TaskDefinition, rowsTotal: number, c: MetricCounts, minConfidence?: number): JobMetrics {
  const labels = task.kind === 'math' ? [] : labelNames(task);
  const confusion = confusionOf(labels, c.pairs);
  const bins = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, count: 0 }));
  for (const [confidence, n] of c.shares) bins[Math.min(9, Math.max(0, Math.floor(confidence * 10 + 1e-9)))]!.count += n;
  const scored = scoredGroups(c);
  const scores = labelScores(labels, weightedPairs(c.pairs));
  const { evaluated, correct } = c;
  return {
    kind: task.kind,
    evaluated,
    rowsDone: c.rowsDone,
    rowsTotal,
    correct,
    accuracy: accuracyOf(correct, evaluated),
    perRunAccuracy: c.perRunCorrect.map((n) => accuracyOf(n, evaluated)),
    accuracyAfterRuns: c.afterCorrect.map((n) => accuracyOf(n, evaluated)),
    labels,
    perLabel: scores.perLabel,
    macroF1: labels.length > 0 ? scores.macroF1 : null,
    confusion,
    predicted: labels.length > 0 ? [...labels, NO_VOTE_COLUMN] : [],
    confidenceHistogram: bins,
    calibration: calibration(scored),
    selective: selectiveCurve(scored),
    answered: minConfidence === undefined ? null : answeredMetrics(scored, minConfidence),
    math: task.kind === 'math' ? { strictAccuracy: accuracyOf(correct, evaluated), lenientGoldInOutputAccuracy: accuracyOf(c.lenient, evaluated) } : null,
    baseline:
      c.baseline.evaluated === 0
        ? null
        : {
            evaluated: c.baseline.evaluated,
            correct: c.baseline.correct,
            accuracy: accuracyOf(c.baseline.correct, c.baseline.evaluated),
            macroF1: labels.length > 0 ? labelScores(labels, weightedPairs(c.baseline.pairs)).macroF1 : null,
            confusion: confusionOf(labels, c.baseline.pairs),
            versus: { ...c.baseline.versus },
          },
  };
}
