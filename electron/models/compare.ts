// Generator × evaluator pairing comparisons (the paper's cross-model study). Each pair is one
// evaluation job of the JobManager. Pairs run generator-major: the first job of a generator fills
// the jobs' generation cache (keyed by generator, task, settings, seed and input), and every later
// evaluator of that generator reads the same cached texts, so it sees byte-identical examples and
// paraphrases and the generator's work is done once. While a generator's pairs run we hold a lease
// on it, so it stays loaded between its jobs; nothing else is held, so a model no job uses unloads.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import {
  ComparisonRecord as ComparisonRecordSchema,
  ComparisonSpec as ComparisonSpecSchema,
  type ComparisonPair,
  type ComparisonRecord,
  type ComparisonSpecInput,
  type ComparisonSummary,
  modelLabel,
} from '../common/contract/models';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import { plainZodError } from '../common/plain-errors';
import { openJobStore, previewDataset, type BackendLease, type BackendProvider, type JobInfo, type JobManager, type JobStore } from '../jobs';
import { inspectModelFile } from './gguf';
import { isRemoteSpec, parseRemoteSpec } from '../common/remote';
import { estimateFit } from './hardware';

export interface RunComparisonOptions {
  /** The JOBS engineer's JobManager: runs and stores every pair's job. */
  jobs: JobManager;
  /**
   * The model pool the JobManager loads from. Given, the comparison holds each generator while its
   * pairs run, so it is loaded once for all of them.
   */
  pool?: BackendProvider;
  /** Where the comparison is recorded (same SQLite file as the jobs). */
  store?: ComparisonStore;
  signal?: AbortSignal;
  /** Called with the whole record whenever something changes (throttled while rows finish). */
  onProgress?: (record: ComparisonRecord) => void;
  /** Rows classified at once per job (JobManager default otherwise). */
  concurrency?: number;
  /** Use this id instead of a fresh one (the API answers with the id before the work starts). */
  id?: string;
}

/**
 * Generator-major order of all (generator, evaluator) pairs. Within a generator its own file comes
 * first as evaluator (one loaded copy serves both), so the cache is filled by the cheapest job.
 */
export function orderPairs(generators: readonly string[], evaluators: readonly string[]): { generator: string; evaluator: string }[] {
  const out: { generator: string; evaluator: string }[] = [];
  for (const g of generators) {
    const evs = [...evaluators].sort((a, b) => Number(b === g) - Number(a === g));
    for (const e of evs) out.push({ generator: g, evaluator: e });
  }
  return out;
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths.map((p) => resolve(p)))];
}

/** Builds the record for a spec before anything runs: every pair pending. */
export function newComparisonRecord(specInput: ComparisonSpecInput, id: string = randomUUID()): ComparisonRecord {
  const parsed = ComparisonSpecSchema.safeParse(specInput);
  if (!parsed.success) throw new UserError(`invalid comparison: ${plainZodError(parsed.error, specInput)}`, 'bad_option');
  const spec = { ...parsed.data, generators: unique(parsed.data.generators), evaluators: unique(parsed.data.evaluators), dataset: resolve(parsed.data.dataset) };
  const pairs: ComparisonPair[] = orderPairs(spec.generators, spec.evaluators).map((p) => ({
    ...p,
    jobId: null,
    status: 'pending',
    rows: 0,
    rowsDone: 0,
    accuracy: null,
    macroF1: null,
    ms: 0,
    tokens: 0,
    error: null,
  }));
  return { id, createdAt: Date.now(), finishedAt: null, status: 'running', spec, pairs, error: null, warnings: [] };
}

/** Prompt + completion tokens a job used: its run examples plus every row's stages. */
export function jobTokens(jobs: JobManager, jobId: string): number {
  let tokens = 0;
  for (const ex of jobs.runExamples(jobId)) tokens += ex.stats.promptTokens + ex.stats.completionTokens;
  const pageSize = 500;
  for (let offset = 0; ; offset += pageSize) {
    const page = jobs.rows(jobId, { offset, limit: pageSize });
    for (const row of page.rows) {
      if (!row.stages) continue;
      for (const s of Object.values(row.stages)) tokens += s.promptTokens + s.completionTokens;
    }
    if (offset + pageSize >= page.total) break;
  }
  return tokens;
}

/**
 * Runs every pair as an evaluation job and returns the finished record. Bad model files, a
 * missing data set or bad settings fail before any job starts (UserError). A pair that fails is
 * recorded with its error and the others go on; the record's status is then `error`. Aborting
 * cancels the running job and marks the remaining pairs cancelled.
 */
export async function runComparison(specInput: ComparisonSpecInput, options: RunComparisonOptions): Promise<ComparisonRecord> {
  const record = newComparisonRecord(specInput, options.id);
  return executeComparison(record, options);
}

/** A model as a comparison job's name shows it: the file name, or the remote model's label. */
function jobModelName(path: string): string {
  return isRemoteSpec(path) ? modelLabel(path) : (path.split(/[\\/]/).pop() ?? path);
}

/**
 * Fails fast, before any job exists, on anything the user can fix: a model file that is not a
 * complete GGUF, a data set that cannot be read, a column that is not there. Returns the columns.
 */
export async function checkComparisonInputs(spec: ComparisonRecord['spec']): Promise<{ textColumn: string; labelColumn: string | null }> {
  // Remote models are probed when their jobs are created; a malformed spec fails here.
  for (const path of unique([...spec.generators, ...spec.evaluators])) {
    if (isRemoteSpec(path)) parseRemoteSpec(path);
    else await inspectModelFile(path);
  }
  const preview = await previewDataset(spec.dataset, { maxRows: 5 });
  const textColumn = spec.textColumn ?? preview.suggestedTextColumn;
  if (!textColumn) throw new UserError(`which column of ${spec.dataset} holds the text? pass a text column (columns: ${preview.columns.join(', ')})`, 'bad_option');
  if (!preview.columns.includes(textColumn)) throw new UserError(`${spec.dataset} has no column "${textColumn}" (columns: ${preview.columns.join(', ')})`, 'bad_option');
  const labelColumn = spec.labelColumn ?? preview.suggestedLabelColumn ?? null;
  if (labelColumn !== null && !preview.columns.includes(labelColumn)) throw new UserError(`${spec.dataset} has no column "${labelColumn}" (columns: ${preview.columns.join(', ')})`, 'bad_option');
  return { textColumn, labelColumn };
}

/** Runs a record made by `newComparisonRecord` (the API saves it first, then runs it in the background). */
export async function executeComparison(record: ComparisonRecord, options: RunComparisonOptions): Promise<ComparisonRecord> {
  const { jobs, store, signal } = options;
  const spec = record.spec;
  const { textColumn, labelColumn } = await checkComparisonInputs(spec);
  // Warn before loading a model that will not fit (the jobs still try: estimates are conservative).
  for (const path of unique([...spec.generators, ...spec.evaluators]).filter((p) => !isRemoteSpec(p))) {
    try {
      const fit = await estimateFit(path, { contextSize: spec.contextSize ?? 4096, sequences: options.concurrency ?? 4 });
      if (!fit.fits && fit.warning) record.warnings.push(fit.warning);
    } catch {
      // An estimate is advice; the job reports real load failures.
    }
  }

  let lastEmit = 0;
  const publish = (force = false) => {
    const now = Date.now();
    if (!force && now - lastEmit < 250) return;
    lastEmit = now;
    store?.save(record);
    options.onProgress?.(structuredClone(record));
  };
  publish(true);

  const hold: { current: { path: string; lease: BackendLease } | null } = { current: null };
  const releaseHeld = async () => {
    const h = hold.current;
    hold.current = null;
    if (h) await h.lease.release().catch(() => undefined);
  };
  try {
    for (const pair of record.pairs) {
      if (signal?.aborted) break;
      if (options.pool && hold.current?.path !== pair.generator) {
        await releaseHeld();
        try {
          hold.current = { path: pair.generator, lease: await options.pool.acquire(pair.generator, options.concurrency !== undefined ? { sequences: options.concurrency } : {}) };
        } catch (e) {
          if (isAbortError(e)) throw e;
          // The job itself will report the load failure for this pair.
        }
      }
      pair.status = 'running';
      publish(true);
      let jobId: string | null = null;
      const off = jobs.on('progress', (ev) => {
        if (ev.progress.jobId !== jobId) return;
        pair.rowsDone = ev.progress.done;
        pair.rows = ev.progress.total;
        pair.accuracy = ev.progress.runningAccuracy;
        publish();
      });
      const onAbort = () => {
        if (jobId) void jobs.cancel(jobId).catch(() => undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const job = await jobs.create({
          task: spec.task,
          settings: spec.settings,
          generatorPath: pair.generator,
          evaluatorPath: pair.evaluator,
          dataset: { path: spec.dataset, mapping: { textColumn, labelColumn, ...(spec.labelMap ? { labelMap: spec.labelMap } : {}) } },
          ...(spec.limit !== undefined ? { limit: spec.limit } : {}),
          ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
          name: `compare ${record.id.slice(0, 8)}: ${jobModelName(pair.generator)} → ${jobModelName(pair.evaluator)}`,
          ...(signal ? { signal } : {}),
        });
        jobId = job.id;
        pair.jobId = job.id;
        pair.rows = job.rowsTotal;
        publish(true);
        if (signal?.aborted) {
          await jobs.cancel(job.id).catch(() => undefined);
        } else {
          await jobs.start(job.id);
        }
        const finished: JobInfo = await jobs.wait(job.id);
        const metrics = jobs.metrics(job.id);
        pair.rows = finished.rowsTotal;
        pair.rowsDone = finished.rowsDone;
        pair.ms = finished.elapsedMs;
        pair.accuracy = metrics.accuracy;
        pair.macroF1 = metrics.macroF1;
        pair.tokens = jobTokens(jobs, job.id);
        if (finished.status === 'done') pair.status = 'done';
        else if (finished.status === 'failed') {
          pair.status = 'error';
          pair.error = finished.error ?? 'the job failed';
        } else pair.status = 'cancelled';
      } catch (e) {
        if (isAbortError(e) || signal?.aborted) pair.status = 'cancelled';
        else {
          pair.status = 'error';
          pair.error = errorMessage(e);
        }
      } finally {
        off();
        signal?.removeEventListener('abort', onAbort);
      }
      publish(true);
    }
  } finally {
    await releaseHeld();
  }
  for (const p of record.pairs) if (p.status === 'pending') p.status = 'cancelled';
  const failed = record.pairs.filter((p) => p.status === 'error');
  if (signal?.aborted || record.pairs.some((p) => p.status === 'cancelled')) record.status = 'cancelled';
  else if (failed.length > 0) {
    record.status = 'error';
    record.error = `${failed.length} of ${record.pairs.length} pairs failed: ${failed[0]!.error}`;
  } else record.status = 'done';
  record.finishedAt = Date.now();
  publish(true);
  return structuredClone(record);
}

/**
 * Comparisons recorded in the jobs' SQLite file (`<dataDir>/tatra.db`), in the job store's
 * `model_comparisons` table (created by its migrations like every other table); this class
 * validates what it reads back and summarises it.
 */
export class ComparisonStore {
  /** `owned`: close the job store with this one (it was opened for it). */
  constructor(
    private readonly store: JobStore,
    private readonly owned = false,
  ) {}

  /** A store of its own on `<dataDir>/tatra.db` (WAL lets it share the file with the jobs'). */
  static open(dataDir: string): ComparisonStore {
    return new ComparisonStore(openJobStore(dataDir), true);
  }

  save(record: ComparisonRecord): void {
    this.store.saveComparison(record.id, record.createdAt, record.status, JSON.stringify(record));
  }

  get(id: string): ComparisonRecord | undefined {
    const json = this.store.comparisonJson(id);
    return json === null ? undefined : ComparisonRecordSchema.parse(JSON.parse(json));
  }

  list(): ComparisonSummary[] {
    return this.store.comparisonJsons().map((json) => {
      const rec = ComparisonRecordSchema.parse(JSON.parse(json));
      return {
        id: rec.id,
        createdAt: rec.createdAt,
        finishedAt: rec.finishedAt,
        status: rec.status,
        error: rec.error,
        task: rec.spec.task,
        dataset: rec.spec.dataset,
        generators: rec.spec.generators,
        evaluators: rec.spec.evaluators,
      };
    });
  }

  /**
   * Marks comparisons left `running` by a process that died as cancelled (their jobs stay
   * resumable in the job history).
   */
  markInterrupted(runningHere: ReadonlySet<string> = new Set()): void {
    for (const s of this.list()) {
      if (s.status !== 'running' || runningHere.has(s.id)) continue;
      const rec = this.get(s.id);
      if (!rec) continue;
      rec.status = 'cancelled';
      rec.error = 'interrupted (the app stopped while it ran)';
      for (const p of rec.pairs) if (p.status === 'pending' || p.status === 'running') p.status = 'cancelled';
      this.save(rec);
    }
  }

  close(): void {
    if (this.owned) this.store.close();
  }
}
