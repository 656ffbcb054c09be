// Metrics of an evaluation job: pure functions over stored rows, so they can be tested against
// hand-computed values and recomputed at any time (also on a job that is half done).
import { mathAnswersEqual } from '../engine/math';
import { tallyVotes, taskVoteOptions, type Vote } from '../engine/vote';
import { labelNames, type TaskDefinition } from '../common/task';
import type { Prediction } from '../common/tatra';
import { NO_VOTE_COLUMN, accuracyOf } from '../common/contract/jobs';
import type { JobMetrics, JobRow, LabelMetrics } from './types';
import { type Scored, answeredMetrics, calibration, selectiveCurve } from './calibration';

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

/** Per-label precision/recall/F1 and macro-F1 over (gold, prediction) pairs. */
export function labelScores(labels: readonly string[], pairs: ReadonlyArray<{ gold: string; prediction: string | null }>): { perLabel: LabelMetrics[]; macroF1: number | null } {
  const perLabel = labels.map((label): LabelMetrics => {
    let support = 0;
    let predicted = 0;
    let tp = 0;
    for (const { gold, prediction } of pairs) {
      if (gold === label) support++;
      if (prediction === label) predicted++;
      if (gold === label && prediction === label) tp++;
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

export function computeMetrics(input: MetricsInput): JobMetrics {
  const { task, r } = input;
  const labels = task.kind === 'math' ? [] : labelNames(task);
  let rowsDone = 0;
  let evaluated = 0;
  let correct = 0;
  let lenient = 0;
  const perRunCorrect = new Array<number>(r).fill(0);
  const afterCorrect = new Array<number>(r).fill(0);
  const pairs: Array<{ gold: string; prediction: string | null }> = [];
  const confusion = labels.map(() => new Array<number>(labels.length + 1).fill(0));
  const bins = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, count: 0 }));
  let baseEvaluated = 0;
  let baseCorrect = 0;
  const basePairs: Array<{ gold: string; prediction: string | null }> = [];
  const scored: Scored[] = [];

  for (const row of input.rows) {
    if (row.status !== 'done') continue;
    rowsDone++;
    if (row.confidence !== null) {
      const b = Math.min(9, Math.max(0, Math.floor(row.confidence * 10 + 1e-9)));
      bins[b]!.count++;
    }
    if (row.gold === null) continue;
    evaluated++;
    const ok = isCorrect(task, row.gold, row.prediction);
    if (ok) correct++;
    scored.push({ confidence: row.confidence ?? 0, correct: ok });
    if (row.lenientCorrect) lenient++;
    const runs = row.runs ?? [];
    for (let j = 0; j < r; j++) {
      const alone = runs[j] ? revote(task, [runs[j]!]) : null;
      if (isCorrect(task, row.gold, alone)) perRunCorrect[j]!++;
      const upTo = revote(task, runs.slice(0, j + 1));
      if (isCorrect(task, row.gold, upTo)) afterCorrect[j]!++;
    }
    if (labels.length > 0) {
      pairs.push({ gold: row.gold, prediction: row.prediction });
      const gi = labels.indexOf(row.gold);
      if (gi >= 0) {
        const pi = row.prediction === null ? -1 : labels.indexOf(row.prediction);
        confusion[gi]![pi >= 0 ? pi : labels.length]!++;
      }
    }
    if (row.baseline) {
      baseEvaluated++;
      if (isCorrect(task, row.gold, row.baseline.label)) baseCorrect++;
      basePairs.push({ gold: row.gold, prediction: row.baseline.label });
    }
  }

  const scores = labelScores(labels, pairs);
  return {
    kind: task.kind,
    evaluated,
    rowsDone,
    rowsTotal: input.rowsTotal,
    correct,
    accuracy: accuracyOf(correct, evaluated),
    perRunAccuracy: perRunCorrect.map((c) => accuracyOf(c, evaluated)),
    accuracyAfterRuns: afterCorrect.map((c) => accuracyOf(c, evaluated)),
    labels,
    perLabel: scores.perLabel,
    macroF1: labels.length > 0 ? scores.macroF1 : null,
    confusion,
    predicted: labels.length > 0 ? [...labels, NO_VOTE_COLUMN] : [],
    confidenceHistogram: bins,
    calibration: calibration(scored),
    selective: selectiveCurve(scored),
    answered: input.minConfidence === undefined ? null : answeredMetrics(scored, input.minConfidence),
    math: task.kind === 'math' ? { strictAccuracy: accuracyOf(correct, evaluated), lenientGoldInOutputAccuracy: accuracyOf(lenient, evaluated) } : null,
    baseline:
      baseEvaluated === 0
        ? null
        : {
            evaluated: baseEvaluated,
            correct: baseCorrect,
            accuracy: accuracyOf(baseCorrect, baseEvaluated),
            macroF1: labels.length > 0 ? labelScores(labels, basePairs).macroF1 : null,
          },
  };
}
