// A chart with a text alternative: the drawing is hidden from assistive technology (an SVG of
// ticks and bars says nothing read aloud), and the same numbers are given as a table that screen
// readers read and sighted users never see. Every chart on the page goes through this.
import type { CSSProperties, ReactNode } from 'react';

export interface ChartData {
  /** Names the numbers: "Votes per label". */
  caption: string;
  columns: string[];
  rows: (string | number)[][];
}

export function ChartFigure({ data, children, testId, style, className, title }: { data: ChartData; children: ReactNode; testId?: string; style?: CSSProperties; className?: string; title?: ReactNode }) {
  return (
    <figure className={className} style={{ margin: 0, ...style }} data-testid={testId}>
      {title ? <figcaption className="small muted">{title}</figcaption> : null}
      <div aria-hidden="true" style={{ width: '100%' }}>
        {children}
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
