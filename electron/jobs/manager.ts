// JobManager: creates evaluation jobs (importing the data set into the store), runs them with a
// few rows in flight at once so the evaluator decodes them on parallel sequences, and pauses,
// cancels and resumes them. Everything a job needs to continue lives in the store (rows, run
// examples, finished results, generator cache), so a resumed job — also after SIGKILL — ends
// with exactly the rows an uninterrupted one would have — as far as the backend is a pure
// function of (prompt, seed). llama.cpp on CPU is not batch-invariant: with several rows in
// flight, which requests decode together depends on timing, and sampled paraphrases can differ
// in text between any two runs, resumed or not. With concurrency 1 resumed rows were identical
// to an uninterrupted run's (test/model/jobs-resume.test.ts).
import { EventEmitter } from 'node:events';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import { parseModelSpec, type ModelSpec, type RemoteModelSpec } from '../common/model-spec';
import type { TaskDefinition } from '../common/task';
import { jobStatus, type JobSummary, type StoredJobStatus } from '../common/contract/jobs';
import type { TatraEvent, TatraResult } from '../common/tatra';
import { exampleCallsPerRun } from '../common/calls';
import { classify, generateRunExamples, zeroShot, type GenerationCache, type RunExamples } from '../engine';
import type { TatraBackend } from '../engine/backend';
import { resolveTask as engineResolveTask } from '../tasks';
import { checkOutPath, exportJob } from './export';
import { createJob } from './create-job';
import { rowRecord } from './row-record';
import { metricsFromCounts } from './metrics';
import { metricIntervals } from './metric-intervals';
import { jobSummary, summaryScores } from './summary';
import { SqliteGenerationCache, type JobStore } from './store';
import { claimRefused } from './claims';
import { OWNER, ownerLive } from './owner';
import { RunningWork, beatWhileRunning, refuseStopElsewhere, type Run } from './running-work';
import { PROGRESS_EVERY_MS, PROGRESS_TICK_MS, countCalls, inputSize, countRowCall, rowsProgress, sessionTally, settleRow, startProgress, startRow, startRows, type RowTally } from './row-progress';
import { acceptChange, changedModels, describeChange, inspectLocalModel } from './model-identity';
import { BudgetExhausted, UsageMeter, checkJobBudget, rowCalls, type JobBudget } from './usage';
import type { BackendLease, BackendProvider, ExportFormat, JobEvent, JobEventOf, JobEventType, JobInfo, JobMetrics, JobProgress, JobRow, JobSpec, ModelRef, RowPage, RowQuery, StoredRunExamples } from './types';

export interface JobManagerOptions {
  store: JobStore;
  /** Loads models: the llama layer's ModelPool in every face (api/services.ts), a scripted provider in tests. */
  backends: BackendProvider;
  /** Resolves a task id or task file path; default: electron/tasks' `resolveTask`. */
  resolveTask?: (idOrPath: string) => Promise<TaskDefinition>;
  /** Describes a model file for the job record; default: `inspectGguf` (validates the GGUF). */
  inspectModel?: (path: string) => Promise<ModelRef>;
  /** Generator-output cache; default: the store's SQLite table. */
  cache?: GenerationCache;
  /** Rows in flight at once when a spec does not say (default 4), the base of defaultRowsInFlight (common/settings.ts). */
  defaultConcurrency?: number;
}

/** Wraps the backends one job runs on (see `setBackendWrapper`). */
export type BackendWrapper = (role: 'generator' | 'evaluator', backend: TatraBackend) => TatraBackend;

interface Runner extends Run {
  /** What this session spends, on top of what the job had spent; holds the budget. */
  meter: UsageMeter;
  /** Only these rows this session (StartOptions.rows). */
  rows: ReadonlySet<number> | null;
}

/** How results are read: rows below `minConfidence` are abstained (selective prediction). */
export interface ViewOptions {
  minConfidence?: number;
}

export interface StartOptions {
  /** Continue even though a model file changed since the job started; the change is recorded in the job. */
  acceptModelChange?: boolean;
  /** A new budget for the job (e.g. a raised one on resume); null removes it; absent keeps the job's. */
  budget?: JobBudget | null;
  /** Only the unfinished rows among these indexes this session (a race's round); the job then ends paused while others are left. */
  rows?: ReadonlySet<number>;
}

interface RowModels {
  generator: TatraBackend;
  evaluator: TatraBackend;
  examplesForRun?: (run: number) => Promise<RunExamples>;
}

export class JobManager {
  private readonly store: JobStore;
  private readonly backends: BackendProvider;
  private readonly resolveTaskFn: (idOrPath: string) => Promise<TaskDefinition>;
  private readonly inspectModel: (model: ModelSpec) => Promise<ModelRef>;
  readonly cache: GenerationCache;
  private readonly defaultConcurrency: number;
  private readonly runners = new RunningWork<Runner>('pausing jobs');
  private readonly wrappers = new Map<string, BackendWrapper>();
  private readonly emitter = new EventEmitter();

  constructor(opts: JobManagerOptions) {
    this.store = opts.store;
    this.backends = opts.backends;
    this.resolveTaskFn = opts.resolveTask ?? ((id) => engineResolveTask(id));
    const inspectLocal = opts.inspectModel ?? inspectLocalModel;
    this.inspectModel = (model) => (model.kind === 'gguf' ? inspectLocal(model.path) : this.inspectRemote(model));
    this.cache = opts.cache ?? new SqliteGenerationCache(opts.store);
    this.defaultConcurrency = opts.defaultConcurrency ?? 4;
  }

  // ---------------------------------------------------------------- events

  /** Subscribes to one kind of event; returns the unsubscribe function. */
  on<T extends JobEventType>(type: T, listener: (event: JobEventOf<T>) => void): () => void {
    this.emitter.on(type, listener);
    return () => this.off(type, listener);
  }

  off<T extends JobEventType>(type: T, listener: (event: JobEventOf<T>) => void): void {
    this.emitter.off(type, listener);
  }

  /** Every event, in order (the API host forwards these). */
  onAny(listener: (event: JobEvent) => void): () => void {
    const types: JobEventType[] = ['progress', 'row', 'status'];
    for (const t of types) this.emitter.on(t, listener);
    return () => {
      for (const t of types) this.emitter.off(t, listener);
    };
  }

  private emit(event: JobEvent): void {
    this.emitter.emit(event.type, event);
  }

  private emitStatus(id: string): void {
    const job = this.get(id);
    this.emit({ type: 'status', jobId: id, status: jobStatus(job), error: job.error });
  }

  // ---------------------------------------------------------------- queries

  /** A job by id (or unique id prefix); UserError when there is none. */
  get(id: string): JobInfo {
    const full = this.store.findJobId(id);
    const job = full ? this.store.getJob(full) : null;
    if (!job) throw new UserError(`no job "${id}"`, 'job_unknown');
    return this.withLiveness(job);
  }

  /** Every job, newest first (the history). */
  list(): JobInfo[] {
    return this.store.listJobs().map((j) => this.withLiveness(j));
  }

  isRunningHere(id: string): boolean {
    return this.runners.has(id);
  }

  private withLiveness(job: JobInfo): JobInfo {
    if (job.status !== 'running' || this.runners.has(job.id)) return job;
    return { ...job, interrupted: !this.ownerAlive(job.id) };
  }

  /** Whether another live process runs the job (owner pid still alive, or a recent heartbeat). */
  private ownerAlive(id: string): boolean {
    const claim = this.store.claims.owner(id);
    return claim !== null && ownerLive(claim.owner, claim.updated);
  }

  rows(id: string, q: RowQuery = {}): RowPage {
    return this.store.rows(this.get(id).id, q);
  }

  row(id: string, index: number): JobRow | null {
    return this.store.row(this.get(id).id, index);
  }

  /** Each row right (true), wrong (false) or not scored (null or absent), by row index. */
  outcomes(id: string): Array<boolean | null> {
    return this.store.outcomes(this.get(id).id);
  }

  runExamples(id: string): StoredRunExamples[] {
    return this.store.runExamples(this.get(id).id);
  }

  /** `minConfidence`: rows below it count as abstained (metrics.answered); each score with its interval (method.md §16). */
  metrics(id: string, opts: ViewOptions = {}): JobMetrics {
    const job = this.get(id);
    const metrics = metricsFromCounts(job.task, job.rowsTotal, this.store.metricCounts.counts(job.id, () => this.store.iterateRows(job.id)), opts.minConfidence);
    return { ...metrics, intervals: metricIntervals(metrics, job.id, { provisional: job.status === 'running' }, this.store.metricCounts) };
  }

  /** The job as every face shows it (summary.ts), its macro-F1 and interval read off its metrics (kept once it ended: recordEnd). */
  summary(idOrJob: string | JobInfo): JobSummary {
    const job = typeof idOrJob === 'string' ? this.get(idOrJob) : idOrJob;
    return jobSummary(job, summaryScores(this.metrics(job.id)));
  }

  /** Writes the export (CSV: one row per input; JSON: everything) and returns its path; `minConfidence` marks rows below it abstained. */
  async export(id: string, format: ExportFormat, outPath: string, signal?: AbortSignal, opts: ViewOptions = {}): Promise<string> {
    if (format !== 'csv' && format !== 'json') throw new UserError(`unknown export format "${String(format)}" (csv or json)`, 'bad_option');
    const job = this.get(id);
    await checkOutPath(outPath);
    await exportJob(this.store, job, this.metrics(job.id, opts), format, outPath, signal, opts.minConfidence);
    return outPath;
  }

  /** Removes a job and everything stored for it (not the generator cache). */
  async delete(id: string): Promise<void> {
    const job = this.get(id);
    if (this.runners.has(job.id)) await this.cancel(job.id);
    this.store.deleteJob(job.id);
  }

  /** A remote model's record: probed now (kind, version, constrained output), no key. */
  private async inspectRemote(spec: RemoteModelSpec): Promise<ModelRef> {
    if (!this.backends.describeRemote) throw new UserError(`remote models cannot be used here (${spec.text})`, 'remote_unsupported');
    const remote = await this.backends.describeRemote(spec);
    return { path: spec.text, sizeBytes: 0, headerHash: '', remote };
  }

  // ---------------------------------------------------------------- create

  /**
   * Validates the spec, records the models and imports the data set into the store (streamed, in
   * batched transactions; the job no longer needs the file afterwards). Status `queued`.
   */
  async create(spec: JobSpec): Promise<JobInfo> {
    const id = await createJob({ store: this.store, resolveTask: this.resolveTaskFn, inspectModel: this.inspectModel, defaultConcurrency: this.defaultConcurrency }, spec);
    const job = this.get(id);
    this.emitStatus(id);
    return job;
  }

  // ---------------------------------------------------------------- control

  /**
   * Starts (or resumes) a job in this process and returns once it is running; the rows are worked
   * through in the background (`wait(id)` resolves when that ends). Continues from the first
   * unfinished row with the stored examples and the same seeds.
   */
  async start(id: string, opts: StartOptions = {}): Promise<JobInfo> {
    const job = this.get(id);
    if (this.runners.has(job.id)) return job;
    const work = { noun: 'job', kind: 'job', id: job.id, ref: id };
    if (job.status === 'done') throw claimRefused('done', work);
    if (!this.store.isImported(job.id)) throw claimRefused('unimported', work);
    // Rows from two different models under one job would be a silent lie: compare first.
    const changed = await changedModels(job, this.inspectModel);
    if (this.runners.has(job.id)) return this.get(job.id);
    if (changed.length > 0 && !opts.acceptModelChange) {
      const c = changed[0]!;
      throw new UserError(
        `job ${job.id}: the ${c.role} model ${c.now.path} is not the one the job started with (${describeChange(c.before, c.now)}); resume with --accept-model-change to continue with it anyway, or start a new job`,
        'model_changed',
      );
    }
    // Two processes resuming at once: the claim is one transaction, so only one of them wins.
    const claim = this.store.claims.claim(job.id, OWNER, ownerLive);
    if (!claim.claimed) throw claimRefused(claim.reason, work);
    for (const c of changed) this.store.setModel(job.id, c.role, acceptChange(c.before, c.now));
    if (opts.budget !== undefined) this.store.setBudget(job.id, opts.budget ? checkJobBudget(opts.budget) : null);
    const claimed = this.store.getJob(job.id)!;
    const ac = new AbortController();
    // Usage is stored as each batch answers, so what a kill loses is only what it lost the answers of.
    const meter: UsageMeter = new UsageMeter(claimed.usage, claimed.budget, () => this.store.setUsage(job.id, meter.usage));
    this.runners.launch(job.id, { ac, stop: null, done: Promise.resolve(), meter, rows: opts.rows ?? null }, (runner) => this.run(job.id, runner));
    this.emitStatus(job.id);
    return this.get(job.id);
  }

  /**
   * Has this process run job `id` on wrapped backends (a sweep shares evaluations between its
   * jobs); null removes the wrapper. Not stored: whoever resumes the job sets it again.
   */
  setBackendWrapper(id: string, wrap: BackendWrapper | null): void {
    if (wrap) this.wrappers.set(id, wrap);
    else this.wrappers.delete(id);
  }

  /** Same as start: resuming is starting from the first unfinished row. */
  resume(id: string, opts: StartOptions = {}): Promise<JobInfo> {
    return this.start(id, opts);
  }

  /** Resolves when the job's runner in this process ends (at once when none runs). */
  async wait(id: string): Promise<JobInfo> {
    const job = this.get(id);
    await this.runners.get(job.id)?.done;
    return this.get(job.id);
  }

  /** Stops the job, aborting rows in flight; finished rows stay. Resumable. */
  pause(id: string): Promise<JobInfo> {
    return this.stop(id, 'paused');
  }

  /** Stops the job for good (it can still be resumed explicitly); finished rows stay. */
  cancel(id: string): Promise<JobInfo> {
    return this.stop(id, 'cancelled');
  }

  private async stop(id: string, to: 'paused' | 'cancelled'): Promise<JobInfo> {
    const job = this.get(id);
    const owner = this.store.claims.owner(job.id)?.owner ?? null;
    if (!(await this.runners.stop(job.id, to))) {
      refuseStopElsewhere(`job ${job.id}`, job.status === 'done' ? 'done' : job.status === 'running' && !job.interrupted ? 'running elsewhere' : 'stopped', 'job_state');
      this.store.claims.stopAbandoned(job.id, owner, to);
      this.emitStatus(job.id);
    }
    return this.get(job.id);
  }

  /** Pauses every job running in this process (so they stay resumable) and waits for them; failures are thrown together. */
  async dispose(): Promise<void> {
    await this.runners.dispose((id) => this.pause(id));
  }

  // ---------------------------------------------------------------- the runner

  private async run(id: string, runner: Runner): Promise<void> {
    const signal = runner.ac.signal;
    const job = this.store.getJob(id)!;
    const stopHeartbeat = this.startHeartbeat(id, runner.meter);
    const leases: BackendLease[] = [];
    const outcome: { failure: unknown } = { failure: null };
    try {
      this.emitStartProgress(job, 'loading');
      const models = await this.acquireModels(job, signal, leases, runner.meter);
      this.store.recordDeterministic(id, models.generator.deterministic === true && models.evaluator.deterministic === true);
      // From here on, progress says whether the job is reproducible with this session counted.
      const session = this.store.getJob(id) ?? job;
      const tally = this.sessionTally(session);
      const examplesForRun = await this.runScopeExamples(session, models.generator, signal, tally);
      await this.classifyRows(session, runner, { ...models, ...(examplesForRun ? { examplesForRun } : {}) }, outcome, tally);
    } catch (e) {
      // The run examples' batch would have exceeded the budget: paused, like a row refused.
      if (!(isAbortError(e) && signal.aborted) && !(e instanceof BudgetExhausted) && outcome.failure === null) outcome.failure = e;
    } finally {
      stopHeartbeat();
      // A release that fails is the job's failure when nothing else failed (never silent).
      for (const l of leases.reverse()) {
        await l.release().catch((e: unknown) => {
          outcome.failure ??= e;
        });
      }
      this.store.setUsage(id, runner.meter.usage);
      this.recordEnd(id, runner, outcome.failure);
    }
  }

  /** Adds the time spent to the job every few seconds (so a crash loses little); returns the stop, which adds the rest. */
  private startHeartbeat(id: string, meter: UsageMeter): () => void {
    let lastBeat = Date.now();
    const beat = () => {
      const now = Date.now();
      this.store.claims.beat(id, OWNER);
      this.store.addElapsed(id, now - lastBeat);
      // What the session spent, kept as it goes: a crash loses at most a beat's worth of counts.
      this.store.setUsage(id, meter.usage);
      lastBeat = now;
    };
    const stop = beatWhileRunning(beat);
    return () => {
      stop();
      beat();
    };
  }

  /** Progress before any row of this session is done (loading models, making examples): the counts as stored. */
  private emitStartProgress(job: JobInfo, phase: JobProgress['phase']): void {
    this.emit({ type: 'progress', progress: startProgress(job, phase, this.store.runExamples(job.id).length) });
  }

  /** The job's generator and evaluator, leased into `leases` (released by the caller), wrapped when a wrapper is registered. */
  private async acquireModels(job: JobInfo, signal: AbortSignal, leases: BackendLease[], meter: UsageMeter): Promise<{ generator: TatraBackend; evaluator: TatraBackend }> {
    // A remote model is reached at the endpoints the job recorded, whatever its library entry says
    // now; a model loaded for the job gets one sequence per row in flight, from every face alike.
    const sequences = job.concurrency;
    const genLease = await this.backends.acquire(parseModelSpec(job.generator.path), { signal, sequences, ...(job.generator.remote ? { remote: job.generator.remote } : {}) });
    leases.push(genLease);
    const evLease = await this.backends.acquire(parseModelSpec(job.evaluator.path), { signal, sequences, ...(job.evaluator.remote ? { remote: job.evaluator.remote } : {}) });
    leases.push(evLease);
    const wrap = this.wrappers.get(job.id);
    // Metered right on the models, so what a wrapper answers itself (a sweep's store) costs nothing.
    const generator = meter.wrap('generator', genLease.backend);
    const evaluator = meter.wrap('evaluator', evLease.backend);
    return {
      generator: wrap ? wrap('generator', generator) : generator,
      evaluator: wrap ? wrap('evaluator', evaluator) : evaluator,
    };
  }

  /**
   * Scope `run`: every run's examples, made once per job and stored (the missing runs made now,
   * all at once so their label calls decode on parallel sequences), read back for each row.
   * Scope `input`: undefined (each row makes its own).
   */
  private async runScopeExamples(job: JobInfo, generator: TatraBackend, signal: AbortSignal, tally: RowTally): Promise<((run: number) => Promise<RunExamples>) | undefined> {
    const { task, settings } = job;
    if (settings.scope !== 'run') return undefined;
    const stored = new Map(this.store.runExamples(job.id).map((e) => [e.run, e]));
    const missing = Array.from({ length: settings.r }, (_, j) => j).filter((j) => !stored.has(j));
    if (missing.length > 0) this.emit({ type: 'progress', progress: rowsProgress(job.id, tally, 'examples') });
    const perRun = exampleCallsPerRun(task, settings.k);
    const made = await Promise.all(
      missing.map((run) =>
        generateRunExamples({ task, settings, run, generator, cache: this.cache, signal }).then((m) => {
          countCalls(tally.calls, perRun);
          this.emit({ type: 'progress', progress: rowsProgress(job.id, tally, 'examples') });
          return m;
        }),
      ),
    );
    for (const m of made) {
      const rec: StoredRunExamples = { run: m.run, seed: m.seed, examples: m.examples, filtered: m.filtered, stats: m.stats };
      this.store.saveRunExamples(job.id, rec);
      stored.set(m.run, rec);
    }
    return (run: number) => {
      const e = stored.get(run);
      if (!e) return Promise.reject(new Error(`no stored examples for run ${run}`));
      return Promise.resolve({ run: e.run, seed: e.seed, examples: e.examples, filtered: e.filtered, cached: true, stats: e.stats });
    };
  }

  /** The counts a session starts from (rows finished before it included) and its progress in calls. */
  private sessionTally(job: JobInfo): RowTally {
    return sessionTally(this.get(job.id), this.store.runExamples(job.id).length, this.store.inputSizes(job.id));
  }

  /**
   * Classifies the unfinished rows with `job.concurrency` rows in flight, saving each as it ends.
   * The first real failure is put in `outcome` and stops the other rows too.
   */
  private async classifyRows(job: JobInfo, runner: Runner, models: RowModels, outcome: { failure: unknown }, tally: RowTally): Promise<void> {
    const id = job.id;
    const signal = runner.ac.signal;
    const queue = this.store.unfinishedRowIndexes(id).filter((i) => runner.rows === null || runner.rows.has(i));
    startRows(tally);
    this.emitRowsProgress(id, tally);
    // The time left moves on between calls (a paraphrase call decodes for seconds): said every tick.
    const tick = setInterval(() => {
      if (tally.calls.inFlight.size > 0 && Date.now() - tally.calls.lastEmit >= PROGRESS_TICK_MS) this.emitRowsProgress(id, tally);
    }, PROGRESS_TICK_MS / 4);
    tick.unref();
    let next = 0;
    const maxCalls = rowCalls(job.task, job.settings, job.baseline);
    const worker = async () => {
      while (!signal.aborted && next < queue.length) {
        // A row starts only if it can finish within the budget; rows in flight go on.
        if (!runner.meter.canStartRow(maxCalls)) return;
        const index = queue[next++]!;
        const row = await this.classifyRow(job, index, models, signal, tally, runner.meter, maxCalls);
        if (!row) return;
        this.emit({ type: 'row', jobId: id, row });
        this.emitRowsProgress(id, tally);
      }
    };
    const workers = Array.from({ length: Math.min(job.concurrency, Math.max(1, queue.length)) }, () =>
      worker().catch((e: unknown) => {
        if (outcome.failure === null) outcome.failure = e;
        runner.ac.abort();
      }),
    );
    try {
      await Promise.all(workers);
    } finally {
      clearInterval(tick);
    }
  }

  /** The session's progress now, sent (and when, so the next call's or tick's waits its turn). */
  private emitRowsProgress(id: string, tally: RowTally): void {
    tally.calls.lastEmit = Date.now();
    this.emit({ type: 'progress', progress: rowsProgress(id, tally) });
  }

  /**
   * One row through TATRA (and the zero-shot baseline when the job has it), saved with its
   * outcome and counted in `tally`. A user error (e.g. an input too long for the context) is this
   * row's alone: recorded as its failure (a resume retries it). Returns the row as saved (what
   * reading it back would give, without reading it back), or null when the job was stopped.
   */
  private async classifyRow(job: JobInfo, index: number, models: RowModels, signal: AbortSignal, tally: RowTally, meter: UsageMeter, maxCalls: number): Promise<JobRow | null> {
    const { task, settings } = job;
    const row = this.store.row(job.id, index)!;
    const t0 = Date.now();
    // Calls this row has made so far (its events), credited up to its plan when it ends.
    const credit = startRow(tally.calls, inputSize(row.input));
    const onEvent = (e: TatraEvent) => {
      // Examples are this row's calls only with scope `input` (with `run` the job made them once).
      const side = e.type === 'prediction' ? 'evaluator' : (e.type === 'examples' && settings.scope === 'input') || (e.type === 'paraphrases' && settings.n > 0) ? 'generator' : null;
      if (side === null || !countRowCall(tally.calls, credit, side)) return;
      if (Date.now() - tally.calls.lastEmit >= PROGRESS_EVERY_MS) this.emitRowsProgress(job.id, tally);
    };
    const settle = (stages?: TatraResult['stages']) => settleRow(tally.calls, credit, stages);
    try {
      const [result, base] = await meter.inRow(maxCalls, () => Promise.all([
        classify({
          task,
          input: row.input,
          settings,
          generator: models.generator,
          evaluator: models.evaluator,
          cache: this.cache,
          signal,
          onEvent,
          ...(models.examplesForRun ? { examplesForRun: models.examplesForRun } : {}),
        }),
        job.baseline ? zeroShot({ task, input: row.input, evaluator: models.evaluator, signal }) : Promise.resolve(null),
      ]));
      const rec = rowRecord(task, settings.scope, row.gold, result, base, Date.now() - t0);
      this.store.saveRowResult(job.id, index, rec);
      settle(result.stages);
      tally.done++;
      tally.session++;
      if (row.gold !== null) {
        tally.withGold++;
        if (rec.correct) tally.correct++;
      }
      return { ...row, ...rec, status: 'done', error: null };
    } catch (e) {
      if (isAbortError(e) && signal.aborted) return null;
      // The budget could not cover this row's next batch: the row is not saved (a resume does it).
      if (e instanceof BudgetExhausted) return null;
      if (!(e instanceof UserError)) throw e;
      this.store.saveRowFailure(job.id, index, e.message);
      settle();
      tally.failed++;
      return { ...row, status: 'failed', error: e.message };
    }
  }

  /** Records how the session ended: failed, stopped (paused/cancelled), done, or paused with rows left. */
  private recordEnd(id: string, runner: Runner, failure: unknown): void {
    let status: StoredJobStatus;
    let error: string | null = null;
    if (failure !== null) {
      status = 'failed';
      error = errorMessage(failure);
    } else if (runner.stop) status = runner.stop;
    else if (this.store.unfinishedRowIndexes(id).length === 0 || this.failedOnly(id)) status = 'done';
    else status = 'paused';
    const stoppedBy = status === 'paused' && runner.stop === null && runner.meter.stopped ? 'budget' : null;
    // Only the owner sets the outcome; a runner that lost its claim leaves the status alone. The
    // intervals are computed now and kept (metric-intervals.ts), so no read after the end pays them.
    this.store.claims.release(id, OWNER, status, error, stoppedBy);
    this.metrics(id);
    this.emitStatus(id);
  }

  /** True when every unfinished row is a failed one (nothing pending): the job is as done as it gets. */
  private failedOnly(id: string): boolean {
    return this.store.pendingRowCount(id) === 0;
  }
}
