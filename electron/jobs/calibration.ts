// How far to trust a row's confidence (the winner's share of the vote): pure functions over
// (confidence, correct) pairs of the finished rows that have gold, or over those pairs counted by
// confidence (a job's metric counts keep them so: metric-counts.ts), so each figure can be
// checked against hand-computed values.
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

/** The scored rows at one confidence: how many, and how many of them correct. */
export interface ScoredGroup {
  confidence: number;
  rows: number;
  correct: number;
}

/** Rows one by one or counted by confidence: each function takes both. */
export type ScoredRows = ReadonlyArray<Scored | ScoredGroup>;

function groupOf(s: Scored | ScoredGroup): ScoredGroup {
  return 'rows' in s ? s : { confidence: s.confidence, rows: 1, correct: s.correct ? 1 : 0 };
}

function rowCount(rows: ScoredRows): number {
  let n = 0;
  for (const r of rows) n += 'rows' in r ? r.rows : 1;
  return n;
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

export function reliabilityBins(rows: ScoredRows, bins = RELIABILITY_BINS): ReliabilityBin[] {
  const acc = Array.from({ length: bins }, () => ({ count: 0, confidence: 0, correct: 0 }));
  for (const s of rows) {
    const g = groupOf(s);
    const b = acc[binOf(g.confidence, bins)]!;
    b.count += g.rows;
    b.confidence += g.confidence * g.rows;
    b.correct += g.correct;
  }
  return acc.map((b, i) => ({
    from: i / bins,
    to: (i + 1) / bins,
    count: b.count,
    confidence: b.count === 0 ? null : b.confidence / b.count,
    accuracy: b.count === 0 ? null : b.correct / b.count,
  }));
}

export function calibration(rows: ScoredRows, bins = RELIABILITY_BINS): Calibration {
  const reliability = reliabilityBins(rows, bins);
  const total = rowCount(rows);
  if (total === 0) return { ece: null, brier: null, bins: reliability };
  let ece = 0;
  for (const b of reliability) if (b.count > 0) ece += (b.count / total) * Math.abs(b.accuracy! - b.confidence!);
  let squares = 0;
  for (const s of rows) {
    const g = groupOf(s);
    squares += g.correct * (g.confidence - 1) ** 2 + (g.rows - g.correct) * g.confidence ** 2;
  }
  return { ece, brier: squares / total, bins: reliability };
}

/**
 * The accuracy–coverage curve: one point per distinct confidence t (ascending), answering the rows
 * with confidence ≥ t. The first point answers every row (coverage 1, the plain accuracy).
 */
export function selectiveCurve(rows: ScoredRows): SelectivePoint[] {
  const total = rowCount(rows);
  if (total === 0) return [];
  const sorted = rows.map(groupOf).sort((a, b) => b.confidence - a.confidence);
  const points: SelectivePoint[] = [];
  let answered = 0;
  let correct = 0;
  for (let i = 0; i < sorted.length; i++) {
    answered += sorted[i]!.rows;
    correct += sorted[i]!.correct;
    // A point where the next row has a lower confidence (rows tied at t are answered together).
    if (i === sorted.length - 1 || sorted[i + 1]!.confidence < sorted[i]!.confidence) {
      points.push({ threshold: sorted[i]!.confidence, coverage: answered / total, accuracy: correct / answered });
    }
  }
  return points.reverse();
}

/** Whether a row is answered at a minimum confidence (rows below it are abstained). */
export function answeredAt(confidence: number | null, minConfidence: number): boolean {
  return confidence !== null && confidence >= minConfidence;
}

/** Coverage and accuracy on the answered rows at one minimum confidence. */
export function answeredMetrics(rows: ScoredRows, minConfidence: number): AnsweredMetrics {
  const total = rowCount(rows);
  let answered = 0;
  let correct = 0;
  for (const s of rows) {
    const g = groupOf(s);
    if (!answeredAt(g.confidence, minConfidence)) continue;
    answered += g.rows;
    correct += g.correct;
  }
  return {
    minConfidence,
    answered,
    correct,
    abstained: total - answered,
    coverage: total === 0 ? 0 : answered / total,
    accuracy: answered === 0 ? null : correct / answered,
  };
}
