// The vote breakdown: a bar per label and the runs × variants grid, both coloured by label.
import { Bar, BarChart, CartesianGrid, Cell, LabelList, ResponsiveContainer, XAxis, YAxis, Tooltip } from 'recharts';
import type { LiveRun } from '../store/classifyLive';
import { useStore } from '../store';
import { labelVar, pct } from './labels';
import { ChartFigure } from './ChartFigure';

/** Recharts writes SVG attributes; resolve our CSS variables to concrete colours for it. */
export function useResolvedColor(): (cssVar: string) => string {
  // Re-render when the theme on screen changes (also when the system's does), so colours follow it.
  useStore((s) => s.resolvedTheme);
  const style = typeof document === 'undefined' ? null : getComputedStyle(document.documentElement);
  return (v) => {
    const m = /^var\((--[\w-]+)\)$/.exec(v);
    return m && style ? style.getPropertyValue(m[1]!).trim() || '#888' : v;
  };
}

export function VoteBars({ votes, labels, total }: { votes: Record<string, number>; labels: readonly string[]; total: number }) {
  const color = useResolvedColor();
  const names = [...labels, ...Object.keys(votes).filter((k) => !labels.includes(k))];
  const data = names.map((l) => ({ label: l, votes: votes[l] ?? 0, share: total > 0 ? (votes[l] ?? 0) / total : 0 }));
  const height = Math.max(120, data.length * 38 + 30);
  const text = { caption: 'Valid votes per label', columns: ['Label', 'Votes', 'Share'], rows: data.map((d) => [d.label, d.votes, pct(d.share)]) };
  return (
    <ChartFigure data={text} testId="vote-bars" style={{ width: '100%', height }}>
      <ResponsiveContainer width="100%" height={height}>
        <BarChart data={data} layout="vertical" margin={{ top: 4, right: 48, bottom: 4, left: 8 }} accessibilityLayer={false}>
          <CartesianGrid horizontal={false} stroke={color('var(--border)')} />
          <XAxis type="number" allowDecimals={false} domain={[0, Math.max(1, total)]} stroke={color('var(--muted)')} fontSize={12} />
          <YAxis type="category" dataKey="label" width={96} stroke={color('var(--muted)')} fontSize={12} />
          <Tooltip
            cursor={{ fill: color('var(--panel-2)') }}
            contentStyle={{ background: color('var(--panel)'), border: `1px solid ${color('var(--border)')}`, color: color('var(--text)') }}
            formatter={(v) => [`${String(v)} votes`, 'votes']}
          />
          <Bar dataKey="votes" isAnimationActive={false} radius={[0, 4, 4, 0]}>
            {data.map((d) => (
              <Cell key={d.label} fill={color(labelVar(d.label, labels))} />
            ))}
            <LabelList dataKey="votes" position="right" fill={color('var(--text)')} fontSize={12} />
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </ChartFigure>
  );
}

/** Runs in rows, the original and each paraphrase in columns; a cell per prediction as it arrives. `stopped`: the run ended, a missing cell will not come. */
export function VariantGrid({ runs, r, n, labels, stopped = false }: { runs: LiveRun[]; r: number; n: number; labels: readonly string[]; stopped?: boolean }) {
  const cols = n + 1;
  const variantName = (v: number) => (v === 0 ? 'original' : `paraphrase ${v}`);
  return (
    <div className="stack" style={{ gap: 8 }}>
      <div className="vgrid" style={{ gridTemplateColumns: `auto repeat(${cols}, minmax(28px, 1fr))` }} data-testid="variant-grid" role="table" aria-label="Predictions by run and variant">
        <div role="row" style={{ display: 'contents' }}>
          <div role="columnheader">
            <span className="sr-only">Run</span>
          </div>
          {Array.from({ length: cols }, (_, v) => (
            <div className="h" key={v} role="columnheader" title={v === 0 ? 'the original input' : `paraphrase ${v}`}>
              <span aria-hidden="true">{v === 0 ? 'orig' : `p${v}`}</span>
              <span className="sr-only">{variantName(v)}</span>
            </div>
          ))}
        </div>
        {Array.from({ length: r }, (_, j) => {
          const run = runs.find((x) => x.run === j);
          return (
            <div role="row" style={{ display: 'contents' }} key={j}>
              <div className="rh" role="rowheader">
                run {j + 1}
              </div>
              {Array.from({ length: cols }, (_, v) => {
                const p = run?.predictions[v];
                if (!p) {
                  return stopped ? (
                    <div className="vcell stopped" key={v} role="cell" title="not evaluated: the run stopped first">
                      <span className="sr-only">not evaluated</span>
                    </div>
                  ) : (
                    <div className="vcell pending" key={v} role="cell">
                      <span className="sr-only">pending</span>
                    </div>
                  );
                }
                if (p.label === null)
                  return (
                    <div className="vcell none" key={v} role="cell" title={`no vote (wrote "${p.raw}")`}>
                      <span aria-hidden="true">∅</span>
                      <span className="sr-only">no vote</span>
                    </div>
                  );
                return (
                  <div className="vcell" key={v} role="cell" style={{ background: labelVar(p.label, labels) }} title={`run ${j + 1}, ${variantName(v)}: ${p.label}`} data-label={p.label}>
                    {p.label}
                  </div>
                );
              })}
            </div>
          );
        })}
      </div>
      <div className="legend">
        {labels.map((l) => (
          <span key={l}>
            <i className="swatch" style={{ background: labelVar(l, labels) }} />
            {l}
          </span>
        ))}
      </div>
    </div>
  );
}
