// Sensitivity sweeps (SPEC §1.5) as one resumable experiment made of evaluation jobs.
//
// One job per (n, k, seed), at the largest r of the grid: point (n, k, r) reads the job's first r
// runs (sweep-metrics.ts), so no r is paid twice. The jobs run one after another in the same job
// database and share what is exactly the same:
//   - examples for (task, k, seed, run, generator): the generation cache, filled by the first job
//     of each (k, seed) and read by every other n;
//   - paraphrases for (n, seed, run, input): the same cache, shared by every k;
//   - the evaluator's greedy answers, e.g. the original input under a run's examples, which every
//     n asks for: the evaluation store of sweep-backends.ts.
// Every call really sent to a model is counted in the sweep's row, so the result can say what
// sharing saved against running each point alone.
//
// A kill loses only rows in flight: jobs keep their finished rows, the caches keep every finished
// call, and `resume` walks the grid again, skipping done jobs and resuming the rest.
import { EventEmitter, setMaxListeners } from 'node:events';
import { writeFile } from 'node:fs/promises';
import {
  SweepStartInput,
  type SweepJob,
  type SweepProgress,
  type SweepResult,
  type SweepStartSpec,
  type SweepStatus,
  type SweepSummary,
} from '../common/contract/sweeps';
import { describeZodError } from '../common/contract';
import { jobStatus, type JobStatus } from '../common/contract/jobs';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import type { TaskDefinition } from '../common/task';
import { previewDataset } from './dataset';
import type { JobManager } from './manager';
import type { JobStore } from './store';
import { aggregateSweep, sweepPointsCsv, type SweepCell } from './sweep-metrics';
import { sweepBackend } from './sweep-backends';
import { SweepStore, type StoredSweep, type StoredSweepSpec } from './sweep-store';
import type { BackendLease, BackendProvider, JobInfo } from './types';
import { HEARTBEAT_MS, OWNER, ownerLive } from './owner';

export interface SweepManagerOptions {
  jobs: JobManager;
  store: JobStore;
  /** Given, the sweep holds its models between jobs so they load once. */
  pool?: BackendProvider;
  resolveTask: (id: string) => Promise<TaskDefinition>;
}

export type SweepEvent = SweepProgress & { status: SweepStatus };

interface SweepRunner {
  ac: AbortController;
  stop: 'paused' | 'cancelled' | null;
  current: string | null;
  done: Promise<void>;
}

/** The grid's jobs in the order they run: seed, then k, then n (a first seed fills every point early). */
export function sweepCells(grid: StoredSweepSpec['grid']): { n: number; k: number; seed: number }[] {
  const out: { n: number; k: number; seed: number }[] = [];
  for (const seed of grid.seeds) for (const k of grid.k) for (const n of grid.n) out.push({ n, k, seed });
  return out;
}

function pausedIfInterrupted(status: JobStatus): SweepJob['status'] {
  return status === 'interrupted' ? 'paused' : status;
}

export class SweepManager {
  private readonly jobs: JobManager;
  private readonly jobStore: JobStore;
  private readonly store: SweepStore;
  private readonly pool: BackendProvider | undefined;
  private readonly resolveTask: (id: string) => Promise<TaskDefinition>;
  private readonly runners = new Map<string, SweepRunner>();
  private readonly emitter = new EventEmitter();

  constructor(opts: SweepManagerOptions) {
    this.jobs = opts.jobs;
    this.jobStore = opts.store;
    this.store = new SweepStore(opts.store);
    this.pool = opts.pool;
    this.resolveTask = opts.resolveTask;
    this.emitter.setMaxListeners(0);
  }

  /** Progress of any sweep of this process; returns the unsubscribe function. */
  onProgress(listener: (e: SweepEvent) => void): () => void {
    this.emitter.on('progress', listener);
    return () => this.emitter.off('progress', listener);
  }

  /**
   * Checks the spec and records the sweep. Its first job is created here, so a model file that is
   * not a GGUF, a missing data file or a column that is not there fail now, not in the background.
   */
  async create(input: unknown): Promise<SweepSummary> {
    const parsed = SweepStartInput.safeParse(input);
    if (!parsed.success) throw new UserError(describeZodError(parsed.error, 'invalid sweep: '), 'bad_option');
    const spec: SweepStartSpec = parsed.data;
    const task = await this.resolveTask(spec.taskId);
    const preview = await previewDataset(spec.dataPath, { maxRows: 5 });
    if (!preview.columns.includes(spec.inputColumn)) throw new UserError(`${spec.dataPath} has no column "${spec.inputColumn}" (columns: ${preview.columns.join(', ')})`, 'bad_option');
    if (spec.goldColumn !== null && !preview.columns.includes(spec.goldColumn)) {
      throw new UserError(`${spec.dataPath} has no column "${spec.goldColumn}" (columns: ${preview.columns.join(', ')})`, 'bad_option');
    }
    const stored: StoredSweepSpec = {
      task,
      dataPath: spec.dataPath,
      mapping: { textColumn: spec.inputColumn, labelColumn: spec.goldColumn, ...(Object.keys(spec.labelMap).length > 0 ? { labelMap: spec.labelMap } : {}) },
      generatorPath: spec.generator,
      evaluatorPath: spec.evaluator,
      grid: spec.grid,
      limit: spec.limit ?? null,
      concurrency: spec.concurrency ?? 4,
    };
    const g = spec.grid;
    const name = spec.name ?? `${task.id}: n ${g.n.join(',')} · k ${g.k.join(',')} · r ${g.r.join(',')} · seeds ${g.seeds.join(',')}`;
    const id = this.store.create(name, stored);
    try {
      await this.ensureJob(this.store.get(id)!, sweepCells(g)[0]!);
    } catch (e) {
      this.jobStore.db.prepare(`DELETE FROM sweeps WHERE id = ?`).run(id);
      throw e;
    }
    return this.summary(id);
  }

  /** A sweep by id or unique id prefix; UserError when there is none. */
  private find(idOrPrefix: string): StoredSweep {
    const id = this.store.findId(idOrPrefix);
    const sweep = id ? this.store.get(id) : null;
    if (!sweep) throw new UserError(`no sweep "${idOrPrefix}"`, 'sweep_unknown');
    return sweep;
  }

  private status(s: StoredSweep): SweepStatus {
    if (s.status !== 'running' || this.runners.has(s.id)) return s.status;
    // Like a job's: a live pid here, a recent heartbeat from another machine sharing the folder.
    return s.owner !== null && ownerLive(s.owner, s.updated) ? 'running' : 'interrupted';
  }

  /** The sweep's jobs, one per (n, k, seed), with their state. */
  private jobRows(s: StoredSweep): { job: SweepJob; info: JobInfo | null }[] {
    const byCell = new Map(this.store.jobs(s.id).map((j) => [`${j.n}:${j.k}:${j.seed}`, j.jobId]));
    return sweepCells(s.spec.grid).map((c) => {
      const jobId = byCell.get(`${c.n}:${c.k}:${c.seed}`) ?? null;
      let info: JobInfo | null = null;
      try {
        info = jobId ? this.jobs.get(jobId) : null;
      } catch {
        info = null;
      }
      return {
        info,
        job: {
          ...c,
          jobId: info ? info.id : null,
          // A job whose process died is one the sweep's resume continues: paused, for the sweep.
          status: info ? pausedIfInterrupted(jobStatus(info)) : 'pending',
          rowsDone: info?.rowsDone ?? 0,
          rowsTotal: info?.rowsTotal ?? 0,
        },
      };
    });
  }

  private progress(s: StoredSweep, rows = this.jobRows(s)): SweepProgress {
    const perJob = rows.find((r) => r.info)?.info?.rowsTotal ?? 0;
    const rowsDone = rows.reduce((sum, r) => sum + (r.info?.rowsDone ?? 0), 0);
    const rowsTotal = perJob * rows.length;
    const elapsedMs = rows.reduce((sum, r) => sum + (r.info?.elapsedMs ?? 0), 0);
    const rate = elapsedMs > 0 ? rowsDone / elapsedMs : 0;
    return {
      sweepId: s.id,
      jobsDone: rows.filter((r) => r.info?.status === 'done').length,
      jobsTotal: rows.length,
      rowsDone,
      rowsTotal,
      elapsedSeconds: elapsedMs / 1000,
      etaSeconds: rowsDone >= rowsTotal && rowsTotal > 0 ? 0 : rate > 0 ? (rowsTotal - rowsDone) / rate / 1000 : null,
    };
  }

  private summaryOf(s: StoredSweep, rows = this.jobRows(s)): SweepSummary {
    return {
      id: s.id,
      name: s.name,
      status: this.status(s),
      taskId: s.spec.task.id,
      dataPath: s.spec.dataPath,
      generator: s.spec.generatorPath,
      evaluator: s.spec.evaluatorPath,
      grid: s.spec.grid,
      createdAt: Date.parse(s.created),
      updatedAt: Date.parse(s.updated),
      error: s.error,
      progress: this.progress(s, rows),
    };
  }

  summary(id: string): SweepSummary {
    return this.summaryOf(this.find(id));
  }

  list(): SweepSummary[] {
    return this.store.list().map((s) => this.summaryOf(s));
  }

  /** The result so far: every point over the seeds whose job is done, and what sharing saved. */
  result(id: string): SweepResult {
    const s = this.find(id);
    const rows = this.jobRows(s);
    const cells: SweepCell[] = rows.flatMap(({ job, info }) =>
      info
        ? [
            {
              n: job.n,
              k: job.k,
              seed: job.seed,
              done: info.status === 'done',
              rows: [...this.jobStore.iterateRows(info.id)],
              runExamples: this.jobStore.runExamples(info.id),
              elapsedMs: info.elapsedMs,
            },
          ]
        : [],
    );
    const agg = aggregateSweep({ task: s.spec.task, grid: s.spec.grid, cells, made: { generatorCalls: s.generatorCalls, evaluatorCalls: s.evaluatorCalls, tokens: s.tokens } });
    return {
      ...this.summaryOf(s, rows),
      taskKind: s.spec.task.kind,
      limit: s.spec.limit,
      rows: rows.find((r) => r.info)?.info?.rowsTotal ?? 0,
      jobs: rows.map((r) => r.job),
      points: agg.points,
      sharing: agg.sharing,
      deterministic: sweepDeterministic(rows.flatMap((r) => (r.info ? [r.info.deterministic] : []))),
    };
  }

  /** CSV: one line per point. JSON: the whole result. Returns the path written. */
  async export(id: string, format: 'csv' | 'json', outPath: string): Promise<string> {
    const result = this.result(id);
    await writeFile(outPath, format === 'csv' ? sweepPointsCsv(result.points) : `${JSON.stringify(result, null, 2)}\n`);
    return outPath;
  }

  // ---------------------------------------------------------------- control

  /** Starts (or resumes) the sweep in this process; its jobs run in the background (`wait`). */
  start(id: string): SweepSummary {
    const s = this.find(id);
    if (this.runners.has(s.id)) return this.summaryOf(s);
    // Two processes resuming at once: the claim is one conditional UPDATE, so only one of them wins.
    const claim = this.store.claim(s.id, OWNER, ownerLive);
    if (!claim.claimed) {
      if (claim.reason === 'done') throw new UserError(`sweep ${s.id} is already done`, 'sweep_state');
      if (claim.reason === 'unknown') throw new UserError(`no sweep "${id}"`, 'sweep_unknown');
      throw new UserError(`sweep ${s.id} is running in another process`, 'sweep_state');
    }
    const ac = new AbortController();
    setMaxListeners(0, ac.signal);
    const runner: SweepRunner = { ac, stop: null, current: null, done: Promise.resolve() };
    runner.done = this.run(s.id, runner).finally(() => this.runners.delete(s.id));
    this.runners.set(s.id, runner);
    this.publish(s.id);
    return this.summary(s.id);
  }

  resume(id: string): SweepSummary {
    return this.start(id);
  }

  async wait(id: string): Promise<SweepSummary> {
    const s = this.find(id);
    await this.runners.get(s.id)?.done;
    return this.summary(s.id);
  }

  /** Stops after pausing the running job (its finished rows stay); resumable. */
  async pause(id: string): Promise<SweepSummary> {
    const s = this.find(id);
    const runner = this.runners.get(s.id);
    if (runner) {
      runner.stop = 'paused';
      runner.ac.abort();
      if (runner.current) await this.jobs.pause(runner.current).catch(() => undefined);
      await runner.done;
    } else if (this.status(s) === 'interrupted') {
      this.store.pauseAbandoned(s.id, s.owner);
    }
    return this.summary(s.id);
  }

  /** Pauses every sweep running in this process. */
  async dispose(): Promise<void> {
    await Promise.all([...this.runners.keys()].map((id) => this.pause(id).catch(() => undefined)));
  }

  private publish(id: string): void {
    const s = this.store.get(id);
    if (!s) return;
    this.emitter.emit('progress', { ...this.progress(s), status: this.status(s) } satisfies SweepEvent);
  }

  /** The job of one cell, created (the data set imported) when missing or left half-imported by a kill. */
  private async ensureJob(s: StoredSweep, cell: { n: number; k: number; seed: number }, signal?: AbortSignal): Promise<JobInfo> {
    const existing = this.store.jobOf(s.id, cell.n, cell.k, cell.seed);
    if (existing) {
      try {
        const job = this.jobs.get(existing);
        if (this.jobStore.isImported(job.id)) return job;
        await this.jobs.delete(job.id);
      } catch (e) {
        if (!(e instanceof UserError)) throw e;
      }
    }
    const { spec } = s;
    const rMax = Math.max(...spec.grid.r);
    const job = await this.jobs.create({
      task: spec.task,
      settings: { n: cell.n, k: cell.k, r: rMax, seed: cell.seed, scope: 'run' },
      generatorPath: spec.generatorPath,
      evaluatorPath: spec.evaluatorPath,
      dataset: { path: spec.dataPath, mapping: spec.mapping },
      ...(spec.limit !== null ? { limit: spec.limit } : {}),
      concurrency: spec.concurrency,
      name: `sweep ${s.id}: n=${cell.n} k=${cell.k} r=${rMax} seed=${cell.seed}`,
      ...(signal ? { signal } : {}),
    });
    this.store.setJob(s.id, cell.n, cell.k, cell.seed, job.id);
    return job;
  }

  private async run(id: string, runner: SweepRunner): Promise<void> {
    const { signal } = runner.ac;
    const s = this.store.get(id)!;
    const leases: BackendLease[] = [];
    let failure: string | null = null;
    const offProgress = this.jobs.on('progress', (e) => {
      if (e.progress.jobId === runner.current) this.publish(id);
    });
    const heartbeat = setInterval(() => this.store.beat(id, OWNER), HEARTBEAT_MS);
    heartbeat.unref();
    const evaluations = { get: (key: string) => this.jobStore.cacheGet(key), set: (key: string, value: string) => this.jobStore.cacheSet(key, value) };
    const wrap = (role: 'generator' | 'evaluator', backend: Parameters<typeof sweepBackend>[0]) =>
      sweepBackend(backend, { onCalls: (calls, tokens) => this.store.addCalls(id, role, calls, tokens), ...(role === 'evaluator' ? { evaluations } : {}) });
    try {
      if (this.pool) {
        // Held for the whole sweep so the models load once, not once per job.
        for (const path of new Set([s.spec.generatorPath, s.spec.evaluatorPath])) leases.push(await this.pool.acquire(path, { signal, sequences: s.spec.concurrency }));
      }
      for (const cell of sweepCells(s.spec.grid)) {
        if (signal.aborted) break;
        const job = await this.ensureJob(s, cell, signal);
        if (job.status === 'done') continue;
        runner.current = job.id;
        this.jobs.setBackendWrapper(job.id, wrap);
        try {
          await this.jobs.start(job.id);
          // A pause that came while the job was starting: the abort listener saw no job to pause.
          if (signal.aborted) await this.jobs.pause(job.id);
          const end = await this.jobs.wait(job.id);
          if (end.status === 'failed') {
            failure = `job ${end.id} (n=${cell.n} k=${cell.k} seed=${cell.seed}) failed: ${end.error ?? 'unknown error'}`;
            break;
          }
          if (end.status !== 'done') break;
        } finally {
          this.jobs.setBackendWrapper(job.id, null);
          runner.current = null;
        }
        this.publish(id);
      }
    } catch (e) {
      if (!(isAbortError(e) && signal.aborted)) failure = errorMessage(e);
    } finally {
      offProgress();
      clearInterval(heartbeat);
      for (const l of leases.reverse()) await l.release().catch(() => undefined);
      const rows = this.jobRows(this.store.get(id)!);
      const allDone = rows.every((r) => r.info?.status === 'done');
      const status = failure !== null ? 'failed' : allDone ? 'done' : (runner.stop ?? 'paused');
      // Only the owner sets the outcome (a process that lost the sweep leaves it alone).
      this.store.release(id, OWNER, status, failure);
      this.runners.delete(id);
      this.publish(id);
    }
  }
}

/** A sweep is reproducible while every job that ran is; null before any job ran a session. */
export function sweepDeterministic(jobs: readonly (boolean | null)[]): boolean | null {
  const known = jobs.filter((d): d is boolean => d !== null);
  return known.length === 0 ? null : known.every(Boolean);
}
