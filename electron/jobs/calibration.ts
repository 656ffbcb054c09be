// How far to trust a row's confidence (the winner's share of the vote): pure functions over
// (confidence, correct) pairs of the finished rows that have gold, so each figure can be checked
// against hand-computed values.
//   - reliability bins: ten equal-width confidence bins, each with its count, mean confidence and
//     accuracy (the reliability diagram);
//   - expected calibration error: the bins' |accuracy − confidence|, weighted by their counts;
//   - Brier score of the top label: mean of (confidence − 1[correct])²;
//   - selective prediction: answering only rows with confidence ≥ t, the coverage (share of rows
//     answered) and the accuracy on them, for every t that changes what is answered.

export interface Scored {
  /** The winner's vote share, 0..1 (0 for a row with no valid vote). */
  confidence: number;
  correct: boolean;
}

export interface ReliabilityBin {
  from: number;
  to: number;
  count: number;
  /** Mean confidence of the bin's rows; null when empty. */
  confidence: number | null;
  /** Accuracy of the bin's rows; null when empty. */
  accuracy: number | null;
}

export interface Calibration {
  /** null when no row is scored. */
  ece: number | null;
  brier: number | null;
  bins: ReliabilityBin[];
}

export interface SelectivePoint {
  /** Rows with confidence ≥ threshold are answered. */
  threshold: number;
  /** Answered rows / scored rows. */
  coverage: number;
  /** Accuracy on the answered rows. */
  accuracy: number;
}

/** Selective prediction at one minimum confidence (`--min-confidence`, the app's slider). */
export interface AnsweredMetrics {
  minConfidence: number;
  /** Rows answered (confidence ≥ minConfidence) and, of those, correct. */
  answered: number;
  correct: number;
  /** Rows below the minimum: marked abstained. */
  abstained: number;
  /** Answered rows / scored rows. */
  coverage: number;
  /** Accuracy on the answered rows; null when none is. */
  accuracy: number | null;
}

export const RELIABILITY_BINS = 10;

/** The bin a confidence falls in: [i/10, (i+1)/10), the last one closed at 1. */
export function binOf(confidence: number, bins = RELIABILITY_BINS): number {
  // The epsilon keeps a share such as 0.7 (7 of 10 votes) in bin 7 despite binary fractions.
  return Math.min(bins - 1, Math.max(0, Math.floor(confidence * bins + 1e-9)));
}

export function reliabilityBins(rows: readonly Scored[], bins = RELIABILITY_BINS): ReliabilityBin[] {
  const acc = Array.from({ length: bins }, () => ({ count: 0, confidence: 0, correct: 0 }));
  for (const r of rows) {
    const b = acc[binOf(r.confidence, bins)]!;
    b.count++;
    b.confidence += r.confidence;
    if (r.correct) b.correct++;
  }
  return acc.map((b, i) => ({
    from: i / bins,
    to: (i + 1) / bins,
    count: b.count,
    confidence: b.count === 0 ? null : b.confidence / b.count,
    accuracy: b.count === 0 ? null : b.correct / b.count,
  }));
}

export function calibration(rows: readonly Scored[], bins = RELIABILITY_BINS): Calibration {
  const reliability = reliabilityBins(rows, bins);
  if (rows.length === 0) return { ece: null, brier: null, bins: reliability };
  let ece = 0;
  for (const b of reliability) if (b.count > 0) ece += (b.count / rows.length) * Math.abs(b.accuracy! - b.confidence!);
  const brier = rows.reduce((s, r) => s + (r.confidence - (r.correct ? 1 : 0)) ** 2, 0) / rows.length;
  return { ece, brier, bins: reliability };
}

/**
 * The accuracy–coverage curve: one point per distinct confidence t (ascending), answering the rows
 * with confidence ≥ t. The first point answers every row (coverage 1, the plain accuracy).
 */
export function selectiveCurve(rows: readonly Scored[]): SelectivePoint[] {
  if (rows.length === 0) return [];
  const sorted = [...rows].sort((a, b) => b.confidence - a.confidence);
  const points: SelectivePoint[] = [];
  let answered = 0;
  let correct = 0;
  for (let i = 0; i < sorted.length; i++) {
    answered++;
    if (sorted[i]!.correct) correct++;
    // A point where the next row has a lower confidence (rows tied at t are answered together).
    if (i === sorted.length - 1 || sorted[i + 1]!.confidence < sorted[i]!.confidence) {
      points.push({ threshold: sorted[i]!.confidence, coverage: answered / rows.length, accuracy: correct / answered });
    }
  }
  return points.reverse();
}

/** Whether a row is answered at a minimum confidence (rows below it are abstained). */
export function answeredAt(confidence: number | null, minConfidence: number): boolean {
  return confidence !== null && confidence >= minConfidence;
}

/** Coverage and accuracy on the answered rows at one minimum confidence. */
export function answeredMetrics(rows: readonly Scored[], minConfidence: number): AnsweredMetrics {
  let answered = 0;
  let correct = 0;
  for (const r of rows) {
    if (!answeredAt(r.confidence, minConfidence)) continue;
    answered++;
    if (r.correct) correct++;
  }
  return {
    minConfidence,
    answered,
    correct,
    abstained: rows.length - answered,
    coverage: rows.length === 0 ? 0 : answered / rows.length,
    accuracy: answered === 0 ? null : correct / answered,
  };
}
