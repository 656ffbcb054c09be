// The job store: one SQLite file (`<dataDir>/tatra.db`) holding every evaluation job, the rows it
// was created from, the examples of each run, each finished row's full result, and the
// generator-output cache. The file itself (pragmas, WAL, the full-disk reserve) is store-file.ts;
// the generator outputs and what finished rows refer to in them, generation-outputs.ts.
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { diskFullError, environmentError, isDiskFull } from '../common/env-errors';
import type { TaskDefinition } from '../common/task';
import type { StageName, StageStats, TatraSettings } from '../common/tatra';
import { emptyUsage, type Usage } from '../common/plan';
import { compressStoredText, packText, unpackText } from './stored-text';
import { expandRuns, referStoredParaphrases, type StoredRun } from './run-texts';
import type { JobBudget } from './usage';
import type {
  BaselineResult,
  ColumnMapping,
  DatasetFormat,
  DatasetRow,
  DatasetStats,
  JobInfo,
  JobRow,
  ModelRef,
  RowQuery,
  RowPage,
  RowRun,
  RowSizes,
  StoredRunExamples,
} from './types';
import type { StoredJobStatus } from '../common/contract/jobs';
import { SCHEMA_VERSION } from './migrations';
import { MetricCountsStore } from './metric-counts-store';
import { RowCountsReader, type RowCounts } from './row-counts';
import { ReviewStore } from './review-store';
import { IMPORT_UNFINISHED, WorkClaims } from './claims';
import { GenerationOutputs } from './generation-outputs';
import { SUMMARY_COLUMNS, parseJson, toRow, type RowDbRow } from './stored-row';

export { SqliteGenerationCache } from './generation-outputs';
export { SCHEMA_VERSION };

export const JOB_DB_FILE = 'tatra.db';
/** The error of a job whose deletion a full disk cut short. */
export const DELETE_UNFINISHED = 'its deletion did not finish (the disk was full); delete it again';
/** Rows deleted per transaction when the disk is full: their pages' WAL frames fit in the reserve. */
const FULL_DISK_DELETE_CHUNK = 200;
export interface NewJobRecord {
  name: string;
  task: TaskDefinition;
  settings: TatraSettings;
  generator: ModelRef;
  evaluator: ModelRef;
  dataset: { path: string; fingerprint: string; format: DatasetFormat; mapping: ColumnMapping; stats: DatasetStats };
  limit: number | null;
  baseline: boolean;
  concurrency: number;
  budget?: JobBudget | null;
}

/** What the runner writes for a finished row. */
export interface RowResultRecord {
  prediction: string | null;
  correct: boolean | null;
  lenientCorrect: boolean | null;
  confidence: number;
  votes: Record<string, number>;
  tieBreak: string;
  runs: RowRun[];
  baseline: BaselineResult | null;
  stages: Record<StageName, StageStats>;
  ms: number;
}

interface JobDbRow {
  id: string;
  name: string;
  created: string;
  updated: string;
  status: StoredJobStatus;
  task_json: string;
  settings_json: string;
  generator_json: string;
  evaluator_json: string;
  dataset_json: string;
  row_limit: number | null;
  baseline: number;
  concurrency: number;
  error: string | null;
  elapsed_ms: number;
  rows_total: number;
  imported: number;
  deterministic: number | null;
  usage_json: string | null;
  budget_json: string | null;
  stopped_by: string | null;
}

/** An id for a job or an experiment: sortable by creation time, short enough to type in `tatra jobs show <id>`. */
export function newStoreId(prefix = ''): string {
  return `${prefix}${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export class JobStore extends GenerationOutputs {
  /** Each job's metric counts, added to as its rows are saved. */
  readonly metricCounts: MetricCountsStore;
  /** A person's decisions on each job's rows. */
  readonly reviews: ReviewStore;
  /** Each job's rows by status, kept by triggers as rows change. */
  readonly rowCounts: RowCountsReader;
  /** Who runs each job: claim, heartbeat, release (claims.ts, the same for experiments). */
  readonly claims: WorkClaims;

  constructor(dbPath: string) {
    super(dbPath);
    try {
      this.rowCounts = new RowCountsReader(this.db);
      this.metricCounts = new MetricCountsStore(this.db, this.rowCounts);
      this.reviews = new ReviewStore(this.db, this.rowCounts);
      this.claims = new WorkClaims(this.db, { table: 'jobs', stoppable: ['queued', 'paused', 'failed', 'cancelled'] });
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.takeReserve();
  }

  /**
   * Rewrites the database small: text written before compression (runs and cached generator
   * outputs) compressed as new rows are (stored-text.ts), rows written before v11 referring to
   * the cache for their paraphrases as new rows do (run-texts.ts), then VACUUM, which also gives
   * back the pages of deleted jobs and turns on incremental auto-vacuum for a file made before it.
   * Every row reads the same afterwards. Returns the file's size before and after, in bytes, the
   * values compressed and the rows that now refer to the cache.
   */
  compact(batch = 500): { before: number; after: number; rewritten: number; referred: number } {
    this.flushCache();
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    const before = statSync(this.path).size;
    const rewritten = compressStoredText(this.db, batch);
    const referred = referStoredParaphrases(this.db, batch);
    this.db.pragma('auto_vacuum = INCREMENTAL');
    this.db.exec('VACUUM');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return { before, after: statSync(this.path).size, rewritten, referred };
  }

  close(): void {
    if (!this.db.open) return;
    this.flushCache();
    this.db.close();
    // Closing the last connection checkpoints and removes the WAL: room to hold the reserve again.
    this.takeReserve();
  }

  // ---------------------------------------------------------------- jobs

  createJob(rec: NewJobRecord): string {
    const id = newStoreId();
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO jobs (id, name, created, updated, status, task_json, settings_json, generator_json, evaluator_json,
          dataset_json, row_limit, baseline, concurrency, error, elapsed_ms, rows_total, imported, budget_json)
         VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, 0, 0, ?)`,
      )
      .run(
        id,
        rec.name,
        now,
        now,
        JSON.stringify(rec.task),
        JSON.stringify(rec.settings),
        JSON.stringify(rec.generator),
        JSON.stringify(rec.evaluator),
        JSON.stringify(rec.dataset),
        rec.limit,
        rec.baseline ? 1 : 0,
        rec.concurrency,
        rec.budget ? JSON.stringify(rec.budget) : null,
      );
    this.metricCounts.jobCreated(id, rec.settings.r);
    return id;
  }

  /**
   * Appends imported rows in one transaction (the importer calls this per batch) and checkpoints:
   * an import writes more than anything else, and the WAL would otherwise hold the whole data set
   * until an automatic checkpoint at 4 MiB, twice the space, all of it needed again to delete it.
   */
  insertRows(jobId: string, rows: readonly DatasetRow[]): void {
    const ins = this.db.prepare(`INSERT INTO job_rows (job_id, idx, line, input, gold, gold_raw, record_json) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.db.transaction(() => {
      for (const r of rows) ins.run(jobId, r.index, r.line, r.input, r.gold, r.goldRaw, r.record ?? null);
      this.db.prepare(`UPDATE jobs SET rows_total = rows_total + ? WHERE id = ?`).run(rows.length, jobId);
    }).immediate();
    this.checkpoint();
  }

  /** What the import learnt by reading the file: its row counts, its fingerprint, and the label map it suggested. */
  updateDatasetStats(jobId: string, stats: DatasetStats, fingerprint?: string, mapping?: ColumnMapping): void {
    const row = this.db.prepare(`SELECT dataset_json FROM jobs WHERE id = ?`).get(jobId) as { dataset_json: string } | undefined;
    if (!row) return;
    const ds = JSON.parse(row.dataset_json) as NewJobRecord['dataset'];
    ds.stats = stats;
    if (fingerprint !== undefined) ds.fingerprint = fingerprint;
    if (mapping !== undefined) ds.mapping = mapping;
    this.db.prepare(`UPDATE jobs SET dataset_json = ? WHERE id = ?`).run(JSON.stringify(ds), jobId);
  }

  /**
   * Maps the imported gold values (stored as they were in the file) through a label map decided
   * after the import read them: a value the map lacks becomes no gold. In chunks of rows with a
   * checkpoint between them, like the import, so the WAL never holds the whole data set.
   */
  mapGold(jobId: string, labelMap: Record<string, string>, rows: number, chunk: number): void {
    const update = this.db.prepare(
      `UPDATE job_rows SET gold = (SELECT value FROM json_each(?) WHERE key = job_rows.gold_raw) WHERE job_id = ? AND gold_raw IS NOT NULL AND idx >= ? AND idx < ?`,
    );
    const map = JSON.stringify(labelMap);
    for (let from = 0; from < rows; from += chunk) {
      update.run(map, jobId, from, from + chunk);
      this.checkpoint();
    }
  }

  markImported(jobId: string): void {
    this.db.prepare(`UPDATE jobs SET imported = 1 WHERE id = ?`).run(jobId);
  }

  isImported(jobId: string): boolean {
    return (this.db.prepare(`SELECT imported FROM jobs WHERE id = ?`).get(jobId) as { imported: number } | undefined)?.imported === 1;
  }

  /**
   * Removes a job and its rows; on a full disk too (see the top of store-file.ts). A DiskFull
   * UserError naming the folder when not even the reserve made room.
   */
  deleteJob(jobId: string): void {
    try {
      this.db.prepare(`DELETE FROM jobs WHERE id = ?`).run(jobId);
      // Gives the job's pages back to the file system (a database with auto_vacuum = INCREMENTAL;
      // elsewhere a no-op until compact()).
      this.db.pragma('incremental_vacuum');
      return;
    } catch (e) {
      if (!isDiskFull(e)) throw e;
    }
    try {
      this.deleteJobOnFullDisk(jobId);
    } catch (e) {
      if (!isDiskFull(e)) throw e;
      throw diskFullError(dirname(this.path), `job ${jobId} could not be deleted; free some space and delete it again`);
    }
  }

  private deleteJobOnFullDisk(jobId: string): void {
    this.giveBackReserve();
    // Frames still only in the WAL go to the file first (the reserve leaves room for one import
    // batch), so every write below restarts the WAL and rewrites it in place.
    this.checkpoint();
    // Marked first: a deletion cut short leaves a job that says so, and deleting it again finishes.
    this.db.prepare(`UPDATE jobs SET status = 'failed', error = ?, owner = NULL WHERE id = ?`).run(DELETE_UNFINISHED, jobId);
    this.checkpoint();
    const chunk = this.db.prepare(`DELETE FROM job_rows WHERE job_id = ? AND idx IN (SELECT idx FROM job_rows WHERE job_id = ? ORDER BY idx DESC LIMIT ?)`);
    while (chunk.run(jobId, jobId, FULL_DISK_DELETE_CHUNK).changes > 0) this.checkpoint();
    this.db.prepare(`DELETE FROM jobs WHERE id = ?`).run(jobId);
    this.checkpoint();
    // Space the delete freed stays in the database file (free pages for the next job); the
    // reserve comes back once the WAL is closed or cut back, whichever gives room first.
    this.takeReserve();
  }

  /** Replaces the recorded generator or evaluator (a model change accepted on resume). */
  setModel(jobId: string, role: 'generator' | 'evaluator', ref: ModelRef): void {
    this.db.prepare(`UPDATE jobs SET ${role === 'generator' ? 'generator_json' : 'evaluator_json'} = ? WHERE id = ?`).run(JSON.stringify(ref), jobId);
  }

  /** What the job has spent, all sessions (the runner writes it as it goes). */
  setUsage(jobId: string, usage: Usage): void {
    this.db.prepare(`UPDATE jobs SET usage_json = ? WHERE id = ?`).run(JSON.stringify(usage), jobId);
  }

  /** Sets (or, with null, removes) the job's budget: a resume may raise it. */
  setBudget(jobId: string, budget: JobBudget | null): void {
    this.db.prepare(`UPDATE jobs SET budget_json = ? WHERE id = ?`).run(budget ? JSON.stringify(budget) : null, jobId);
  }

  /** The input lengths of a job's rows, all and done (the ETA weighs rows by them: jobs/row-progress.ts). */
  inputSizes(jobId: string): RowSizes {
    const r = this.db
      .prepare(`SELECT COALESCE(SUM(length(input)), 0) AS "all", COALESCE(SUM(CASE WHEN status = 'done' THEN length(input) ELSE 0 END), 0) AS done FROM job_rows WHERE job_id = ?`)
      .get(jobId) as RowSizes;
    return { all: r.all, done: r.done };
  }

  /** Rows not yet attempted (failed ones are attempted). */
  pendingRowCount(jobId: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM job_rows WHERE job_id = ? AND status = 'pending'`).get(jobId) as { n: number }).n;
  }

  setStatus(jobId: string, status: StoredJobStatus, error: string | null = null): void {
    this.db.prepare(`UPDATE jobs SET status = ?, error = ?, updated = ? WHERE id = ?`).run(status, error, new Date().toISOString(), jobId);
  }

  /** A paused job a raced experiment dropped says so (`stoppedBy` race); a resume's claim clears it. */
  markDropped(jobId: string): void {
    this.db.prepare(`UPDATE jobs SET stopped_by = 'race', updated = ? WHERE id = ? AND status = 'paused' AND stopped_by IS NULL`).run(new Date().toISOString(), jobId);
  }

  /** Time spent running, added as it goes (the heartbeat that tells a live job is `claims.beat`). */
  addElapsed(jobId: string, ms: number): void {
    this.db.prepare(`UPDATE jobs SET elapsed_ms = elapsed_ms + ? WHERE id = ?`).run(ms, jobId);
  }

  getJob(jobId: string): JobInfo | null {
    const row = this.db.prepare(`SELECT * FROM jobs WHERE id = ?`).get(jobId) as JobDbRow | undefined;
    return row ? this.toInfo(row) : null;
  }

  /** Accepts a unique prefix of an id too (typing `tatra jobs show mabc` is enough). */
  findJobId(idOrPrefix: string): string | null {
    return this.findId('jobs', idOrPrefix);
  }

  /**
   * The id in `table` equal to `idOrPrefix`, else the one id it is a prefix of, else null;
   * `where` narrows the rows (an experiment's kind).
   */
  findId(table: 'jobs' | 'experiments', idOrPrefix: string, where: { kind?: string } = {}): string | null {
    const kind = where.kind === undefined ? '' : ' AND kind = @kind';
    const params = { id: idOrPrefix, like: `${idOrPrefix.replace(/[%_\\]/g, '\\$&')}%`, ...(where.kind !== undefined ? { kind: where.kind } : {}) };
    const exact = this.db.prepare(`SELECT id FROM ${table} WHERE id = @id${kind}`).get(params) as { id: string } | undefined;
    if (exact) return exact.id;
    const like = this.db.prepare(`SELECT id FROM ${table} WHERE id LIKE @like ESCAPE '\\'${kind} LIMIT 2`).all(params) as { id: string }[];
    return like.length === 1 ? like[0]!.id : null;
  }

  listJobs(): JobInfo[] {
    const rows = this.db.prepare(`SELECT * FROM jobs ORDER BY created DESC, id DESC`).all() as JobDbRow[];
    return rows.map((r) => this.toInfo(r));
  }

  /** The job's rows by status, one row kept by triggers (row-counts.ts), never a count of its rows. */
  private counts(jobId: string): RowCounts {
    return this.rowCounts.of(jobId);
  }

  private toInfo(r: JobDbRow): JobInfo {
    const c = this.counts(r.id);
    const unimported = r.imported === 0 && r.status === 'queued';
    return {
      id: r.id,
      name: r.name,
      created: r.created,
      updated: r.updated,
      // A job whose import never finished (its process died while reading the file) cannot run.
      status: unimported ? 'failed' : r.status,
      interrupted: false,
      task: JSON.parse(r.task_json) as TaskDefinition,
      settings: JSON.parse(r.settings_json) as TatraSettings,
      generator: JSON.parse(r.generator_json) as ModelRef,
      evaluator: JSON.parse(r.evaluator_json) as ModelRef,
      dataset: JSON.parse(r.dataset_json) as JobInfo['dataset'],
      limit: r.row_limit,
      baseline: r.baseline !== 0,
      concurrency: r.concurrency,
      error: unimported ? IMPORT_UNFINISHED : r.error,
      rowsTotal: r.rows_total,
      rowsDone: c.done,
      rowsFailed: c.failed,
      rowsCorrect: c.correct,
      rowsWithGold: c.withGold,
      elapsedMs: r.elapsed_ms,
      deterministic: r.deterministic === null ? null : r.deterministic !== 0,
      usage: r.usage_json ? (JSON.parse(r.usage_json) as Usage) : emptyUsage(),
      budget: r.budget_json ? (JSON.parse(r.budget_json) as JobBudget) : null,
      stoppedBy: r.stopped_by === 'budget' || r.stopped_by === 'race' ? r.stopped_by : null,
    };
  }

  /**
   * Records whether a session of the job runs on deterministic backends: the job stays
   * deterministic only while every session was (one session on a remote server makes it not).
   */
  recordDeterministic(jobId: string, deterministic: boolean): void {
    this.db
      .prepare(`UPDATE jobs SET deterministic = CASE WHEN deterministic IS NULL THEN ? ELSE MIN(deterministic, ?) END WHERE id = ?`)
      .run(deterministic ? 1 : 0, deterministic ? 1 : 0, jobId);
  }

  // ---------------------------------------------------------------- run examples

  saveRunExamples(jobId: string, ex: StoredRunExamples): void {
    this.db
      .prepare(
        `INSERT OR REPLACE INTO job_run_examples (job_id, run, seed, examples_json, filtered_json, stats_json) VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(jobId, ex.run, ex.seed, JSON.stringify(ex.examples), JSON.stringify(ex.filtered), JSON.stringify(ex.stats));
  }

  runExamples(jobId: string): StoredRunExamples[] {
    const rows = this.db.prepare(`SELECT * FROM job_run_examples WHERE job_id = ? ORDER BY run`).all(jobId) as Array<{
      run: number;
      seed: number;
      examples_json: string;
      filtered_json: string;
      stats_json: string;
    }>;
    return rows.map((r) => ({
      run: r.run,
      seed: r.seed,
      examples: JSON.parse(r.examples_json) as StoredRunExamples['examples'],
      filtered: JSON.parse(r.filtered_json) as StoredRunExamples['filtered'],
      stats: JSON.parse(r.stats_json) as StoredRunExamples['stats'],
    }));
  }

  // ---------------------------------------------------------------- rows

  /** Indexes of rows not yet done (pending or failed), in order: what a (re)start works through. */
  unfinishedRowIndexes(jobId: string): number[] {
    return (this.db.prepare(`SELECT idx FROM job_rows WHERE job_id = ? AND status != 'done' ORDER BY idx`).all(jobId) as { idx: number }[]).map(
      (r) => r.idx,
    );
  }

  row(jobId: string, index: number): JobRow | null {
    const r = this.statement(`SELECT * FROM job_rows WHERE job_id = ? AND idx = ?`).get(jobId, index) as RowDbRow | undefined;
    return r ? this.toRow(r) : null;
  }

  private toRow(r: RowDbRow): JobRow {
    const stored = parseJson<StoredRun[]>(unpackText(r.runs_json));
    const read = this.statement(`SELECT value FROM generation_cache WHERE key = ?`);
    const entryText = (entry: string) => unpackText((read.get(Buffer.from(entry, 'base64')) as { value: string | Buffer } | undefined)?.value) ?? undefined;
    return toRow(r, stored && expandRuns(stored, entryText));
  }

  /**
   * Commits one finished row at once (its own transaction), so a crash loses only rows in flight.
   * The generator outputs kept so far are written in the same transaction, so the outputs the
   * row's runs refer to (run-texts.ts) are on disk whenever the row is.
   */
  saveRowResult(jobId: string, index: number, res: RowResultRecord): void {
    const update = this.statement(
      `UPDATE job_rows SET status = 'done', prediction = ?, correct = ?, lenient_correct = ?, confidence = ?, votes_json = ?, tie_break = ?,
         runs_json = ?, baseline_json = ?, stages_json = ?, ms = ?, error = NULL, finished = ?, runs_done = ?
       WHERE job_id = ? AND idx = ?`,
    );
    const gold = this.statement(`SELECT gold FROM job_rows WHERE job_id = ? AND idx = ?`);
    // BEGIN IMMEDIATE: the row's packed runs are read before it is written, and a deferred
    // transaction that read first cannot take the write lock once another process (a person's
    // review decisions, docs/method.md §17) has committed meanwhile: SQLite answers SQLITE_BUSY at
    // once, without waiting, and the job failed with 'database is locked'.
    this.db.transaction(() => {
      this.flushCache();
      update.run(
        res.prediction,
        res.correct === null ? null : res.correct ? 1 : 0,
        res.lenientCorrect === null ? null : res.lenientCorrect ? 1 : 0,
        res.confidence,
        JSON.stringify(res.votes),
        res.tieBreak,
        this.packRuns(jobId, index, res.runs),
        res.baseline ? JSON.stringify(res.baseline) : null,
        packText(JSON.stringify(res.stages)),
        res.ms,
        new Date().toISOString(),
        res.runs.length,
        jobId,
        index,
      );
      const row = gold.get(jobId, index) as { gold: string | null } | undefined;
      if (row) this.metricCounts.rowDone(jobId, { status: 'done', gold: row.gold, prediction: res.prediction, confidence: res.confidence, lenientCorrect: res.lenientCorrect, runs: res.runs, baseline: res.baseline });
    }).immediate();
  }

  saveRowFailure(jobId: string, index: number, error: string): void {
    this.statement(`UPDATE job_rows SET status = 'failed', error = ?, finished = ? WHERE job_id = ? AND idx = ?`).run(error, new Date().toISOString(), jobId, index);
  }

  rows(jobId: string, q: RowQuery = {}): RowPage {
    const where = [`job_id = ?`];
    if (q.onlyWrong) where.push(`status = 'done' AND correct = 0`);
    const order = rowOrder(q.sort);
    const c = this.counts(jobId);
    const total = q.onlyWrong ? c.withGold - c.correct : c.rows;
    const limit = Math.max(0, Math.min(q.limit ?? 100, 10_000));
    const offset = Math.max(0, q.offset ?? 0);
    const columns = q.runs === false ? SUMMARY_COLUMNS : '*';
    const rows = this.db
      .prepare(`SELECT ${columns} FROM job_rows WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(jobId, limit, offset) as RowDbRow[];
    return { total, rows: rows.map((r) => (q.runs === false ? toRow(r, null) : this.toRow(r))) };
  }

  /**
   * Each row's outcome by row index, read from the queue index alone: true right, false wrong, null
   * not done or without gold (paired comparisons on the rows both scored, docs/method.md §16).
   */
  outcomes(jobId: string): Array<boolean | null> {
    const out: Array<boolean | null> = [];
    const rows = this.statement(`SELECT idx, correct FROM job_rows WHERE job_id = ? AND status = 'done' AND correct IS NOT NULL`).all(jobId) as Array<{ idx: number; correct: number }>;
    for (const r of rows) out[r.idx] = r.correct === 1;
    return out;
  }

  /** Every row of a job in index order, streamed (exports and metrics of large jobs). */
  *iterateRows(jobId: string): Generator<JobRow> {
    for (const r of this.db.prepare(`SELECT * FROM job_rows WHERE job_id = ? ORDER BY idx`).iterate(jobId) as Iterable<RowDbRow>) yield this.toRow(r);
  }

}

/**
 * The rows table's ORDER BY for a sort, written as the indexes of schema v17 say it, so a page is
 * read from one (rows without a confidence last, ties by index) instead of sorting every row.
 */
export function rowOrder(sort: RowQuery['sort']): string {
  if (sort === 'confidence-asc') return `(confidence IS NULL), confidence, idx`;
  if (sort === 'confidence-desc') return `(confidence IS NULL), confidence DESC, idx`;
  return `idx`;
}

/** Opens (creating if needed) `<dataDir>/tatra.db`; a folder or disk that cannot hold it is a UserError naming it. */
export function openJobStore(dataDir: string): JobStore {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (e) {
    throw environmentError(e, `the data folder ${dataDir}`) ?? e;
  }
  const path = join(dataDir, JOB_DB_FILE);
  try {
    return new JobStore(path);
  } catch (e) {
    // Opening needs room for the WAL index (32 KiB; SQLite says SQLITE_IOERR_SHMSIZE when it
    // cannot have it) and a WAL: on a full disk, the reserve makes it.
    const code = (e as { code?: unknown }).code;
    if ((isDiskFull(e) || (typeof code === 'string' && code.startsWith('SQLITE_IOERR'))) && existsSync(`${path}-reserve`)) {
      rmSync(`${path}-reserve`, { force: true });
      try {
        return new JobStore(path);
      } catch (again) {
        throw environmentError(again, `the job database ${path}`) ?? again;
      }
    }
    throw environmentError(e, `the job database ${path}`) ?? e;
  }
}
