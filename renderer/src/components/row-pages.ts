// The rows of a job the rows table has read (RowsTable.tsx), for one filter and sort: read again
// from the top as the job moves on, as many as were read (a table scrolled down keeps its rows
// instead of falling back to the first page twenty times over a job), and a page more as the
// table scrolls. Each read again drops the reads asked before it, and another filter or sort is
// another RowPages whose predecessor is disposed: a page on its way for the last filter is never
// shown under this one, nor appended to its rows.
import type { JobRow } from '../../../electron/common/contract/jobs';

/** Rows one read asks for as the table scrolls. */
export const PAGE = 300;
/** The most rows one `jobs.rows` call returns (its contract's limit). */
export const MAX_READ = 5000;

export interface RowPagesView {
  rows: JobRow[];
  total: number;
  error: string | null;
}

/** One `jobs.rows` call for this filter and sort. */
export type ReadRows = (range: { offset: number; limit: number }, signal: AbortSignal) => Promise<{ total: number; rows: JobRow[] }>;

export const NO_ROWS: RowPagesView = { rows: [], total: 0, error: null };

export class RowPages {
  private view: RowPagesView = NO_ROWS;
  /** The reads since the last read from the top: aborted, and their answers dropped, by the next one. */
  private asked = new AbortController();
  private reading = false;

  constructor(
    private readonly read: ReadRows,
    private readonly show: (view: RowPagesView) => void,
    private readonly describe: (e: unknown) => string,
  ) {}

  /** Rows read so far. */
  get loaded(): number {
    return this.view.rows.length;
  }

  /** From the top: as many rows as are read now (at least a page, at most what one call returns). */
  reload(): Promise<void> {
    this.asked.abort();
    this.asked = new AbortController();
    return this.fetch(0, Math.min(MAX_READ, Math.max(PAGE, this.loaded)), true);
  }

  /** The next page, unless a read is on its way (it may bring it). */
  more(): Promise<void> {
    if (this.reading) return Promise.resolve();
    return this.fetch(this.loaded, PAGE, false);
  }

  /** Drops every read on its way: this filter and sort are no longer shown. */
  dispose(): void {
    this.asked.abort();
  }

  private async fetch(offset: number, limit: number, replace: boolean): Promise<void> {
    const asked = this.asked;
    this.reading = true;
    try {
      const page = await this.read({ offset, limit }, asked.signal);
      if (asked.signal.aborted) return;
      this.set({ total: page.total, rows: replace ? page.rows : [...this.view.rows.slice(0, offset), ...page.rows], error: null });
    } catch (e) {
      if (!asked.signal.aborted) this.set({ ...this.view, error: this.describe(e) });
    } finally {
      if (asked === this.asked) this.reading = false;
    }
  }

  private set(view: RowPagesView): void {
    this.view = view;
    this.show(view);
  }
}
