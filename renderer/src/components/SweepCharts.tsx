// A sweep's charts: accuracy against n, k and r, each point with its 95 % interval over rows and
// seeds as an error bar (like the paper's sensitivity figure, docs/method.md §12), a k × n heat map,
// and cost against accuracy (the same error bars) so people can pick a setting.
import { CartesianGrid, ComposedChart, ErrorBar, Legend, Line, ResponsiveContainer, Scatter, ScatterChart, Tooltip, XAxis, YAxis, ZAxis } from 'recharts';
import { boundsText } from '../../../electron/common/contract/interval';
import type { SweepPoint } from '../../../electron/common/contract/sweeps';
import { compactCount, heatCell, pct } from './labels';
import { ChartFigure } from './ChartFigure';
import { errorBar } from './Intervals';
import { useResolvedColor } from './VoteCharts';

const SERIES = ['var(--l0)', 'var(--l1)', 'var(--l2)', 'var(--l3)', 'var(--l4)', 'var(--l5)', 'var(--l6)', 'var(--l7)'];

export type Axis = 'n' | 'k' | 'r';

export interface SweepSeries {
  /**
   * One row per x value: `x`, and per line value v: `m${v}` (mean), `b${v}` ([low, high]: the 95 %
   * interval over rows and seeds, docs/method.md §16) and `e${v}` ([mean − low, high − mean], the
   * error bar recharts draws).
   */
  rows: Array<Record<string, number | [number, number] | null>>;
  lines: number[];
  /** The third axis and the value it is held at. */
  held: Axis;
  heldValue: number;
}

/**
 * Accuracy against `x`, one line per value of `by`, the third axis held at `fixed` (by default its
 * largest value that has results yet: the most runs, the most examples, once their jobs are done).
 */
export function sweepSeries(points: readonly SweepPoint[], x: Axis, by: Axis, fixed: Partial<Record<Axis, number>>): SweepSeries {
  const held = (['n', 'k', 'r'] as const).find((a) => a !== x && a !== by)!;
  const scored = points.filter((p) => p.accuracy !== null);
  const heldValue = fixed[held] ?? Math.max(...(scored.length > 0 ? scored : points).map((p) => p[held]));
  const chosen = scored.filter((p) => p[held] === heldValue);
  const xs = [...new Set(chosen.map((p) => p[x]))].sort((a, b) => a - b);
  const lines = [...new Set(chosen.map((p) => p[by]))].sort((a, b) => a - b);
  const rows = xs.map((xv) => {
    const row: Record<string, number | [number, number] | null> = { x: xv };
    for (const v of lines) {
      const p = chosen.find((q) => q[x] === xv && q[by] === v);
      row[`m${v}`] = p?.accuracy ? p.accuracy.mean : null;
      const iv = p?.accuracy ? p.accuracyInterval : null;
      row[`b${v}`] = iv ? [iv.low, iv.high] : null;
      row[`e${v}`] = errorBar(p?.accuracy?.mean, iv);
    }
    return row;
  });
  return { rows, lines, held, heldValue };
}

const AXIS_NAME: Record<Axis, string> = { n: 'paraphrases n', k: 'examples k', r: 'runs r' };

export function AccuracyLines(props: { points: readonly SweepPoint[]; x: Axis; by: Axis; fixed?: Partial<Record<Axis, number>>; testId: string }) {
  const color = useResolvedColor();
  const { rows, lines, held, heldValue } = sweepSeries(props.points, props.x, props.by, props.fixed ?? {});
  const xs = rows.map((r) => r.x as number);
  const caption = `Accuracy against ${AXIS_NAME[props.x]}, one line per ${props.by}, ${held} = ${heldValue}; bars are 95 % intervals over rows and seeds`;
  const cell = (v: number | [number, number] | null | undefined) => (typeof v === 'number' ? pct(v) : '–');
  const text = { caption, columns: [props.x, ...lines.map((v) => `${props.by} = ${v}`)], rows: rows.map((r) => [r.x as number, ...lines.map((v) => cell(r[`m${v}`]))]) };
  return (
    <ChartFigure data={text} className="card" testId={props.testId} title={caption}>
      <ResponsiveContainer width="100%" height={240}>
        <ComposedChart data={rows} margin={{ top: 8, right: 16, bottom: 16, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid strokeDasharray="3 3" stroke={color('var(--border)')} />
          <XAxis dataKey="x" type="number" domain={['dataMin', 'dataMax']} ticks={xs} allowDecimals={false} stroke={color('var(--muted)')} label={{ value: props.x, position: 'insideBottom', offset: -8, fill: color('var(--muted)') }} />
          <YAxis domain={[0, 1]} tickFormatter={(v: number) => `${Math.round(v * 100)}%`} stroke={color('var(--muted)')} width={52} />
          <Tooltip
            formatter={(value, name) => (Array.isArray(value) ? [`${pct(value[0] as number)} – ${pct(value[1] as number)}`, `${String(name)} 95 % interval`] : [pct(value as number), String(name)])}
            labelFormatter={(l) => `${props.x} = ${String(l)}`}
            contentStyle={{ background: color('var(--panel)'), borderColor: color('var(--border)') }}
          />
          {/* By value (k=4 before k=16), not alphabetically (recharts' default). */}
          <Legend verticalAlign="top" height={28} itemSorter={(item) => Number(String(item.dataKey).slice(1))} />
          {lines.map((v, i) => (
            <Line key={`m${v}`} dataKey={`m${v}`} name={`${props.by}=${v}`} stroke={color(SERIES[i % SERIES.length]!)} strokeWidth={2} dot={{ r: 3 }} isAnimationActive={false} connectNulls>
              <ErrorBar dataKey={`e${v}`} width={6} stroke={color(SERIES[i % SERIES.length]!)} strokeWidth={1.5} direction="y" />
            </Line>
          ))}
        </ComposedChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}

/** Mean accuracy per (k, n) at one r: k in rows, n in columns. */
export function KnHeatmap({ points, r }: { points: readonly SweepPoint[]; r: number }) {
  const ns = [...new Set(points.map((p) => p.n))].sort((a, b) => a - b);
  const ks = [...new Set(points.map((p) => p.k))].sort((a, b) => a - b);
  const at = (k: number, n: number) => points.find((p) => p.k === k && p.n === n && p.r === r) ?? null;
  const values = points.filter((p) => p.r === r && p.accuracy).map((p) => p.accuracy!.mean);
  const lo = Math.min(...values, 1);
  const hi = Math.max(...values, 0);
  return (
    <figure className="card stack" style={{ margin: 0, gap: 6 }} data-testid="sweep-heatmap">
      <figcaption className="small muted">Mean accuracy, k × n, at r = {r}</figcaption>
      <div className="row" style={{ justifyContent: 'center' }}>
        <span className="axis-title" style={{ textTransform: 'none' }}>n →</span>
      </div>
      <div className="heat" style={{ gridTemplateColumns: `minmax(60px, auto) repeat(${ns.length}, minmax(70px, 1fr))` }} role="table" aria-label={`Mean accuracy at r=${r}, k in rows, n in columns`}>
        <div role="row" style={{ display: 'contents' }}>
          <div className="lab axis-title" role="columnheader" style={{ textTransform: 'none' }}>
            k ↓
          </div>
          {ns.map((n) => (
            <div className="lab col" key={`c${n}`} role="columnheader">
              n={n}
            </div>
          ))}
        </div>
        {ks.map((k) => (
          <div role="row" style={{ display: 'contents' }} key={`r${k}`}>
            <div className="lab" role="rowheader">
              k={k}
            </div>
            {ns.map((n) => {
              const p = at(k, n);
              const v = p?.accuracy?.mean ?? null;
              return (
                <div
                  key={`${k}-${n}`}
                  className="cell"
                  role="cell"
                  data-testid="sweep-heat-cell"
                  title={`k=${k}, n=${n}, r=${r}: ${pct(v)}${p?.accuracy ? ` ± ${pct(p.accuracy.std)}` : ''} over ${p?.seeds.length ?? 0} seeds`}
                  style={heatCell(v === null ? null : hi <= lo ? 0.5 : (v - lo) / (hi - lo))}
                >
                  {pct(v)}
                </div>
              );
            })}
          </div>
        ))}
      </div>
    </figure>
  );
}

/** Tokens a setting costs alone against its mean accuracy: one dot per (n, k, r), one colour per r. */
export function CostScatter({ points }: { points: readonly SweepPoint[] }) {
  const color = useResolvedColor();
  const rs = [...new Set(points.map((p) => p.r))].sort((a, b) => a - b);
  const caption = 'Cost against accuracy: tokens per setting run alone on these rows (mean over seeds); up and to the left is better; bars are 95 % intervals over rows and seeds';
  const scored = points.filter((p) => p.accuracy);
  const bounds = (p: SweepPoint) => (p.accuracyInterval ? ` ${boundsText(p.accuracyInterval)}` : '');
  const text = { caption, columns: ['Setting', 'Tokens', 'Accuracy'], rows: scored.map((p) => [`n=${p.n} k=${p.k} r=${p.r}`, Math.round(p.tokens.mean).toLocaleString('en-US'), `${pct(p.accuracy!.mean)}${bounds(p)}`]) };
  return (
    <ChartFigure data={text} className="card" testId="sweep-cost" title={caption}>
      <ResponsiveContainer width="100%" height={260}>
        <ScatterChart margin={{ top: 8, right: 16, bottom: 16, left: 0 }} accessibilityLayer={false}>
          <CartesianGrid strokeDasharray="3 3" stroke={color('var(--border)')} />
          <XAxis dataKey="tokens" type="number" name="tokens" stroke={color('var(--muted)')} tickFormatter={compactCount} label={{ value: 'tokens', position: 'insideBottom', offset: -8, fill: color('var(--muted)') }} />
          <YAxis dataKey="accuracy" type="number" name="accuracy" domain={[0, 1]} tickFormatter={(v: number) => `${Math.round(v * 100)}%`} stroke={color('var(--muted)')} width={52} />
          <ZAxis range={[50, 50]} />
          <Tooltip
            cursor={{ strokeDasharray: '3 3' }}
            content={({ payload }) => {
              const d = payload?.[0]?.payload as { label: string; tokens: number; accuracy: number; bounds: string; calls: number } | undefined;
              if (!d) return null;
              return (
                <div className="card small" style={{ padding: 8 }}>
                  <strong>{d.label}</strong>
                  <div>
                    accuracy {pct(d.accuracy)}
                    {d.bounds}
                  </div>
                  <div>
                    {Math.round(d.tokens).toLocaleString()} tokens · {Math.round(d.calls)} calls
                  </div>
                </div>
              );
            }}
          />
          <Legend verticalAlign="top" height={28} itemSorter={(item) => Number(String(item.value).replace('r=', ''))} />
          {rs.map((r, i) => (
            <Scatter
              key={r}
              name={`r=${r}`}
              fill={color(SERIES[i % SERIES.length]!)}
              isAnimationActive={false}
              data={points
                .filter((p) => p.r === r && p.accuracy)
                .map((p) => ({ label: `n=${p.n} k=${p.k} r=${p.r}`, tokens: p.tokens.mean, accuracy: p.accuracy!.mean, error: errorBar(p.accuracy!.mean, p.accuracyInterval), bounds: bounds(p), calls: p.calls.mean }))}
            >
              <ErrorBar dataKey="error" width={5} stroke={color(SERIES[i % SERIES.length]!)} strokeWidth={1} direction="y" />
            </Scatter>
          ))}
        </ScatterChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}
