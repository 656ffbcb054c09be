// Where a job's metric counts (metric-counts.ts) live: one row of job_metrics per job, added to in
// the transaction that saves each finished row (JobStore.saveRowResult), so the counts hold
// exactly the rows committed, also across a crash. A job without counts (made before schema v12),
// or with counts of another version, is counted from its rows on its first read and kept.
// The same row keeps the job's latest bootstrap intervals (metric-intervals.ts) under the digest of
// the counts they were computed from (schema v16), so no process computes them twice.
import type Database from 'better-sqlite3';
import type { TaskDefinition } from '../common/task';
import type { RowCountsReader } from './row-counts';
import type { BootstrapIntervals, KeptIntervals } from './metric-intervals';
import { METRIC_COUNTS_VERSION, countRow, emptyCounts, parseCounts, serializeCounts, type CountedRow, type MetricCounts } from './metric-counts';

export class MetricCountsStore implements KeptIntervals {
  private readonly select: Database.Statement;
  private readonly update: Database.Statement;
  private readonly selectIntervals: Database.Statement;
  private readonly updateIntervals: Database.Statement;
  /** A job's task and runs per row, which never change once it is created. */
  private readonly specs = new Map<string, { task: TaskDefinition; r: number }>();

  constructor(
    private readonly db: Database.Database,
    private readonly rowCounts: RowCountsReader,
  ) {
    this.select = db.prepare(`SELECT version, counts_json FROM job_metrics WHERE job_id = ?`);
    this.update = db.prepare(`UPDATE job_metrics SET counts_json = ? WHERE job_id = ?`);
    this.selectIntervals = db.prepare(`SELECT intervals_json FROM job_metrics WHERE job_id = ? AND intervals_digest = ?`);
    this.updateIntervals = db.prepare(`UPDATE job_metrics SET intervals_digest = ?, intervals_json = ? WHERE job_id = ?`);
  }

  /** The job's bootstrap intervals kept under `digest`, or null (none kept, or kept for other counts). */
  read(jobId: string, digest: string): BootstrapIntervals | null {
    const row = this.selectIntervals.get(jobId, digest) as { intervals_json: string } | undefined;
    return row ? (JSON.parse(row.intervals_json) as BootstrapIntervals) : null;
  }

  /** Keeps the job's bootstrap intervals in place of the last ones; a database this process may only read keeps nothing. */
  keep(jobId: string, digest: string, value: BootstrapIntervals): void {
    try {
      this.updateIntervals.run(digest, JSON.stringify(value), jobId);
    } catch (e) {
      if ((e as { code?: unknown }).code !== 'SQLITE_READONLY') throw e;
    }
  }

  private spec(jobId: string): { task: TaskDefinition; r: number } | null {
    let spec = this.specs.get(jobId);
    if (!spec) {
      const row = this.db.prepare(`SELECT task_json, settings_json FROM jobs WHERE id = ?`).get(jobId) as { task_json: string; settings_json: string } | undefined;
      if (!row) return null;
      spec = { task: JSON.parse(row.task_json) as TaskDefinition, r: (JSON.parse(row.settings_json) as { r: number }).r };
      this.specs.set(jobId, spec);
    }
    return spec;
  }

  private stored(jobId: string): MetricCounts | null {
    const row = this.select.get(jobId) as { version: number; counts_json: string } | undefined;
    return row && row.version === METRIC_COUNTS_VERSION ? parseCounts(row.counts_json) : null;
  }

  /** A new job's counts, all zero: kept from its first row on. */
  jobCreated(jobId: string, r: number): void {
    this.db.prepare(`INSERT INTO job_metrics (job_id, version, counts_json) VALUES (?, ?, ?)`).run(jobId, METRIC_COUNTS_VERSION, serializeCounts(emptyCounts(r)));
  }

  /**
   * Adds a row just saved to its job's counts; call it inside the transaction that saves the row.
   * A job whose counts were never made is left alone: its first read counts every row.
   */
  rowDone(jobId: string, row: CountedRow): void {
    const counts = this.stored(jobId);
    const spec = counts && this.spec(jobId);
    if (!counts || !spec) return;
    countRow(counts, spec.task, row);
    this.update.run(serializeCounts(counts), jobId);
  }

  /**
   * The job's counts. Stored ones are used while they hold as many rows as are done (both read in
   * one snapshot, the rows done from row-counts.ts); otherwise they are counted from `rows` and
   * kept, in one write transaction, so a row finishing meanwhile in another process is either in
   * the rows read or added after them.
   */
  counts(jobId: string, rows: () => Iterable<CountedRow>): MetricCounts {
    const stored = this.db.transaction(() => {
      const counts = this.stored(jobId);
      return counts && counts.rowsDone === this.rowCounts.of(jobId).done ? counts : null;
    })();
    if (stored) return stored;
    const spec = this.spec(jobId);
    if (!spec) return emptyCounts(0);
    const recount = () => {
      const counts = emptyCounts(spec.r);
      for (const row of rows()) countRow(counts, spec.task, row);
      return counts;
    };
    try {
      return this.db
        .transaction(() => {
          const counts = recount();
          this.db
            .prepare(`INSERT INTO job_metrics (job_id, version, counts_json) VALUES (?, ?, ?) ON CONFLICT (job_id) DO UPDATE SET version = excluded.version, counts_json = excluded.counts_json`)
            .run(jobId, METRIC_COUNTS_VERSION, serializeCounts(counts));
          return counts;
        })
        .immediate();
    } catch (e) {
      // A database this process may only read (a read-only file or folder): counted, not kept.
      if ((e as { code?: unknown }).code === 'SQLITE_READONLY') return recount();
      throw e;
    }
  }
}
