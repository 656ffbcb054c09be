// Intervals beside the scores they belong to (docs/method.md §16): the bounds in the score's own
// units, the method and level on hover and for screen readers, and a paired comparison as one line.
import { boundsText, intervalName, pairedText, pValueText, type Interval, type PairedComparison } from '../../../electron/common/contract/interval';

/**
 * What recharts' ErrorBar draws for a value and its interval: the distances below and above the
 * value, in the chart's units (`scale` 100 for a chart in percent); null where either is missing.
 * Never negative: a value an interval does not hold (a mean over seeds beside a bootstrap's
 * percentiles) draws no bar on that side.
 */
export function errorBar(value: number | null | undefined, interval: Pick<Interval, 'low' | 'high'> | null | undefined, scale = 1): [number, number] | null {
  if (value === null || value === undefined || !interval) return null;
  return [Math.max(0, (value - interval.low) * scale), Math.max(0, (interval.high - value) * scale)];
}

/** `[81.2, 88.1]` in a quiet style; its title names the method and level ("95 % Wilson score interval"). */
export function Bounds({ interval, unit = 'percent', testId }: { interval: Interval | null | undefined; unit?: 'percent' | 'number'; testId?: string }) {
  if (!interval) return null;
  const name = intervalName(interval);
  return (
    <span className="ci" title={name} data-testid={testId}>
      {boundsText(interval, unit)}
      <span className="sr-only"> ({name})</span>
    </span>
  );
}

/** A paired comparison in words, with the test named: "+5.0 points [+1.2, +8.9] on 200 rows both scored (exact McNemar p = 0.012)". */
export function PairedLine({ label, comparison, testId }: { label: string; comparison: PairedComparison; testId?: string }) {
  const told = comparison.pValue < 1 - comparison.difference.level;
  return (
    <p className="small" data-testid={testId} title={`${intervalName(comparison.difference)}; ${pValueText(comparison.pValue)}`}>
      <strong>{label}</strong> {pairedText(comparison)}: {told ? 'a real difference at 95 %' : 'not told apart at 95 %'}
    </p>
  );
}

/** The footnote under a page of intervals. */
export function IntervalsNote() {
  return (
    <p className="muted small" data-testid="intervals-note">
      [low, high]: 95 % intervals. Accuracy, precision and recall: Wilson score interval. F1, macro-F1, ECE and Brier: percentile bootstrap over rows, seeded from the
      job (the same job always shows the same interval). Differences: paired, on the rows both scored. See docs/method.md §16.
    </p>
  );
}
