// A job's intervals from the counts its metrics hold (docs/method.md §16), against the rows they
// came from: the (confidence, right) cells read off the accuracy–coverage curve are the rows'
// own, the statistics on them are the job's ECE and Brier, every accuracy's interval is Wilson's
// on its counts, and a job shows the same intervals every time.
import { describe, expect, it } from 'vitest';
import type { Prediction } from '../../../electron/common/tatra';
import { wilson } from '../../../electron/common/stats';
import { computeMetrics, revote, type JobRow } from '../../../electron/jobs';
import { calibrationStatistic, confidenceCells, metricIntervals } from '../../../electron/jobs/metric-intervals';
import { binaryTask as binary } from '../../helpers/tasks';

const P = 'positive';
const N = 'negative';

/** A done row with one run whose variants voted `labels` (the winner's share is the row's confidence). */
function row(index: number, gold: string, labels: string[], baseline: string | null = null): JobRow {
  const runs = [{ run: 0, seed: 1, paraphrases: labels.slice(1), predictions: labels.map((label, variant): Prediction => ({ variant, label, raw: label })), fallback: null }];
  const prediction = revote(binary, runs);
  const votes: Record<string, number> = {};
  for (const l of labels) votes[l] = (votes[l] ?? 0) + 1;
  return {
    index, line: index + 2, input: `input ${index}`, gold, goldRaw: gold, status: 'done', prediction, correct: prediction === gold, lenientCorrect: null,
    confidence: prediction === null ? 0 : votes[prediction]! / labels.length, votes, tieBreak: 'none', runs,
    baseline: baseline === null ? null : { label: baseline, raw: baseline, correct: baseline === gold }, stages: null, ms: 1, error: null,
  };
}

/** 60 rows: shares 1, 0.75 and 0.5 in turn, right more often at higher shares; the baseline always says negative. */
function rows(): JobRow[] {
  const out: JobRow[] = [];
  for (let i = 0; i < 60; i++) {
    const gold = i % 2 ? P : N;
    const other = gold === P ? N : P;
    const share = i % 3;
    const right = i % 5 !== 0 || share === 0;
    const winner = right ? gold : other;
    const loser = right ? other : gold;
    const labels = share === 0 ? [winner, winner, winner, winner] : share === 1 ? [winner, winner, winner, loser] : [winner, winner, loser, loser];
    out.push(row(i, gold, labels, N));
  }
  return out;
}

describe('a job’s intervals', () => {
  const m = computeMetrics({ task: binary, r: 1, rowsTotal: 60, rows: rows() });

  it('reads the rows’ (confidence, right) cells off the accuracy–coverage curve, and the calibration figures off those cells', () => {
    const cells = confidenceCells(m);
    const expected = new Map<number, [number, number]>();
    for (const r of rows()) {
      const cell = expected.get(r.confidence!) ?? [0, 0];
      cell[r.prediction === r.gold ? 0 : 1]++;
      expected.set(r.confidence!, cell);
    }
    expect(cells.confidence.map((c, i) => [c, cells.counts[2 * i], cells.counts[2 * i + 1]])).toEqual([...expected].sort((a, b) => a[0] - b[0]).map(([c, [y, n]]) => [c, y, n]));
    const out = new Float64Array(2);
    calibrationStatistic(cells.confidence)(Float64Array.from(cells.counts), out);
    expect(out[0]).toBeCloseTo(m.calibration.ece!, 12);
    expect(out[1]).toBeCloseTo(m.calibration.brier!, 12);
  });

  it('gives each accuracy, precision and recall its Wilson interval, and F1 and the calibration figures a bootstrap around them', () => {
    const iv = metricIntervals(m, 'job-a');
    expect(iv.accuracy).toEqual(wilson(m.correct, m.evaluated));
    expect(iv.accuracyAfterRuns[0]).toEqual(wilson(m.correct, m.evaluated));
    const l = m.perLabel[0]!;
    expect(iv.perLabel[0]).toMatchObject({ label: l.label, precision: wilson(l.truePositives, l.predicted), recall: wilson(l.truePositives, l.support) });
    for (const [interval, value] of [[iv.macroF1, m.macroF1], [iv.perLabel[1]!.f1, m.perLabel[1]!.f1], [iv.calibration.ece, m.calibration.ece], [iv.calibration.brier, m.calibration.brier]] as const) {
      expect(interval).toMatchObject({ estimate: value, method: 'bootstrap', level: 0.95 });
      expect(interval!.low).toBeLessThan(value!);
      expect(interval!.high).toBeGreaterThan(value!);
    }
    m.calibration.bins.forEach((b, i) => expect(iv.calibration.bins[i]).toEqual(b.accuracy === null ? null : wilson(Math.round(b.accuracy * b.count), b.count)));
  });

  it('compares TATRA with its baseline on the rows both scored', () => {
    const versus = metricIntervals(m, 'job-a').baseline!.versus!;
    const base = m.baseline!;
    expect(versus.rows).toBe(60);
    expect(versus.firstBetter - versus.secondBetter).toBe(m.correct - base.correct);
    expect(versus.difference.estimate).toBeCloseTo(m.accuracy! - base.accuracy!, 12);
    expect(versus.test).toBe('mcnemar-exact');
  });

  it('shows the same intervals for the same job every time, and another job’s bootstrap within 0.1 point', () => {
    const a = metricIntervals(m, 'job-a');
    const again = metricIntervals({ ...m, perLabel: [...m.perLabel] }, 'job-a');
    expect(again).toEqual(a);
    const b = metricIntervals(m, 'job-b');
    expect(Math.abs(b.macroF1!.low - a.macroF1!.low)).toBeLessThan(0.001);
    expect(Math.abs(b.macroF1!.high - a.macroF1!.high)).toBeLessThan(0.001);
  });
});
