// Evaluation results: confusion-matrix heatmap and the accuracy-after-j-runs curve.
import { Area, Bar, BarChart, CartesianGrid, ComposedChart, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { NO_VOTE_COLUMN, type JobMetrics } from '../../../electron/common/contract/jobs';
import { useResolvedColor } from './VoteCharts';
import { ChartFigure } from './ChartFigure';
import { HeatGrid } from './HeatGrid';
import { compactCount, heatCell } from './labels';

export function ConfusionMatrix({ confusion }: { confusion: JobMetrics['confusion'] }) {
  // The "(none)" column (rows without a valid vote) only when some row has none.
  const noneAt = confusion.predicted.indexOf(NO_VOTE_COLUMN);
  const dropNone = noneAt >= 0 && confusion.matrix.every((row) => (row[noneAt] ?? 0) === 0);
  const labels = confusion.labels;
  const predicted = dropNone ? confusion.predicted.filter((_, j) => j !== noneAt) : confusion.predicted;
  const matrix = dropNone ? confusion.matrix.map((row) => row.filter((_, j) => j !== noneAt)) : confusion.matrix;
  const rowTotals = matrix.map((row) => row.reduce((a, b) => a + b, 0));
  const max = Math.max(1, ...matrix.flat());
  // Colour by share of the largest cell; the diagonal in --ok, the rest in --danger.
  return (
    <HeatGrid
      testId="confusion-matrix"
      ariaLabel="Confusion matrix, gold labels in rows, predictions in columns"
      columns={{ title: 'Predicted', minWidth: 52, entries: predicted.map((p) => ({ key: p, label: p, title: p })) }}
      rows={{ title: 'Gold', minWidth: 80, entries: labels.map((g, i) => ({ key: g, label: g, title: `${g}: ${rowTotals[i]} rows` })) }}
      cell={(i, j) => {
        const g = labels[i]!;
        const p = predicted[j]!;
        const v = matrix[i]?.[j] ?? 0;
        return (
          <div
            key={`${g}-${p}`}
            className="cell"
            role="cell"
            title={`gold ${g}, predicted ${p}: ${v}${rowTotals[i] ? ` (${((v / rowTotals[i]!) * 100).toFixed(0)}% of ${g})` : ''}`}
            style={heatCell(v === 0 ? null : v / max, g === p ? 'var(--ok)' : 'var(--danger)')}
          >
            {v}
          </div>
        );
      }}
    />
  );
}

export function RunsCurve({ metrics }: { metrics: JobMetrics }) {
  const color = useResolvedColor();
  const bands = metrics.intervals?.accuracyAfterRuns ?? [];
  const ownBands = metrics.intervals?.perRunAccuracy ?? [];
  const data = metrics.accuracyAfterRuns.map((a, j) => {
    const band = bands[j];
    const ownBand = ownBands[j];
    return {
      runs: j + 1,
      after: a === null ? null : a * 100,
      own: metrics.perRunAccuracy[j] == null ? null : metrics.perRunAccuracy[j]! * 100,
      band: band ? [band.low * 100, band.high * 100] : null,
      ownBand: ownBand ? [ownBand.low * 100, ownBand.high * 100] : null,
    };
  });
  if (data.length === 0) return <p className="muted small">No finished rows yet.</p>;
  const range = (b: number[] | null) => (b ? `${b[0]!.toFixed(1)}–${b[1]!.toFixed(1)}%` : '–');
  const text = {
    caption: 'Accuracy after j runs: the vote over runs 1 to j and run j alone, each with its 95 % Wilson interval',
    columns: ['Runs voted (j)', 'Vote over runs 1…j', '95 % interval', 'Run j alone', 'Its 95 % interval'],
    rows: data.map((d) => [d.runs, d.after === null ? '–' : `${d.after.toFixed(1)}%`, range(d.band), d.own === null ? '–' : `${d.own.toFixed(1)}%`, range(d.ownBand)]),
  };
  const ownBandOf = (runs: number) => data.find((d) => d.runs === runs)?.ownBand ?? null;
  return (
    <ChartFigure data={text} testId="runs-curve" style={{ width: '100%', height: 240 }}>
      <ResponsiveContainer width="100%" height={240}>
        <ComposedChart data={data} margin={{ top: 8, right: 16, bottom: 8, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid stroke={color('var(--border)')} />
          <XAxis dataKey="runs" stroke={color('var(--muted)')} fontSize={12} label={{ value: 'runs voted (j)', position: 'insideBottom', offset: -4, fill: color('var(--muted)'), fontSize: 11 }} />
          <YAxis domain={[0, 100]} unit="%" stroke={color('var(--muted)')} fontSize={12} width={48} />
          <Tooltip
            contentStyle={{ background: color('var(--panel)'), border: `1px solid ${color('var(--border)')}`, color: color('var(--text)') }}
            formatter={(v, name, item) =>
              name === 'band' && Array.isArray(v)
                ? [`${Number(v[0]).toFixed(1)}–${Number(v[1]).toFixed(1)}%`, '95 % interval (Wilson)']
                : name === 'after'
                  ? [`${Number(v).toFixed(1)}%`, 'vote over runs 1…j']
                  : [`${Number(v).toFixed(1)}% [${range(ownBandOf((item.payload as { runs: number }).runs))}]`, 'run j alone, 95 % interval']
            }
          />
          <Area type="monotone" dataKey="band" stroke="none" fill={color('var(--accent)')} fillOpacity={0.15} isAnimationActive={false} />
          <Line type="monotone" dataKey="after" stroke={color('var(--accent)')} strokeWidth={2} dot isAnimationActive={false} />
          <Line type="monotone" dataKey="own" stroke={color('var(--faint)')} strokeDasharray="4 4" dot={false} isAnimationActive={false} />
        </ComposedChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}

/** How sure the votes were: rows per bucket of the winner's vote share. */
/** A histogram tick at its bar's left edge (the bucket's lower bound); the last bar also gets its right edge. */
function EdgeTick(props: { x?: number; y?: number; payload?: { value: string; offset: number; index: number }; last: string; lastIndex: number; fill: string }) {
  const { x = 0, y = 0, payload } = props;
  if (!payload) return null;
  const text = (at: number, value: string) => (
    <text x={at} y={y} dy={12} textAnchor="middle" fill={props.fill} fontSize={11}>
      {value}
    </text>
  );
  return (
    <g>
      {text(x - payload.offset, payload.value)}
      {payload.index === props.lastIndex ? text(x + payload.offset, props.last) : null}
    </g>
  );
}

export function ConfidenceHistogram({ buckets }: { buckets: JobMetrics['confidenceHistogram'] }) {
  const color = useResolvedColor();
  // Ticks stand at the buckets' edges ("50%" under the left edge of the 50–60% bar, and the last
  // bar's right edge gets "100%"): a bar of rows at 100% does not read as "90%". Short enough not
  // to collide in a half-width card.
  const data = buckets.map((b) => ({ name: `${Math.round(b.from * 100)}%`, range: `${Math.round(b.from * 100)}–${Math.round(b.to * 100)}%`, count: b.count }));
  if (data.every((d) => d.count === 0)) return null;
  const text = { caption: "Rows by the winner's share of the votes", columns: ["Winner's vote share", 'Rows'], rows: data.map((d) => [d.range, d.count]) };
  // Counts of a large job (99,890 rows) as 100k, in an axis as wide as its longest tick.
  const tickWidth = 12 + 7 * compactCount(Math.max(...data.map((d) => d.count))).length;
  return (
    <ChartFigure data={text} testId="confidence-histogram" style={{ width: '100%', height: 150 }}>
      <ResponsiveContainer width="100%" height={150}>
        <BarChart data={data} margin={{ top: 4, right: 20, bottom: 0, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid vertical={false} stroke={color('var(--border)')} />
          <XAxis dataKey="name" stroke={color('var(--muted)')} fontSize={11} interval="preserveStartEnd" minTickGap={4} tick={<EdgeTick last={`${Math.round((buckets.at(-1)?.to ?? 1) * 100)}%`} lastIndex={data.length - 1} fill={color('var(--muted)')} />} />
          <YAxis allowDecimals={false} tickFormatter={compactCount} stroke={color('var(--muted)')} fontSize={11} width={Math.max(32, tickWidth)} />
          <Tooltip
            cursor={{ fill: color('var(--panel-2)') }}
            contentStyle={{ background: color('var(--panel)'), border: `1px solid ${color('var(--border)')}`, color: color('var(--text)') }}
            labelFormatter={(_, p) => String((p[0]?.payload as { range?: string } | undefined)?.range ?? '')}
            formatter={(v) => [`${String(v)} rows`, 'winner’s vote share']}
          />
          <Bar dataKey="count" fill={color('var(--accent)')} isAnimationActive={false} radius={[3, 3, 0, 0]} />
        </BarChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}
