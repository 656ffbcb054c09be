// The job database's schema: one migration per version, applied in order by the store when it
// opens a file (PRAGMA user_version says how far a file is). A migration is never edited once it
// has shipped: a file on someone's disk went through it; a change is a new entry.
import type Database from 'better-sqlite3';
import { UserError } from '../common/errors';
import { compressStoredText, storedCacheKey, unpackText } from './stored-text';
import { ROW_COUNTS_SCHEMA } from './row-counts';

/** Bump with a new entry in MIGRATIONS. */
export const SCHEMA_VERSION = 17;

/** SQL, or a step that needs code (it runs inside the version's transaction). */
type Migration = string | ((db: Database.Database) => void);

const MIGRATIONS: Migration[] = [
  // v1
  `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    status TEXT NOT NULL,
    task_json TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    generator_json TEXT NOT NULL,
    evaluator_json TEXT NOT NULL,
    dataset_json TEXT NOT NULL,
    row_limit INTEGER,
    baseline INTEGER NOT NULL,
    concurrency INTEGER NOT NULL,
    error TEXT,
    elapsed_ms REAL NOT NULL DEFAULT 0,
    rows_total INTEGER NOT NULL DEFAULT 0,
    -- Who runs it ("host:pid"), so another process can tell a live job from one whose process died.
    owner TEXT
  );
  CREATE TABLE job_rows (
    job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    line INTEGER NOT NULL,
    input TEXT NOT NULL,
    gold TEXT,
    gold_raw TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    prediction TEXT,
    correct INTEGER,
    lenient_correct INTEGER,
    confidence REAL,
    votes_json TEXT,
    tie_break TEXT,
    runs_json TEXT,
    baseline_json TEXT,
    stages_json TEXT,
    ms REAL,
    error TEXT,
    finished TEXT,
    PRIMARY KEY (job_id, idx)
  ) WITHOUT ROWID;
  CREATE INDEX job_rows_status ON job_rows(job_id, status);
  CREATE TABLE job_run_examples (
    job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    run INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    examples_json TEXT NOT NULL,
    filtered_json TEXT NOT NULL,
    stats_json TEXT NOT NULL,
    PRIMARY KEY (job_id, run)
  ) WITHOUT ROWID;
  CREATE TABLE generation_cache (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // v2: 1 once every row of the data set is in job_rows; 0 after a crash during the import.
  // Jobs from v1 were imported before they were visible, hence the default for existing rows.
  `
  ALTER TABLE jobs ADD COLUMN imported INTEGER NOT NULL DEFAULT 1;
  `,
  // v3: sweeps (moved into experiments by v6). A sweep is one job per (n, k, seed); the calls it
  // made are counted here because the jobs' own stats count cached work as free.
  `
  CREATE TABLE sweeps (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    status TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    error TEXT,
    owner TEXT,
    generator_calls INTEGER NOT NULL DEFAULT 0,
    evaluator_calls INTEGER NOT NULL DEFAULT 0,
    -- Prompt + completion tokens of those calls: with the jobs' time, the sweep's throughput.
    tokens INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE sweep_jobs (
    sweep_id TEXT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    k INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    PRIMARY KEY (sweep_id, n, k, seed)
  ) WITHOUT ROWID;
  `,
  // v4: generator × evaluator comparisons (models/compare.ts). Until v3 that module created the
  // table itself, outside these migrations; IF NOT EXISTS adopts such a table as it is.
  `
  CREATE TABLE IF NOT EXISTS model_comparisons (
    id TEXT PRIMARY KEY,
    created INTEGER NOT NULL,
    status TEXT NOT NULL,
    record_json TEXT NOT NULL
  );
  `,
  // v5: whether every session of a job ran on backends that promise the same output for the same
  // request (TatraBackend.deterministic): 1 yes, 0 not (a remote server, a GPU build), NULL before
  // any session, and for jobs from v4, whose sessions were not recorded.
  `
  ALTER TABLE jobs ADD COLUMN deterministic INTEGER;
  `,
  // v6: one home for long experiments (jobs/experiment-store.ts): sweeps and comparisons are both
  // a grid of cells, one job each, with an owner, a heartbeat and the calls they made. Sweeps move
  // over as they are (a cell is [n, k, seed]); each comparison's JSON record becomes a row (a cell
  // is [generator, evaluator]) whose pairs are read from their jobs. A comparison left running by a
  // process that died is paused, resumable; one that failed is failed.
  `
  CREATE TABLE experiments (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    status TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    error TEXT,
    owner TEXT,
    generator_calls INTEGER NOT NULL DEFAULT 0,
    evaluator_calls INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX experiments_kind ON experiments(kind, created);
  CREATE TABLE experiment_jobs (
    experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    cell TEXT NOT NULL,
    job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    PRIMARY KEY (experiment_id, cell)
  ) WITHOUT ROWID;
  INSERT INTO experiments (id, kind, name, created, updated, status, spec_json, error, owner, generator_calls, evaluator_calls, tokens)
    SELECT id, 'sweep', name, created, updated, status, spec_json, error, owner, generator_calls, evaluator_calls, tokens FROM sweeps;
  INSERT INTO experiment_jobs (experiment_id, cell, job_id) SELECT sweep_id, json_array(n, k, seed), job_id FROM sweep_jobs;
  INSERT INTO experiments (id, kind, name, created, updated, status, spec_json, error)
    SELECT id, 'compare', 'comparison on ' || json_extract(record_json, '$.spec.task'),
      strftime('%Y-%m-%dT%H:%M:%fZ', created / 1000.0, 'unixepoch'),
      strftime('%Y-%m-%dT%H:%M:%fZ', COALESCE(json_extract(record_json, '$.finishedAt'), created) / 1000.0, 'unixepoch'),
      CASE status WHEN 'running' THEN 'paused' WHEN 'error' THEN 'failed' ELSE status END,
      json_object('spec', json(json_extract(record_json, '$.spec')), 'warnings', json(COALESCE(json_extract(record_json, '$.warnings'), '[]'))),
      json_extract(record_json, '$.error')
    FROM model_comparisons;
  INSERT OR IGNORE INTO experiment_jobs (experiment_id, cell, job_id)
    SELECT c.id, json_array(json_extract(p.value, '$.generator'), json_extract(p.value, '$.evaluator')), json_extract(p.value, '$.jobId')
    FROM model_comparisons c, json_each(c.record_json, '$.pairs') p
    WHERE json_extract(p.value, '$.jobId') IN (SELECT id FROM jobs);
  DROP TABLE sweep_jobs;
  DROP TABLE sweeps;
  DROP TABLE model_comparisons;
  `,
  // v7: what a job spent (calls and tokens per stage, all sessions; jobs/usage.ts), the budget
  // that stops it, and why it last stopped ('budget'), so a paused job says its budget ran out.
  `
  ALTER TABLE jobs ADD COLUMN usage_json TEXT;
  ALTER TABLE jobs ADD COLUMN budget_json TEXT;
  ALTER TABLE jobs ADD COLUMN stopped_by TEXT;
  `,
  // v8: an experiment's budget (its jobs together stop before exceeding it) and why it last
  // stopped ('budget'), as jobs have since v7.
  `
  ALTER TABLE experiments ADD COLUMN budget_json TEXT;
  ALTER TABLE experiments ADD COLUMN stopped_by TEXT;
  `,
  // v9: long text written before compression (a row's runs, a cached generator output) compressed
  // as new rows are (stored-text.ts); the schema is unchanged and every value reads the same. The
  // pages it frees go back to the file system with `tatra jobs gc`.
  (db) => {
    compressStoredText(db);
  },
  // v10: the generation cache keyed compactly: its key, about 130 characters of hashes and fields,
  // becomes their 16-byte digest (stored-text.ts, storedCacheKey), and the time an entry was
  // written seconds since 1970 instead of an ISO string: key and time were 55 % of what the
  // entries held. The values stay as they are. Nothing reads the key's fields back (an entry is
  // only ever looked up by the key the engine makes again), so nothing is lost. From v10 on a
  // row's stage counts (stages_json) are written compressed too; old TEXT ones read as they are.
  (db) => {
    db.function('tatra_stored_cache_key', { deterministic: true }, (key: unknown) => storedCacheKey(String(key)));
    db.exec(`
      CREATE TABLE generation_cache_v10 (
        key BLOB PRIMARY KEY,
        value NOT NULL,
        created INTEGER NOT NULL
      ) WITHOUT ROWID;
      INSERT OR IGNORE INTO generation_cache_v10 (key, value, created)
        SELECT tatra_stored_cache_key(key), value, COALESCE(CAST(strftime('%s', created) AS INTEGER), 0) FROM generation_cache;
      DROP TABLE generation_cache;
      ALTER TABLE generation_cache_v10 RENAME TO generation_cache;
    `);
  },
  // v11: a finished row's paraphrases may be stored as spans of the cached generator output they
  // were parsed from (run-texts.ts) instead of again as text, and cache entries are never
  // replaced. The tables are unchanged and every row written before reads as it did; the version
  // says that a row may refer into the cache, which code before it would read as a row without
  // paraphrases. Rows written before keep their paraphrases as text (their cache keys, digests
  // since v10, no longer name the row they served) until `tatra jobs gc` finds their outputs by
  // content (run-texts.ts, referStoredParaphrases).
  '',
  // v12: a person's review of a job's rows (jobs/review-store.ts) and the metrics kept as rows
  // finish (jobs/metric-counts.ts), so neither reads every row of a large job:
  // - review_log: every decision as it was made (a label, a skip, an undo), what it replaced and
  //   when, never changed; review_decisions: each reviewed row's decision now (the log's latest
  //   entry for it that is not undone). client_id makes a decision sent twice (a retry after a
  //   lost answer) one entry.
  // - job_metrics: a job's metric counts (metric-counts.ts), added to in the transaction that
  //   saves each row; a job without them (before v12) has them counted on first read.
  // - job_rows.runs_done: the runs a row made (fewer than r: its vote stopped early), backfilled
  //   for the jobs that stop early; job_rows.record_json: the row's columns as the file had them,
  //   a JSON object whose input column is null (the input is job_rows.input), so the final export
  //   gives every column back; NULL for rows imported before v12.
  // - job_rows_queue: the review queue's orders and filters and a job's row counts read from an
  //   index instead of the rows (building it reads every row once).
  (db) => {
    db.function('tatra_runs_done', { deterministic: true }, (runs: unknown) => {
      const text = unpackText(runs as string | Buffer | null);
      return text === null ? null : (JSON.parse(text) as unknown[]).length;
    });
    db.exec(`
      ALTER TABLE job_rows ADD COLUMN runs_done INTEGER;
      ALTER TABLE job_rows ADD COLUMN record_json TEXT;
      UPDATE job_rows SET runs_done = tatra_runs_done(runs_json)
        WHERE status = 'done' AND job_id IN (SELECT id FROM jobs WHERE json_extract(settings_json, '$.earlyStop') = 1);
      CREATE INDEX job_rows_queue ON job_rows(job_id, status, confidence, idx, prediction, correct, runs_done);
      CREATE TABLE review_log (
        id INTEGER PRIMARY KEY,
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        action TEXT NOT NULL,
        label TEXT,
        replaced TEXT,
        prev INTEGER,
        queue TEXT NOT NULL,
        client_id TEXT UNIQUE,
        at TEXT NOT NULL
      );
      CREATE INDEX review_log_row ON review_log(job_id, idx);
      CREATE TABLE review_decisions (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        log_id INTEGER NOT NULL,
        label TEXT,
        queue TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (job_id, idx)
      ) WITHOUT ROWID;
      CREATE TABLE job_metrics (
        job_id TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        counts_json TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  },
  // v13: a comparison's spec says the words jobs and sweeps say (common/contract/comparisons.ts):
  // taskId, dataPath, inputColumn and goldColumn for task, dataset, textColumn and labelColumn.
  // Only the names change; a column left to be guessed (comparisons from before v6) stays unnamed.
  (db) => {
    renameComparisonSpecFields(db);
  },
  // v14: an experiment's budget keeps the price every model counts with when one was given (the
  // same for every kind: each job's share is priced when it starts, as a job alone is), where it
  // kept a generator's and an evaluator's price, which one pair of models has but not a grid of
  // them. A budget that held one price for both keeps it; one whose two differed held the remote
  // entries' own prices, which each job's share reads again.
  (db) => {
    keepOnePrice(db);
  },
  // v15: each job's rows counted by status in job_row_counts, kept by triggers on job_rows
  // (row-counts.ts), so a job's counts are read as one row instead of from its rows' index
  // entries (building them reads every row once).
  ROW_COUNTS_SCHEMA,
  // v16: job_metrics keeps the job's latest bootstrap intervals (jobs/metric-intervals.ts) beside
  // its counts, under the digest of what they were computed from, so a read in another process (a
  // `tatra jobs show`, the app after a restart) looks them up instead of resampling for seconds.
  `
    ALTER TABLE job_metrics ADD COLUMN intervals_digest TEXT;
    ALTER TABLE job_metrics ADD COLUMN intervals_json TEXT;
  `,
  // v17: the rows table's orders by confidence (rows without one last, ties by index) read a page
  // from an index each (JobStore.rows), where they sorted every row of the job for each page.
  `
    CREATE INDEX job_rows_confidence_asc ON job_rows(job_id, (confidence IS NULL), confidence, idx);
    CREATE INDEX job_rows_confidence_desc ON job_rows(job_id, (confidence IS NULL), confidence DESC, idx);
  `,
];

/** The v13 names of a comparison spec's fields, old → new. */
const COMPARISON_SPEC_RENAMES = new Map([
  ['task', 'taskId'],
  ['dataset', 'dataPath'],
  ['textColumn', 'inputColumn'],
  ['labelColumn', 'goldColumn'],
]);

function renameComparisonSpecFields(db: Database.Database): void {
  const rows = db.prepare(`SELECT id, spec_json FROM experiments WHERE kind = 'compare'`).all() as { id: string; spec_json: string }[];
  const update = db.prepare(`UPDATE experiments SET spec_json = ? WHERE id = ?`);
  for (const row of rows) {
    const stored = parsedSpec(row.spec_json);
    if (!stored) continue;
    stored.spec = Object.fromEntries(Object.entries(stored.spec).map(([key, value]) => [COMPARISON_SPEC_RENAMES.get(key) ?? key, value]));
    update.run(JSON.stringify(stored), row.id);
  }
}

function keepOnePrice(db: Database.Database): void {
  const rows = db.prepare(`SELECT id, budget_json FROM experiments WHERE budget_json IS NOT NULL`).all() as { id: string; budget_json: string }[];
  const update = db.prepare(`UPDATE experiments SET budget_json = ? WHERE id = ?`);
  for (const row of rows) {
    const budget = parsedObject(row.budget_json);
    if (!budget) continue;
    const { prices, ...rest } = budget as { prices?: { generator?: unknown; evaluator?: unknown } };
    const one = prices?.generator ?? null;
    const same = one !== null && JSON.stringify(one) === JSON.stringify(prices?.evaluator ?? null);
    update.run(JSON.stringify({ ...rest, ...(same ? { price: one } : {}) }), row.id);
  }
}

/** JSON text as an object, or null for text that does not hold one (left as it is, as it read before). */
function parsedObject(json: string): Record<string, unknown> | null {
  try {
    return asObject(JSON.parse(json));
  } catch (e) {
    if (e instanceof SyntaxError) return null;
    throw e;
  }
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** A stored comparison: its spec's fields are renamed; null for a row that holds none. */
function parsedSpec(json: string): { spec: Record<string, unknown> } | null {
  const value = parsedObject(json);
  const spec = asObject(value?.spec);
  return value && spec ? { ...value, spec } : null;
}

/** Brings the open file `path` up to SCHEMA_VERSION, each version in its own transaction; a file from a newer version is refused. */
export function migrate(db: Database.Database, path: string): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new UserError(`${path} was written by a newer TATRA Studio (schema ${current}, this one knows ${SCHEMA_VERSION})`, 'db_newer');
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    db.transaction(() => {
      const step = MIGRATIONS[v]!;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
