// How far to trust a label: the reliability diagram (each confidence bin's accuracy against its mean
// vote share, with how many rows it holds) and the accuracy–coverage curve of selective prediction
// (answer only rows whose vote share is at least t). Both have a text alternative (ChartFigure).
import { Area, Bar, CartesianGrid, ComposedChart, ErrorBar, Line, ReferenceLine, ResponsiveContainer, Scatter, Tooltip, XAxis, YAxis } from 'recharts';
import type { Interval } from '../../../electron/common/contract/interval';
import type { JobMetrics, SelectivePoint } from '../../../electron/common/contract/jobs';
import { ChartFigure } from './ChartFigure';
import { errorBar } from './Intervals';
import { useResolvedColor } from './VoteCharts';
import { pct } from './labels';

/** The selective point for a minimum confidence t: the rows with vote share ≥ t (the curve's first point at or above t). */
export function answeredAt(curve: readonly SelectivePoint[], t: number): SelectivePoint | null {
  return curve.find((p) => p.threshold >= t - 1e-12) ?? null;
}

export function ReliabilityDiagram({ calibration, intervals }: { calibration: JobMetrics['calibration']; intervals: ReadonlyArray<Interval | null> | null }) {
  const color = useResolvedColor();
  const data = calibration.bins.map((b, i) => ({
    mid: (b.from + b.to) / 2,
    range: `${Math.round(b.from * 100)}–${Math.round(b.to * 100)}%`,
    accuracy: b.accuracy === null ? null : b.accuracy * 100,
    // Error bars are drawn as the distances below and above the point.
    error: errorBar(b.accuracy, intervals?.[i], 100),
    interval: intervals?.[i] ?? null,
    share: b.confidence === null ? null : b.confidence * 100,
    count: b.count,
  }));
  if (data.every((d) => d.count === 0)) return <p className="muted small">No scored rows yet.</p>;
  const text = {
    caption: `Reliability: accuracy of the rows in each vote-share bin against their mean vote share (ECE ${calibration.ece?.toFixed(3) ?? '–'}, Brier ${calibration.brier?.toFixed(3) ?? '–'})`,
    columns: ['Vote share bin', 'Rows', 'Mean vote share', 'Accuracy', '95 % interval (Wilson)'],
    rows: data.map((d) => [d.range, d.count, d.share === null ? '–' : `${d.share.toFixed(1)}%`, d.accuracy === null ? '–' : `${d.accuracy.toFixed(1)}%`, d.interval ? `${pct(d.interval.low)}–${pct(d.interval.high)}` : '–']),
  };
  const maxCount = Math.max(1, ...data.map((d) => d.count));
  return (
    <ChartFigure data={text} testId="reliability-diagram" style={{ width: '100%', height: 240 }}>
      <ResponsiveContainer width="100%" height={240}>
        <ComposedChart data={data} margin={{ top: 8, right: 40, bottom: 16, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid stroke={color('var(--border)')} />
          <XAxis type="number" dataKey="mid" domain={[0, 1]} ticks={[0, 0.2, 0.4, 0.6, 0.8, 1]} tickFormatter={(v: number) => `${Math.round(v * 100)}%`} stroke={color('var(--muted)')} fontSize={12} label={{ value: 'vote share', position: 'insideBottom', offset: -8, fill: color('var(--muted)'), fontSize: 11 }} />
          <YAxis yAxisId="acc" domain={[0, 100]} unit="%" stroke={color('var(--muted)')} fontSize={12} width={48} />
          <YAxis yAxisId="rows" orientation="right" domain={[0, maxCount * 4]} hide />
          <Tooltip
            contentStyle={{ background: color('var(--panel)'), border: `1px solid ${color('var(--border)')}`, color: color('var(--text)') }}
            labelFormatter={(_, p) => String((p[0]?.payload as { range?: string } | undefined)?.range ?? '')}
            formatter={(v, name, item) => {
              if (name === 'count') return [`${String(v)} rows`, 'rows'];
              const i = (item.payload as { interval?: Interval | null }).interval;
              return [`${Number(v).toFixed(1)}%${name === 'accuracy' && i ? ` [${pct(i.low)}, ${pct(i.high)}]` : ''}`, name === 'accuracy' ? 'accuracy (95 % Wilson)' : 'mean vote share'];
            }}
          />
          {/* Rows per bin, faint along the bottom; perfect calibration on the diagonal. */}
          <Bar yAxisId="rows" dataKey="count" fill={color('var(--faint)')} barSize={14} isAnimationActive={false} />
          <ReferenceLine yAxisId="acc" segment={[{ x: 0, y: 0 }, { x: 1, y: 100 }]} stroke={color('var(--muted)')} strokeDasharray="4 4" />
          <Line yAxisId="acc" dataKey="accuracy" stroke={color('var(--accent)')} strokeWidth={2} connectNulls dot isAnimationActive={false}>
            <ErrorBar dataKey="error" width={5} stroke={color('var(--accent)')} strokeWidth={1} direction="y" />
          </Line>
          <Scatter yAxisId="acc" dataKey="share" fill={color('var(--l1)')} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}

export function CoverageCurve({ selective, intervals, minConfidence }: { selective: readonly SelectivePoint[]; intervals: ReadonlyArray<Interval | null> | null; minConfidence: number }) {
  const color = useResolvedColor();
  if (selective.length === 0) return <p className="muted small">No scored rows yet.</p>;
  const data = selective.map((p, i) => ({ coverage: p.coverage * 100, accuracy: p.accuracy * 100, threshold: p.threshold, band: intervals?.[i] ? [intervals[i]!.low * 100, intervals[i]!.high * 100] : null }));
  const at = answeredAt(selective, minConfidence);
  const text = {
    caption: 'Accuracy–coverage: answering only rows whose vote share is at least t',
    columns: ['Minimum vote share t', 'Coverage', 'Accuracy on answered rows', '95 % interval (Wilson)'],
    rows: selective.map((p, i) => [`${(p.threshold * 100).toFixed(1)}%`, pct(p.coverage), pct(p.accuracy), intervals?.[i] ? `${pct(intervals[i]!.low)}–${pct(intervals[i]!.high)}` : '–']),
  };
  return (
    <ChartFigure data={text} testId="coverage-curve" style={{ width: '100%', height: 240 }}>
      <ResponsiveContainer width="100%" height={240}>
        <ComposedChart data={[...data].reverse()} margin={{ top: 8, right: 16, bottom: 16, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid stroke={color('var(--border)')} />
          <XAxis type="number" dataKey="coverage" domain={[0, 100]} unit="%" stroke={color('var(--muted)')} fontSize={12} label={{ value: 'coverage (rows answered)', position: 'insideBottom', offset: -8, fill: color('var(--muted)'), fontSize: 11 }} />
          <YAxis domain={[0, 100]} unit="%" stroke={color('var(--muted)')} fontSize={12} width={48} />
          <Tooltip
            contentStyle={{ background: color('var(--panel)'), border: `1px solid ${color('var(--border)')}`, color: color('var(--text)') }}
            labelFormatter={(_, p) => {
              const d = p[0]?.payload as { threshold?: number; coverage?: number } | undefined;
              return d?.threshold === undefined ? '' : `vote share ≥ ${(d.threshold * 100).toFixed(1)}% · ${d.coverage?.toFixed(1)}% of rows`;
            }}
            formatter={(v, name) => (name === 'band' && Array.isArray(v) ? [`${Number(v[0]).toFixed(1)}–${Number(v[1]).toFixed(1)}%`, '95 % interval (Wilson)'] : [`${Number(v).toFixed(1)}%`, 'accuracy on answered rows'])}
          />
          {at ? <ReferenceLine x={at.coverage * 100} stroke={color('var(--danger)')} strokeDasharray="3 3" /> : null}
          <Area type="stepAfter" dataKey="band" stroke="none" fill={color('var(--accent)')} fillOpacity={0.15} isAnimationActive={false} />
          <Line type="stepAfter" dataKey="accuracy" stroke={color('var(--accent)')} strokeWidth={2} dot isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}
