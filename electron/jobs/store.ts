// The job store: one SQLite file (`<dataDir>/tatra.db`) holding every evaluation job, the rows it
// was created from, the examples of each run, each finished row's full result, and the
// generator-output cache.
//
// Durability: WAL with synchronous=NORMAL. Every finished row is its own transaction; at COMMIT
// SQLite has written the WAL frames with write(2), so they sit in the OS page cache and survive a
// SIGKILL of this process (what the resume test does). Only an OS crash or power loss can drop
// the last few commits under NORMAL; FULL would fsync every row and cost far more than a row of
// inference is worth protecting against that. Set TATRA_DB_SYNC=FULL to choose otherwise.
//
// A full disk: to write anything, even a DELETE, SQLite needs room for WAL frames (one per page
// the statement changes; deleting rows rewrites every page that held them before it is freed),
// and a checkpoint needs room for any page the database file does not have yet. So the WAL is
// kept small (journal_size_limit; imports checkpoint after each batch, so the data set sits in
// the database file, not in a WAL that grew with it), and `<db>-reserve`, a few hundred KiB the
// store holds in the data folder, is given back to the file system when SQLite reports the disk
// full. A delete then runs in chunks with a checkpoint between them, so each chunk rewrites the
// WAL in place instead of growing it (see deleteJob).
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { diskFullError, environmentError, isDiskFull } from '../common/env-errors';
import type { TaskDefinition } from '../common/task';
import type { StageName, StageStats, TatraSettings } from '../common/tatra';
import { emptyUsage, type Usage } from '../common/plan';
import { compressStoredText, packText, storedCacheKey, unpackText } from './stored-text';
import { expandRuns, referRuns, referStoredParaphrases, type StoredRun } from './run-texts';
import { paraphraseOrigin, paraphraseOriginOfKey } from '../engine/cache';
import type { JobBudget } from './usage';
import type {
  BaselineResult,
  ColumnMapping,
  DatasetFormat,
  DatasetRow,
  DatasetStats,
  JobInfo,
  JobRow,
  JobStatus,
  ModelRef,
  RowQuery,
  RowPage,
  RowRun,
  RowSizes,
  StoredRunExamples,
} from './types';
import { SCHEMA_VERSION, migrate } from './migrations';
import { MetricCountsStore } from './metric-counts-store';
import { ReviewStore } from './review-store';
import { WorkClaims } from './claims';

export { SCHEMA_VERSION };

export const JOB_DB_FILE = 'tatra.db';
/** The error shown for a job whose data-set import did not finish. */
export const IMPORT_UNFINISHED = 'the import of the data set did not finish; create the job again';
/** The error of a job whose deletion a full disk cut short. */
export const DELETE_UNFINISHED = 'its deletion did not finish (the disk was full); delete it again';
/** The WAL is cut back to this size after a checkpoint instead of keeping the largest it ever was. */
export const WAL_LIMIT_BYTES = 1024 * 1024;
/** Room held in `<db>-reserve` for deleting on a full disk: a checkpoint of one import batch and a chunk of a delete. */
export const RESERVE_BYTES = 256 * 1024;
/** Rows deleted per transaction when the disk is full: their pages' WAL frames fit in the reserve. */
const FULL_DISK_DELETE_CHUNK = 200;
/** Generator outputs are written at most this long after they are made, or when this many wait. */
const CACHE_FLUSH_MS = 100;
const CACHE_FLUSH_ENTRIES = 256;
/**
 * Paraphrase outputs remembered (by the row and run they serve) for finished rows to refer to:
 * enough for every run of thousands of rows in flight; past it the oldest are forgotten, and a
 * row whose output was forgotten holds its paraphrases itself.
 */
const PARAPHRASE_SOURCES = 50_000;
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
  status: JobStatus;
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

interface RowDbRow {
  idx: number;
  line: number;
  input: string;
  gold: string | null;
  gold_raw: string | null;
  status: JobRow['status'];
  prediction: string | null;
  correct: number | null;
  lenient_correct: number | null;
  confidence: number | null;
  votes_json: string | null;
  tie_break: string | null;
  /** TEXT, or a Brotli BLOB (stored-text.ts). */
  runs_json: string | Buffer | null;
  baseline_json: string | null;
  /** TEXT, or a Brotli BLOB (from schema v10 on). */
  stages_json: string | Buffer | null;
  ms: number | null;
  error: string | null;
}

function parseJson<T>(s: string | null): T | null {
  return s === null ? null : (JSON.parse(s) as T);
}

function bool(v: number | null): boolean | null {
  return v === null ? null : v !== 0;
}

/** An id for a job or an experiment: sortable by creation time, short enough to type in `tatra jobs show <id>`. */
export function newStoreId(prefix = ''): string {
  return `${prefix}${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export class JobStore {
  readonly db: Database.Database;
  readonly path: string;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly pendingCache = new Map<string, string>();
  private cacheTimer: NodeJS.Timeout | undefined;
  /** paraphraseOrigin → the cache keys of the paraphrase outputs read or written for it, oldest first. */
  private readonly paraphraseSources = new Map<string, Set<string>>();
  /** Each job's metric counts, added to as its rows are saved. */
  readonly metricCounts: MetricCountsStore;
  /** A person's decisions on each job's rows. */
  readonly reviews: ReviewStore;
  /** Who runs each job: claim, heartbeat, release (claims.ts, the same for experiments). */
  readonly claims: WorkClaims;

  constructor(dbPath: string) {
    this.path = dbPath;
    // The CLI and the app may share the file; wait for a writer instead of failing at once
    // (generously: five processes on two busy cores can hold the lock for seconds). Set at open,
    // so even the pragmas below wait.
    this.db = new Database(dbPath, { timeout: 30_000 });
    try {
      // A new file frees the pages of deleted jobs as it goes (deleteJob); on an existing one
      // this is a no-op until compact() rewrites it.
      this.db.pragma('auto_vacuum = INCREMENTAL');
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${process.env.TATRA_DB_SYNC === 'FULL' ? 'FULL' : 'NORMAL'}`);
      this.db.pragma('foreign_keys = ON');
      this.db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
      migrate(this.db, this.path);
      this.metricCounts = new MetricCountsStore(this.db);
      this.reviews = new ReviewStore(this.db);
      this.claims = new WorkClaims(this.db, { table: 'jobs', stoppable: ['queued', 'paused', 'failed', 'cancelled'] });
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.takeReserve();
  }

  /** `<db>-reserve`: disk space held back for deleting when the disk is full. */
  get reservePath(): string {
    return `${this.path}-reserve`;
  }

  /** Holds the reserve again if it is missing and there is room (on a full disk it stays given back). */
  private takeReserve(): void {
    if (existsSync(this.reservePath)) return;
    try {
      writeFileSync(this.reservePath, Buffer.alloc(RESERVE_BYTES), { flag: 'wx' });
    } catch {
      // No room (or no permission): no reserve until there is; a partial one is no use.
      try {
        rmSync(this.reservePath, { force: true });
      } catch {
        /* nothing was written */
      }
    }
  }

  /** Gives the reserve back to the file system; true if there was one. */
  private giveBackReserve(): boolean {
    const had = existsSync(this.reservePath);
    rmSync(this.reservePath, { force: true });
    return had;
  }

  /**
   * Copies the WAL into the database file (PASSIVE: without waiting for readers), so the next
   * write starts the WAL from its beginning, in place, and journal_size_limit can cut it back.
   */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(PASSIVE)');
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

  /** Schema version of the open file (PRAGMA user_version). */
  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
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
    })();
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
   * Removes a job and its rows; on a full disk too (see the top of this file). A DiskFull
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

  setStatus(jobId: string, status: JobStatus, error: string | null = null): void {
    this.db.prepare(`UPDATE jobs SET status = ?, error = ?, updated = ? WHERE id = ?`).run(status, error, new Date().toISOString(), jobId);
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

  /** A done row has `correct` exactly when it has gold, so every count is read from the queue index, never the rows. */
  private counts(jobId: string): { done: number; failed: number; correct: number; withGold: number } {
    return this.db
      .prepare(
        `SELECT
           COALESCE(SUM(status = 'done'), 0) AS done,
           COALESCE(SUM(status = 'failed'), 0) AS failed,
           COALESCE(SUM(status = 'done' AND correct = 1), 0) AS correct,
           COALESCE(SUM(status = 'done' AND correct IS NOT NULL), 0) AS withGold
         FROM job_rows INDEXED BY job_rows_queue WHERE job_id = ?`,
      )
      .get(jobId) as { done: number; failed: number; correct: number; withGold: number };
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
      stoppedBy: r.stopped_by === 'budget' ? 'budget' : null,
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
    })();
  }

  /**
   * A row's runs as stored: each run's paraphrases as spans of the cached output they were parsed
   * from where that output is known and on disk (run-texts.ts), else as they are; whichever of
   * the two forms is smaller once compressed (text a model repeats compresses to little).
   */
  private packRuns(jobId: string, index: number, runs: RowRun[]): string | Buffer {
    const plain = packText(JSON.stringify(runs));
    const input = (this.statement(`SELECT input FROM job_rows WHERE job_id = ? AND idx = ?`).get(jobId, index) as { input: string } | undefined)?.input;
    if (input === undefined) return plain;
    const read = this.statement(`SELECT value FROM generation_cache WHERE key = ?`);
    const { runs: stored, referred } = referRuns(
      runs,
      (run) => [...(this.paraphraseSources.get(paraphraseOrigin(run.seed, input)) ?? [])].map(storedCacheKey),
      (entry) => unpackText((read.get(entry) as { value: string | Buffer } | undefined)?.value),
    );
    if (referred === 0) return plain;
    const packed = packText(JSON.stringify(stored));
    return packed.length < plain.length ? packed : plain;
  }

  /** Remembers that `key`'s output is at hand for the row and run its key names (packRuns). */
  private noteParaphraseSource(key: string): void {
    const origin = paraphraseOriginOfKey(key);
    if (origin === null) return;
    const keys = this.paraphraseSources.get(origin) ?? new Set<string>();
    keys.add(key);
    // Re-inserted: the newest at the end, where eviction comes last.
    this.paraphraseSources.delete(origin);
    this.paraphraseSources.set(origin, keys);
    if (this.paraphraseSources.size > PARAPHRASE_SOURCES) this.paraphraseSources.delete(this.paraphraseSources.keys().next().value!);
  }

  saveRowFailure(jobId: string, index: number, error: string): void {
    this.statement(`UPDATE job_rows SET status = 'failed', error = ?, finished = ? WHERE job_id = ? AND idx = ?`).run(error, new Date().toISOString(), jobId, index);
  }

  rows(jobId: string, q: RowQuery = {}): RowPage {
    const where = [`job_id = ?`];
    if (q.onlyWrong) where.push(`status = 'done' AND correct = 0`);
    const order =
      q.sort === 'confidence-asc'
        ? `CASE WHEN confidence IS NULL THEN 1 ELSE 0 END, confidence ASC, idx`
        : q.sort === 'confidence-desc'
          ? `CASE WHEN confidence IS NULL THEN 1 ELSE 0 END, confidence DESC, idx`
          : `idx`;
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM job_rows WHERE ${where.join(' AND ')}`).get(jobId) as { n: number }).n;
    const limit = Math.max(0, Math.min(q.limit ?? 100, 10_000));
    const offset = Math.max(0, q.offset ?? 0);
    const rows = this.db
      .prepare(`SELECT * FROM job_rows WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ? OFFSET ?`)
      .all(jobId, limit, offset) as RowDbRow[];
    return { total, rows: rows.map((r) => this.toRow(r)) };
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

  // ---------------------------------------------------------------- generation cache

  cacheGet(key: string): string | undefined {
    const pending = this.pendingCache.get(key);
    if (pending !== undefined) {
      this.noteParaphraseSource(key);
      return pending;
    }
    const r = this.statement(`SELECT value FROM generation_cache WHERE key = ?`).get(storedCacheKey(key)) as { value: string | Buffer } | undefined;
    const value = unpackText(r?.value) ?? undefined;
    if (value !== undefined) this.noteParaphraseSource(key);
    return value;
  }

  /**
   * Keeps a generator output, written within CACHE_FLUSH_MS together with the others of that
   * moment: one transaction each cost more than the rest of a remote call (a remote job writes
   * one per paraphrase call). What a crash loses is regenerated, never a result.
   */
  cacheSet(key: string, value: string): void {
    this.pendingCache.set(key, value);
    this.noteParaphraseSource(key);
    if (this.pendingCache.size >= CACHE_FLUSH_ENTRIES) this.flushCache();
    else if (!this.cacheTimer) {
      this.cacheTimer = setTimeout(() => this.flushCache(), CACHE_FLUSH_MS);
      this.cacheTimer.unref();
    }
  }

  /** Writes the generator outputs kept so far, in one transaction. */
  flushCache(): void {
    clearTimeout(this.cacheTimer);
    this.cacheTimer = undefined;
    if (this.pendingCache.size === 0 || !this.db.open) return;
    const entries = [...this.pendingCache];
    this.pendingCache.clear();
    const created = Math.floor(Date.now() / 1000);
    // Written once, never changed or deleted: finished rows may refer into an entry (run-texts.ts).
    // Of two processes writing one key (a remote generator may answer differently) the first stays.
    const insert = this.statement(`INSERT OR IGNORE INTO generation_cache (key, value, created) VALUES (?, ?, ?)`);
    try {
      this.db.transaction(() => {
        for (const [key, value] of entries) insert.run(storedCacheKey(key), packText(value), created);
      })();
    } catch (e) {
      // A full disk shows where results are written; here it costs regenerating these outputs.
      if (!isDiskFull(e)) throw e;
    }
  }

  /** A statement prepared once per store: the ones run per row and per generator call. */
  private statement(sql: string): Database.Statement {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }
}

function toRow(r: RowDbRow, runs: RowRun[] | null): JobRow {
  return {
    index: r.idx,
    line: r.line,
    input: r.input,
    gold: r.gold,
    goldRaw: r.gold_raw,
    status: r.status,
    prediction: r.prediction,
    correct: bool(r.correct),
    lenientCorrect: bool(r.lenient_correct),
    confidence: r.confidence,
    votes: parseJson<Record<string, number>>(r.votes_json),
    tieBreak: r.tie_break,
    runs,
    baseline: parseJson<BaselineResult>(r.baseline_json),
    stages: parseJson<Record<StageName, StageStats>>(unpackText(r.stages_json)),
    ms: r.ms,
    error: r.error,
  };
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

/**
 * The engine's GenerationCache (get/set by `generationCacheKey`) on the job database: generator
 * outputs survive restarts, so a re-run with another evaluator does not regenerate them.
 */
export class SqliteGenerationCache {
  hits = 0;
  misses = 0;
  writes = 0;

  constructor(private readonly store: JobStore) {}

  get(key: string): Promise<string | undefined> {
    const v = this.store.cacheGet(key);
    if (v === undefined) this.misses++;
    else this.hits++;
    return Promise.resolve(v);
  }

  set(key: string, value: string): Promise<void> {
    this.writes++;
    this.store.cacheSet(key, value);
    return Promise.resolve();
  }
}
