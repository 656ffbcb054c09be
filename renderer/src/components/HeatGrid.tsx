// The one heat-map grid of the app: a table of coloured cells with a title over its columns and
// one beside its rows (an evaluation's confusion matrix, a comparison's generator × evaluator
// accuracies). The caller draws each cell; the grid keeps the layout and the table's roles.
import type { ReactNode } from 'react';

export interface HeatAxis {
  /** What the axis counts, said above the columns or at the head of the rows. */
  title: string;
  /** One entry per column or row: its key, the text shown and its tooltip. */
  entries: ReadonlyArray<{ key: string; label: ReactNode; title: string }>;
  /** The narrowest a row label or a column may be, in px. */
  minWidth: number;
}

export function HeatGrid(props: { testId: string; ariaLabel: string; columns: HeatAxis; rows: HeatAxis; cell: (row: number, column: number) => ReactNode }) {
  const { columns, rows } = props;
  return (
    <div className="stack" style={{ gap: 6 }} data-testid={props.testId}>
      <div className="row" style={{ justifyContent: 'center' }}>
        <span className="axis-title">{columns.title} →</span>
      </div>
      <div className="heat" style={{ gridTemplateColumns: `minmax(${rows.minWidth}px, auto) repeat(${columns.entries.length}, minmax(${columns.minWidth}px, 1fr))` }} role="table" aria-label={props.ariaLabel}>
        <div role="row" style={{ display: 'contents' }}>
          <div className="lab axis-title" role="columnheader">
            {rows.title} ↓
          </div>
          {columns.entries.map((c) => (
            <div className="lab col" key={`c-${c.key}`} title={c.title} role="columnheader">
              {c.label}
            </div>
          ))}
        </div>
        {rows.entries.map((r, i) => (
          <div role="row" style={{ display: 'contents' }} key={`r-${r.key}`}>
            <div className="lab" title={r.title} role="rowheader">
              {r.label}
            </div>
            {columns.entries.map((_, j) => props.cell(i, j))}
          </div>
        ))}
      </div>
    </div>
  );
}
