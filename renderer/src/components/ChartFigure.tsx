// A chart with a text alternative: the drawing is hidden from assistive technology (an SVG of
// ticks and bars says nothing read aloud), and the same numbers are given as a table that screen
// readers read and sighted users never see. Every chart on the page goes through this.
//
// The drawing mounts just after the figure's first paint, in a transition: a page of charts (a
// job's six) spent most of its first render in the charting library's layout and SVG, so the
// numbers around them waited for every chart. Now the page paints with its numbers and each
// figure's table, and the drawings follow; the figure keeps its height meanwhile.
import type { CSSProperties, ReactNode } from 'react';
import { useAfterFirstPaint } from './afterPaint';

export interface ChartData {
  /** Names the numbers: "Votes per label". */
  caption: string;
  columns: string[];
  rows: (string | number)[][];
}

export function ChartFigure({ data, children, testId, style, className, title }: { data: ChartData; children: ReactNode; testId?: string; style?: CSSProperties; className?: string; title?: ReactNode }) {
  const drawn = useAfterFirstPaint();
  return (
    <figure className={className} style={{ margin: 0, ...style }} data-testid={testId} data-drawn={drawn}>
      {title ? <figcaption className="small muted">{title}</figcaption> : null}
      <div aria-hidden="true" style={{ width: '100%', ...(drawn ? {} : { minHeight: typeof style?.height === 'number' ? style.height : 240 }) }}>
        {drawn ? children : null}
      </div>
      {/* In a clipped box: a table grows to its content whatever its own width says. */}
      <div className="sr-only">
        <table data-testid={testId ? `${testId}-text` : undefined}>
          <caption>{data.caption}</caption>
          <thead>
            <tr>
              {data.columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {data.rows.map((row, i) => (
              <tr key={i}>
                {row.map((cell, j) => (j === 0 ? <th key={j} scope="row">{cell}</th> : <td key={j}>{cell}</td>))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </figure>
  );
}
