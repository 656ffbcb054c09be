// The per-row results of a job: virtualised (a job may hold 100,000 rows), paged from the main
// process on demand, filterable to the wrong ones and sortable by confidence. A click opens the
// row's examples, paraphrases and votes.
import { useEffect, useMemo, useRef, useState } from 'react';
import { createColumnHelper, flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { JobRow, JobRowDetail, RowsInput } from '../../../electron/common/contract/jobs';
import { getApi, messageOf } from '../api/client';
import { ErrorBanner, LabelChip } from './Common';
import { labelVar, pct } from './labels';
import { NO_ROWS, RowPages, type RowPagesView } from './row-pages';

const col = createColumnHelper<JobRow>();

type Filter = RowsInput['filter'];
type Sort = RowsInput['sort'];

/** The table's columns: index, input, gold, prediction (or why there is none), confidence (the sort button, abstained rows marked), right. */
function rowColumns({ labels, sort, setSort, minConfidence }: { labels: string[]; sort: Sort; setSort(s: Sort): void; minConfidence: number }) {
  return [
    col.accessor('index', { header: '#', cell: (c) => c.getValue() + 1 }),
    col.accessor('input', { header: 'Input', cell: (c) => <span title={c.getValue()}>{c.getValue()}</span> }),
    col.accessor('gold', { header: 'Gold', cell: (c) => (c.getValue() === null ? <span className="muted">–</span> : <LabelChip label={c.getValue()} labels={labels} />) }),
    col.accessor('prediction', {
      header: 'Prediction',
      cell: (c) => {
        const row = c.row.original;
        if (row.status === 'pending') return <span className="muted" data-testid="row-pending">pending</span>;
        if (row.status === 'failed') return <span className="chip bad" title={row.error ?? undefined}>failed</span>;
        return <LabelChip label={c.getValue()} labels={labels} />;
      },
    }),
    col.accessor('confidence', {
      header: () => (
        <button onClick={() => setSort(sort === 'confidence-asc' ? 'confidence-desc' : sort === 'confidence-desc' ? 'index' : 'confidence-asc')} title="Sort by confidence" data-testid="sort-confidence">
          Confidence {sort === 'confidence-asc' ? '↑' : sort === 'confidence-desc' ? '↓' : '↕'}
        </button>
      ),
      cell: (c) => {
        const done = c.row.original.status === 'done';
        // Below the minimum vote share the row is abstained (Evaluate's "Answer only when sure").
        const abstained = done && minConfidence > 0 && c.getValue() < minConfidence;
        return (
          <span className="num">
            {done ? pct(c.getValue(), 0) : '–'}
            {abstained ? (
              <span className="chip" data-testid="row-abstained" title={`below the minimum vote share ${pct(minConfidence, 0)}`}>
                abstained
              </span>
            ) : null}
          </span>
        );
      },
    }),
    col.accessor('correct', { header: 'Right', cell: (c) => (c.getValue() === null ? '–' : c.getValue() ? <span className="chip ok">✓</span> : <span className="chip bad">✗</span>) }),
  ];
}

/** All rows or the wrong ones only, and how many there are. */
function RowsFilterBar({ filter, onFilter, total }: { filter: Filter; onFilter(f: Filter): void; total: number }) {
  return (
    <div className="row">
      <div role="radiogroup" aria-label="Which rows" className="row" style={{ gap: 4 }}>
        {(['all', 'wrong'] as const).map((f) => (
          <button key={f} role="radio" aria-checked={filter === f} className={`btn small ${filter === f ? 'primary' : ''}`} onClick={() => onFilter(f)} data-testid={`filter-${f}`}>
            {f === 'all' ? 'All rows' : 'Wrong only'}
          </button>
        ))}
      </div>
      <span className="spacer" />
      <span className="muted small" data-testid="rows-total">
        {total.toLocaleString()} rows
      </span>
    </div>
  );
}

/** A row not paged in yet, in its place. */
function LoadingRow({ top, height }: { top: number; height: number }) {
  return (
    <div className="vt-row" role="row" style={{ top, height }}>
      <div className="muted" role="cell">
        loading…
      </div>
    </div>
  );
}

export function RowsTable({ jobId, labels, refreshKey, minConfidence = 0 }: { jobId: string; labels: string[]; refreshKey: string; minConfidence?: number }) {
  const [filter, setFilter] = useState<Filter>('all');
  const [sort, setSort] = useState<Sort>('index');
  const [{ rows, total, error }, setView] = useState<RowPagesView>(NO_ROWS);
  const [selected, setSelected] = useState<number | null>(null);
  const parentRef = useRef<HTMLDivElement>(null);

  // One reader per filter and sort (row-pages.ts): the last one's reads are dropped with it.
  const pages = useMemo(() => new RowPages((range, signal) => getApi().call('jobs.rows', { jobId, filter, sort, ...range }, { signal }), setView, messageOf), [jobId, filter, sort]);
  useEffect(() => () => pages.dispose(), [pages]);
  // From the top for another filter or sort; as the job advances, the rows read so far again.
  useEffect(() => {
    void pages.reload();
  }, [pages, refreshKey]);

  const columns = rowColumns({ labels, sort, setSort, minConfidence });
  // TanStack Table returns fresh functions each render; the React Compiler skips this component.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel(), manualSorting: true, manualFiltering: true });
  const tableRows = table.getRowModel().rows;

  const virtualizer = useVirtualizer({ count: total, getScrollElement: () => parentRef.current, estimateSize: () => 34, overscan: 12 });
  const items = virtualizer.getVirtualItems();
  const last = items.at(-1)?.index ?? 0;
  useEffect(() => {
    if (last >= rows.length - 20 && rows.length < total) void pages.more();
  }, [last, rows.length, total, pages]);

  return (
    <div className="stack">
      <RowsFilterBar filter={filter} onFilter={setFilter} total={total} />
      <ErrorBanner message={error} />
      <div className="vt" role="table" aria-label="Per-row results" aria-rowcount={total}>
        {table.getHeaderGroups().map((hg) => (
          <div className="vt-head" role="row" key={hg.id}>
            {hg.headers.map((h) => (
              <div role="columnheader" key={h.id}>
                {flexRender(h.column.columnDef.header, h.getContext())}
              </div>
            ))}
          </div>
        ))}
        <div className="vt-body" ref={parentRef} tabIndex={0} role="rowgroup" aria-label="Rows, scrollable" data-testid="rows-body" style={{ height: Math.min(420, Math.max(1, total) * 34 + 2) }}>
          <div role="presentation" style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {items.map((vi) => {
              const row = tableRows[vi.index];
              if (!row) return <LoadingRow key={vi.key} top={vi.start} height={vi.size} />;
              return (
                <div
                  key={vi.key}
                  className="vt-row"
                  role="row"
                  tabIndex={0}
                  aria-current={selected === row.original.index ? 'true' : undefined}
                  style={{ top: vi.start, height: vi.size }}
                  onClick={() => setSelected(row.original.index)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' || e.key === ' ') {
                      e.preventDefault();
                      setSelected(row.original.index);
                    }
                  }}
                  data-testid="row"
                >
                  {row.getVisibleCells().map((cell) => (
                    <div role="cell" key={cell.id} className={cell.column.id === 'confidence' ? 'num' : undefined}>
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </div>
                  ))}
                </div>
              );
            })}
          </div>
        </div>
      </div>
      {total === 0 ? <div className="empty">{filter === 'wrong' ? 'No wrong rows.' : 'No finished rows yet.'}</div> : null}
      {selected !== null ? <RowDetailPanel key={selected} jobId={jobId} index={selected} labels={labels} onClose={() => setSelected(null)} /> : null}
    </div>
  );
}

/** A row's examples, paraphrases and votes, read when opened (the rows table, the review queue). */
export function RowDetailPanel({ jobId, index, labels, onClose }: { jobId: string; index: number; labels: string[]; onClose(): void }) {
  const [detail, setDetail] = useState<JobRowDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const panel = useRef<HTMLDivElement>(null);
  // The panel opens below the table: bring it into view (and the keyboard with it) rather than off-screen.
  useEffect(() => {
    panel.current?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    panel.current?.focus({ preventScroll: true });
  }, []);
  useEffect(() => {
    let live = true;
    getApi()
      .call('jobs.row', { jobId, index })
      .then((d) => live && setDetail(d))
      .catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
    };
  }, [jobId, index]);
  return (
    <div className="card" data-testid="row-detail" style={{ background: 'var(--panel-2)' }} ref={panel} tabIndex={-1} aria-label={`Row ${index + 1} details`} role="region">
      <div className="card-head">
        <h3>Row {index + 1}</h3>
        <button className="btn ghost small" onClick={onClose} aria-label="Close row details">
          ✕
        </button>
      </div>
      <ErrorBanner message={error} />
      {detail ? (
        <div className="stack">
          <p>{detail.input}</p>
          <div className="row small">
            <span>Gold</span> <LabelChip label={detail.gold} labels={labels} />
            <span>Prediction</span> <LabelChip label={detail.prediction} labels={labels} />
            <span className="muted">confidence {pct(detail.confidence)}</span>
            {detail.baseline !== null ? (
              <span className="muted">
                zero-shot baseline: <strong>{detail.baseline}</strong>
              </span>
            ) : null}
          </div>
          <div className="legend small">
            {Object.entries(detail.votes).map(([l, v]) => (
              <span key={l}>
                <i className="swatch" style={{ background: labelVar(l, labels) }} /> {l}: {v}
              </span>
            ))}
          </div>
          {detail.runs.map((run) => (
            <details className="run" key={run.run} open={detail.runs.length <= 2}>
              <summary>
                Run {run.run + 1} <span className="chip">seed {run.seed}</span>
                <span className="chip">{run.examples.length} examples</span>
              </summary>
              <div className="run-body">
                <div>
                  <div className="section-label" style={{ padding: '4px 0' }}>
                    Examples
                  </div>
                  {run.examples.map((ex, i) => (
                    <div className="example" key={i} style={{ marginBottom: 4, borderLeftColor: labelVar(ex.label, labels) }}>
                      {ex.text} <LabelChip label={ex.label} labels={labels} />
                    </div>
                  ))}
                </div>
                <div>
                  <div className="section-label" style={{ padding: '4px 0' }}>
                    Variants and votes
                  </div>
                  <ol className="paras" start={0}>
                    {[detail.input, ...run.paraphrases].map((text, v) => {
                      const p = run.predictions.find((x) => x.variant === v);
                      return (
                        <li key={v}>
                          {v === 0 ? <em>original</em> : text}
                          <span className="pred">{p ? <LabelChip label={p.label} labels={labels} /> : null}</span>
                        </li>
                      );
                    })}
                  </ol>
                </div>
              </div>
            </details>
          ))}
        </div>
      ) : error ? null : (
        <p className="skeleton">loading…</p>
      )}
    </div>
  );
}
