// The one runner for long experiments: a grid of cells, one evaluation job each, run one after
// another in the job database and resumable after a pause, a crash or a SIGKILL. Sweeps
// (sweep.ts) and comparisons (compare.ts) are definitions on it: which cells, in which
// order, which job each cell runs, which models to keep loaded, what a failed job means.
//
//   create    records the experiment (experiment-store.ts); nothing runs yet.
//   start     claims it for this process (one owner at a time, across processes and machines
//             sharing the folder), then walks the cells: a cell's job is created when missing (or
//             left half-imported by a kill), skipped when done, and otherwise started or resumed.
//   pause     stops after pausing the running job (its finished rows stay); `cancel` alike.
//   resume    is start: finished jobs stay, the rest run.
//
// A kill loses only rows in flight: jobs keep their finished rows, the generation cache keeps
// every finished call, the owner's pid (or heartbeat, from another machine) shows it interrupted.
import { EventEmitter } from 'node:events';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import { parseModelPair } from '../common/model-spec';
import type { ExperimentProgress } from '../common/contract/experiment-progress';
import type { JobProgress } from '../common/contract/jobs';
import { cellsEta, type ExperimentEta } from './experiment-eta';
import { ExperimentStore, type ExperimentBudget, type StoredExperiment, type StoredExperimentStatus } from '../jobs/experiment-store';
import type { JobManager } from '../jobs/manager';
import { pricedBudget, type JobBudget } from '../jobs/usage';
import { type Budget, type CountRange, formatBudget } from '../common/plan';
import type { Planner } from '../jobs/planner';
import { claimRefused } from '../jobs/claims';
import { OWNER, ownerLive } from '../jobs/owner';
import { RunningWork, beatWhileRunning, refuseStopElsewhere, type Run } from '../jobs/running-work';
import type { JobStore } from '../jobs/store';
import type { BackendProvider, JobInfo } from '../jobs/types';
import type { RemoteLookup } from '../remote';
import type { CellLeft, CellPrice, CellState, ExperimentCells, ExperimentStatus } from './kind';
import { Races } from './race';
import { holdModels, type Holds } from './holds';
import type { RaceSummary } from '../common/contract/experiment-progress';

export interface ExperimentRunnerOptions<Spec, Cell> {
  jobs: JobManager;
  store: JobStore;
  /** Given, held models are leased from it so they stay loaded between jobs. */
  pool?: BackendProvider;
  /** Remote entries' own prices, which a job's share of a budget in money counts with. */
  lookup?: RemoteLookup;
  /** Prices the cells still to run, for the time left (experiment-eta.ts); absent, the running job's pace alone says it. */
  planner?: () => Planner;
  definition: ExperimentCells<Spec, Cell>;
}

/** One run of an experiment in this process: what its walk over the cells holds. */
interface Walk<Spec> {
  id: string;
  exp: StoredExperiment<Spec>;
  runner: Runner;
  holds: Holds;
  /** Models held for cells still to come (a race's later rounds), given back only when none wants them. */
  keep: string[];
  /** Cells whose job failed, in words, where the kind goes on after a failed job. */
  failedCells: string[];
}

interface Runner extends Run {
  /** Why it stopped, when a hook or its budget stopped it. */
  reason: string | null;
  /** Its budget stopped it (before a job, or a job's own budget share ran out). */
  stoppedBy: 'budget' | null;
  current: string | null;
}

export class ExperimentRunner<Spec, Cell> {
  readonly store: ExperimentStore<Spec>;
  private readonly jobs: JobManager;
  private readonly jobStore: JobStore;
  private readonly pool: BackendProvider | undefined;
  private readonly lookup: RemoteLookup | undefined;
  private readonly def: ExperimentCells<Spec, Cell>;
  private readonly runners = new RunningWork<Runner>('pausing experiments');
  /** The running job's latest progress and when this runner first saw it (ms), per experiment running here: its ETA. */
  private readonly jobProgress = new Map<string, { progress: JobProgress; since: number }>();
  /** The planner's price of each cell still to run (by cell key) and the last pace seen, per experiment running here: its ETA. */
  private readonly prices = new Map<string, Map<string, CellPrice>>();
  private readonly pace = new Map<string, CountRange>();
  private readonly planner: (() => Planner) | undefined;
  private readonly lastPublish = new Map<string, number>();
  private readonly races: Races;
  /**
   * Cells whose job could not even be created, by experiment, from its last start in this process
   * (key → error): kept after the run ends, so its record still says why those cells failed.
   */
  private readonly cellErrors = new Map<string, Map<string, string>>();
  private readonly emitter = new EventEmitter();

  constructor(opts: ExperimentRunnerOptions<Spec, Cell>) {
    this.jobs = opts.jobs;
    this.jobStore = opts.store;
    this.pool = opts.pool;
    this.lookup = opts.lookup;
    this.planner = opts.planner;
    this.def = opts.definition;
    this.store = new ExperimentStore<Spec>(opts.store, opts.definition.kind);
    this.races = new Races(opts.store);
  }

  /** Called with the experiment's id whenever its progress or status changes; returns the unsubscribe function. */
  onChange(listener: (id: string) => void): () => void {
    this.emitter.on('change', listener);
    return () => this.emitter.off('change', listener);
  }

  // ---------------------------------------------------------------- queries

  /** An experiment by id or unique id prefix; UserError `<kind>_unknown` when there is none. */
  find(idOrPrefix: string): StoredExperiment<Spec> {
    const id = this.store.findId(idOrPrefix);
    const exp = id ? this.store.get(id) : null;
    if (!exp) throw new UserError(`no ${this.def.noun} "${idOrPrefix}"`, `${this.def.kind}_unknown`);
    return exp;
  }

  list(): StoredExperiment<Spec>[] {
    return this.store.list();
  }

  status(exp: StoredExperiment<Spec>): ExperimentStatus {
    if (exp.status !== 'running' || this.runners.has(exp.id)) return exp.status;
    // Like a job's: a live pid here, a recent heartbeat from another machine sharing the folder.
    return exp.owner !== null && ownerLive(exp.owner, exp.updated) ? 'running' : 'interrupted';
  }

  /** Every cell in run order with its job as it stands (and why it has none, when its job could not be created). */
  cellStates(exp: StoredExperiment<Spec>): CellState<Cell>[] {
    const byCell = this.store.jobs(exp.id);
    const errors = this.cellErrors.get(exp.id);
    const states = this.def.cells(exp.spec).map((cell): CellState<Cell> => {
      const key = this.def.key(cell);
      const jobId = byCell.get(key);
      let job: JobInfo | null = null;
      try {
        job = jobId ? this.jobs.get(jobId) : null;
      } catch (e) {
        // A cell's job deleted from the history (`tatra jobs delete`) is a cell to run again; any
        // other error (the database unreadable) is the caller's.
        if (!(e instanceof UserError && e.code === 'job_unknown')) throw e;
      }
      return { cell, job, error: job ? null : (errors?.get(key) ?? null), dropped: null };
    });
    return this.def.raced(exp.spec) ? this.races.cells(exp.id, states, (cell) => this.def.entrant(cell)) : states;
  }

  /** Where a raced experiment's race stands (null when it is not raced, or before its first job). */
  race(exp: StoredExperiment<Spec>, states: readonly CellState<Cell>[]): RaceSummary | null {
    return this.def.raced(exp.spec) && states.some((s) => s.job) ? (this.races.get(exp.id)?.summary ?? null) : null;
  }

  /**
   * The one progress model: jobs and rows done (every job classifies every row, but for a raced
   * experiment's dropped cells, settled at the rows they ran), time, ETA. The ETA is said only for
   * an experiment running here: its running job's own plus the planner's price of each cell after
   * it (experiment-eta.ts), a range while either is one.
   */
  progress(states: readonly CellState<Cell>[], id?: string): ExperimentProgress {
    const perJob = states.find((s) => s.job)?.job?.rowsTotal ?? 0;
    const rowsDone = states.reduce((sum, s) => sum + (s.job?.rowsDone ?? 0), 0);
    // A cell dropped by its race is settled at the rows it ran: the rest were never to be run.
    const rowsTotal = states.reduce((sum, s) => sum + (s.dropped ? (s.job?.rowsDone ?? 0) : perJob), 0);
    const elapsedMs = states.reduce((sum, s) => sum + (s.job?.elapsedMs ?? 0), 0);
    let eta: Pick<ExperimentEta, 'etaSeconds' | 'etaRange'> = { etaSeconds: null, etaRange: null };
    if (id !== undefined && this.runners.has(id)) eta = this.timeLeft(id, states);
    else if (id !== undefined) for (const m of [this.jobProgress, this.prices, this.pace]) m.delete(id);
    const finished = rowsDone >= rowsTotal && rowsTotal > 0;
    return {
      jobsDone: states.filter((s) => s.job?.status === 'done' || s.dropped !== null).length,
      jobsTotal: states.length,
      rowsDone,
      rowsTotal,
      elapsedSeconds: elapsedMs / 1000,
      etaSeconds: finished ? 0 : eta.etaSeconds,
      etaRange: finished ? { min: 0, max: 0 } : eta.etaRange,
    };
  }

  /** The time left of an experiment running here (experiment-eta.ts): the running job's own, then each cell after it at its price. */
  private timeLeft(id: string, states: readonly CellState<Cell>[]): ExperimentEta {
    const current = this.runners.get(id)?.current ?? null;
    const seen = this.jobProgress.get(id);
    const eta = cellsEta({ states, current, live: seen?.progress.jobId === current ? seen : undefined, prices: this.prices.get(id), pace: this.pace.get(id) ?? null, key: (cell) => this.def.key(cell) });
    if (eta.pace) this.pace.set(id, eta.pace);
    return eta;
  }

  /**
   * Prices the cells still to run (the kind's `price`, the planner's) in the background: the time
   * left reads the prices once they come, and never waits for them.
   */
  private priceCells(id: string): void {
    const planner = this.planner?.();
    const exp = this.store.get(id);
    if (!planner || !exp) return;
    const left: CellLeft<Cell>[] = this.cellStates(exp)
      .filter((s) => s.job?.status !== 'done')
      .map((s) => ({ cell: s.cell, rowsDone: s.job?.rowsDone ?? 0, examplesMade: s.job ? this.jobStore.runExamples(s.job.id).map((e) => e.run) : [] }));
    this.def.price(exp, left, planner).then(
      (prices) => {
        if (!this.runners.has(id)) return;
        this.prices.set(id, new Map(left.map((l, i) => [this.def.key(l.cell), prices[i]!])));
        this.publish(id, true);
      },
      // A plan that cannot be made (a model whose prompts cannot be counted here, a remote one not
      // answering): the time left rests on the running job, as for a cell the planner could not price.
      () => undefined,
    );
  }

  /** Whether a cell still to run has no price yet: a job that ended since measured its models' speed. */
  private unpriced(id: string): boolean {
    const prices = this.prices.get(id);
    return !prices || [...prices.values()].some((p) => p.seconds === null);
  }

  isRunningHere(id: string): boolean {
    return this.runners.has(id);
  }

  // ---------------------------------------------------------------- create

  /** Records a new experiment (status queued); nothing runs until `start`. */
  create(name: string, spec: Spec): StoredExperiment<Spec> {
    return this.store.get(this.store.create(name, spec))!;
  }

  /**
   * Creates the first cell's job now, so a model file that is not a GGUF, a missing data file or a
   * column that is not there fail at once, not in the background; on failure the experiment is
   * removed and the error thrown.
   */
  async prepare(id: string): Promise<void> {
    const exp = this.find(id);
    const first = this.def.cells(exp.spec)[0];
    try {
      if (first !== undefined) await this.ensureJob(exp, first);
    } catch (e) {
      this.store.delete(exp.id);
      throw e;
    }
  }

  // ---------------------------------------------------------------- control

  /**
   * Starts (or resumes) the experiment in this process; its jobs run in the background (`wait`).
   * `budget`: a new budget for all its jobs together (a resume may raise it; null removes it).
   */
  start(idOrPrefix: string, opts: { budget?: ExperimentBudget | null } = {}): StoredExperiment<Spec> {
    const exp = this.find(idOrPrefix);
    if (this.runners.has(exp.id)) return exp;
    if (opts.budget !== undefined) this.store.setBudget(exp.id, opts.budget);
    // Two processes resuming at once: the claim is one transaction, so only one of them wins.
    const claim = this.store.claims.claim(exp.id, OWNER, ownerLive);
    if (!claim.claimed) throw claimRefused(claim.reason, { noun: this.def.noun, kind: this.def.kind, id: exp.id, ref: idOrPrefix });
    const ac = new AbortController();
    this.cellErrors.set(exp.id, new Map());
    this.runners.launch(exp.id, { ac, stop: null, reason: null, stoppedBy: null, current: null, done: Promise.resolve() }, (runner) => this.run(exp.id, runner));
    this.publish(exp.id, true);
    return this.store.get(exp.id)!;
  }

  /** Resolves when the experiment's runner in this process ends (at once when none runs). */
  async wait(idOrPrefix: string): Promise<StoredExperiment<Spec>> {
    const exp = this.find(idOrPrefix);
    await this.runners.get(exp.id)?.done;
    return this.store.get(exp.id)!;
  }

  /** Stops after pausing the running job (its finished rows stay); resumable. */
  pause(idOrPrefix: string): Promise<StoredExperiment<Spec>> {
    return this.stop(idOrPrefix, 'paused');
  }

  /** Stops after cancelling the running job (its finished rows stay); still resumable explicitly. */
  cancel(idOrPrefix: string): Promise<StoredExperiment<Spec>> {
    return this.stop(idOrPrefix, 'cancelled');
  }

  private async stop(idOrPrefix: string, to: 'paused' | 'cancelled'): Promise<StoredExperiment<Spec>> {
    const exp = this.find(idOrPrefix);
    // The job may have ended by itself meanwhile (job_state: already done): nothing to stop then.
    const stopCurrent = async (runner: Runner) => {
      if (runner.current) await this.stopJob(runner.current, to).catch((e: unknown) => ignoreEnded(e));
    };
    if (await this.runners.stop(exp.id, to, stopCurrent)) return this.store.get(exp.id)!;
    // Not running here: stopped as a job is (JobManager.stop), with the same clear errors, and so
    // are its cells' stopped jobs (a cancelled one's cells say cancelled, as a running one's would).
    const status = this.status(exp);
    refuseStopElsewhere(`${this.def.noun} ${exp.id}`, status === 'done' ? 'done' : status === 'running' ? 'running elsewhere' : 'stopped', `${this.def.kind}_state`);
    if (to === 'cancelled') {
      for (const { job } of this.cellStates(exp)) if (job && (job.status === 'queued' || job.status === 'paused' || job.interrupted)) await this.stopJob(job.id, to).catch((e: unknown) => ignoreEnded(e));
    }
    this.store.claims.stopAbandoned(exp.id, exp.owner, to);
    // Every change of status publishes, also one no runner here made (a page shows the event's).
    this.publish(exp.id, true);
    return this.store.get(exp.id)!;
  }

  private stopJob(jobId: string, to: 'paused' | 'cancelled'): Promise<JobInfo> {
    return to === 'cancelled' ? this.jobs.cancel(jobId) : this.jobs.pause(jobId);
  }

  /** Pauses every experiment running in this process (resumable); every one is tried, failures are thrown together. */
  async dispose(): Promise<void> {
    await this.runners.dispose((id) => this.pause(id));
  }

  private publish(id: string, force = false): void {
    const now = Date.now();
    if (!force && now - (this.lastPublish.get(id) ?? 0) < this.def.publishEveryMs) return;
    this.lastPublish.set(id, now);
    this.emitter.emit('change', id);
  }

  // ---------------------------------------------------------------- the run

  /** The job of one cell, created (the data set imported) when missing or left half-imported by a kill. */
  private async ensureJob(exp: StoredExperiment<Spec>, cell: Cell, signal?: AbortSignal): Promise<JobInfo> {
    const key = this.def.key(cell);
    const existing = this.store.jobOf(exp.id, key);
    if (existing) {
      try {
        const job = this.jobs.get(existing);
        if (this.jobStore.isImported(job.id)) return job;
        await this.jobs.delete(job.id);
      } catch (e) {
        if (!(e instanceof UserError)) throw e;
      }
    }
    const job = await this.jobs.create({ ...(await this.def.job(exp, cell)), ...(signal ? { signal } : {}) });
    this.store.setJob(exp.id, key, job.id);
    return job;
  }

  /**
   * How `job` starts as to money, calls or tokens: its share of the experiment's budget (the
   * budget less what the other jobs spent), priced as a job alone is (the experiment's price for
   * every model, else each remote entry's own); `spent` when nothing is left for it. Without a
   * budget, a share an earlier session gave it is dropped.
   */
  private async budgetShare(id: string, job: JobInfo): Promise<{ budget?: JobBudget | null } | 'spent'> {
    const exp = this.store.get(id)!;
    const budget = exp.budget;
    if (!budget) return job.budget ? { budget: null } : {};
    const others = this.cellStates(exp).reduce((sum, s) => sum + (s.job && s.job.id !== job.id ? spentIn(s.job, budget.kind) : 0), 0);
    const limit = budget.limit - others;
    if (limit <= spentIn(job, budget.kind)) return 'spent';
    return { budget: await pricedBudget({ kind: budget.kind, limit }, parseModelPair({ generator: job.generator.path, evaluator: job.evaluator.path }), { price: budget.price, lookup: this.lookup }) };
  }

  /**
   * Leases what `cell` holds (holds.ts), after releasing what neither it nor `walk.keep` wants.
   * Returns why a model could not be loaded (one line, e.g. "cannot load m.gguf: llama.cpp
   * refused it (…)"), or null: the cell's job then fails with it, never started only to try the
   * same load again.
   */
  private holdFor(walk: Walk<Spec>, cell: Cell): Promise<string | null> {
    if (!this.pool) return Promise.resolve(null);
    const { spec } = walk.exp;
    return holdModels(this.pool, walk.holds, this.heldBy(spec, cell), walk.keep, { signal: walk.runner.ac.signal, sequences: this.def.concurrency(spec) });
  }

  /** What a cell holds: its kind's choice, and in a race both its models, kept for its later rounds (holds.ts). */
  private heldBy(spec: Spec, cell: Cell): string[] {
    if (!this.def.raced(spec)) return [...this.def.hold(spec, cell)];
    const { generator, evaluator } = this.def.models(spec, cell);
    return [...new Set([...this.def.hold(spec, cell), generator, evaluator])];
  }

  private async run(id: string, runner: Runner): Promise<void> {
    const exp = this.store.get(id)!;
    const walk: Walk<Spec> = { id, exp, runner, holds: new Map(), keep: [], failedCells: [] };
    let failure: string | null = null;
    const offProgress = this.jobs.on('progress', (e) => {
      if (e.progress.jobId !== runner.current) return;
      const seen = this.jobProgress.get(id);
      this.jobProgress.set(id, { progress: e.progress, since: seen?.progress.jobId === e.progress.jobId ? seen.since : Date.now() });
      this.publish(id);
    });
    const stopHeartbeat = beatWhileRunning(() => this.store.claims.beat(id, OWNER));
    this.priceCells(id);
    try {
      failure = this.def.raced(exp.spec) ? await this.walkRounds(walk) : await this.walkCells(walk);
    } catch (e) {
      if (!(isAbortError(e) && runner.ac.signal.aborted)) failure = errorMessage(e);
    } finally {
      offProgress();
      stopHeartbeat();
      // A release that fails is the run's failure when nothing else failed (never silent).
      for (const lease of [...walk.holds.values()].reverse()) {
        await lease.release().catch((e: unknown) => {
          failure ??= `could not give back a model: ${errorMessage(e)}`;
        });
      }
      const allDone = this.cellStates(this.store.get(id)!).every((s) => s.job?.status === 'done' || s.dropped !== null);
      let status: StoredExperimentStatus;
      let error: string | null = null;
      if (failure !== null) [status, error] = ['failed', failure];
      else if (runner.stop) [status, error] = [runner.stop, runner.reason];
      else if (allDone) status = 'done';
      else if (walk.failedCells.length > 0) {
        const total = this.def.cells(exp.spec).length;
        [status, error] = ['failed', `${walk.failedCells.length} of ${total} ${total === 1 ? 'job' : 'jobs'} failed: ${walk.failedCells[0]}`];
      } else status = 'paused';
      // Only the owner sets the outcome (a process that lost the experiment leaves it alone).
      this.store.claims.release(id, OWNER, status, error, status === 'paused' ? runner.stoppedBy : null);
      this.runners.ended(id);
      this.publish(id, true);
    }
  }

  /** Each cell's job to its end, one after another. Returns the experiment's failure, or null. */
  private async walkCells(walk: Walk<Spec>): Promise<string | null> {
    for (const cell of this.def.cells(walk.exp.spec)) {
      if (walk.runner.ac.signal.aborted) break;
      const step = await this.runCell(walk, cell);
      if (step !== 'next') return step === 'stop' ? null : step.failure;
    }
    return null;
  }

  /**
   * A raced experiment (race.ts): every cell's job made first, then rounds: each cell still in runs
   * the round's rows, and the race, replayed from the rows, drops the cells shown worse. Returns
   * the experiment's failure, or null.
   */
  private async walkRounds(walk: Walk<Spec>): Promise<string | null> {
    const { id, exp, runner } = walk;
    const cells = this.def.cells(exp.spec);
    for (const cell of cells) {
      const made = await this.makeJob(walk, cell);
      if (typeof made === 'object' && 'failure' in made) return made.failure;
    }
    for (;;) {
      if (runner.ac.signal.aborted) return null;
      const states = this.cellStates(this.store.get(id)!);
      // A dropped cell's job stays paused with the rows it ran; every list says it was dropped.
      for (const s of states) if (s.dropped && s.job?.status === 'paused' && s.job.stoppedBy === null) this.jobStore.markDropped(s.job.id);
      const race = this.races.get(id);
      if (!race || race.nextRows.size === 0) return null;
      let ran = false;
      const racing = states.filter((s) => s.job && !s.dropped && race.alive.has(this.def.entrant(s.cell).key) && !['done', 'failed', 'cancelled'].includes(s.job.status));
      walk.keep = racing.flatMap((s) => this.heldBy(exp.spec, s.cell));
      for (const s of racing) {
        if (runner.ac.signal.aborted) return null;
        const step = await this.runCell(walk, s.cell, race.nextRows);
        if (step !== 'next') return step === 'stop' ? null : step.failure;
        ran = true;
      }
      // Nothing left to run the round (every cell still in failed): the run ends as its cells say.
      if (!ran) return null;
    }
  }

  /** A cell's job, made when missing; 'skip' when it could not be (recorded, the kind goes on), or the experiment's failure. */
  private async makeJob(walk: Walk<Spec>, cell: Cell): Promise<JobInfo | 'skip' | { failure: string }> {
    try {
      return await this.ensureJob(walk.exp, cell, walk.runner.ac.signal);
    } catch (e) {
      if ((isAbortError(e) && walk.runner.ac.signal.aborted) || this.def.onJobFailed === 'stop' || !(e instanceof UserError)) throw e;
      this.cellErrors.get(walk.id)?.set(this.def.key(cell), e.message);
      walk.failedCells.push(`${this.def.describe(cell)}: ${e.message}`);
      this.publish(walk.id, true);
      return 'skip';
    }
  }

  /**
   * Runs one cell's job (only `rows` of it, a race's round, when given): its budget share, its
   * models held, started and waited for. 'next': go on; 'stop': the run stops (a pause, a cancel,
   * its budget); or the experiment's failure.
   */
  private async runCell(walk: Walk<Spec>, cell: Cell, rows?: ReadonlySet<number>): Promise<'next' | 'stop' | { failure: string }> {
    const { id, runner } = walk;
    const made = await this.makeJob(walk, cell);
    if (made === 'skip') return 'next';
    if ('failure' in made) return made;
    const job = made;
    if (job.status === 'done') return 'next';
    // The experiment's budget, less what its other jobs spent, is this job's: a job stops
    // before exceeding it, so the experiment never does.
    const share = await this.budgetShare(id, job);
    if (share === 'spent') {
      runner.stop = 'paused';
      runner.stoppedBy = 'budget';
      runner.reason = budgetReason(this.store.get(id)!.budget!);
      return 'stop';
    }
    const loadFailure = await this.holdFor(walk, cell);
    if (loadFailure !== null) {
      // The cell's job fails as it would have on that load, recorded without running it.
      this.jobStore.setStatus(job.id, 'failed', loadFailure);
      const error = `job ${job.id} (${this.def.describe(cell)}) failed: ${loadFailure}`;
      if (this.def.onJobFailed === 'stop') return { failure: error };
      walk.failedCells.push(error);
      this.publish(id, true);
      return 'next';
    }
    runner.current = job.id;
    if (this.def.wrap) this.jobs.setBackendWrapper(job.id, this.def.wrap);
    try {
      await this.jobs.start(job.id, { ...share, ...(rows ? { rows } : {}) });
      this.publish(id, true);
      // A stop that came while the job was starting: the stop saw no job to stop.
      if (runner.ac.signal.aborted) await this.stopJob(job.id, runner.stop ?? 'paused');
      const end = await this.jobs.wait(job.id);
      if (end.stoppedBy === 'budget') {
        runner.stop = 'paused';
        runner.stoppedBy = 'budget';
        runner.reason = budgetReason(this.store.get(id)!.budget ?? end.budget!);
        return 'stop';
      }
      if (end.status === 'failed') {
        const error = `job ${end.id} (${this.def.describe(cell)}) failed: ${end.error ?? 'unknown error'}`;
        if (this.def.onJobFailed === 'stop') return { failure: error };
        walk.failedCells.push(error);
      } else if (end.status !== 'done' && !(rows && end.status === 'paused' && !runner.ac.signal.aborted)) return 'stop';
    } finally {
      this.jobs.setBackendWrapper(job.id, null);
      runner.current = null;
    }
    if (this.unpriced(id)) this.priceCells(id);
    this.publish(id, true);
    return 'next';
  }
}

/** A stop that found its job already ended: the one expected failure of stopping a cell's job. */
function ignoreEnded(e: unknown): void {
  if (!(e instanceof UserError && e.code === 'job_state')) throw e;
}

/** What a job spent in a budget's unit. */
export function spentIn(job: Pick<JobInfo, 'usage'>, kind: Budget['kind']): number {
  const u = job.usage;
  return kind === 'calls' ? u.calls.total : kind === 'tokens' ? u.tokens.prompt + u.tokens.completion : (u.usd ?? 0);
}

function budgetReason(budget: Budget): string {
  return `stopped by its budget (${formatBudget(budget)}): resume it with a larger one`;
}
