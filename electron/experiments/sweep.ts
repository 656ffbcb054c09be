// Sensitivity sweeps (docs/method.md, the sweep) as one resumable experiment made of evaluation
// jobs, on the experiments' one runner (experiment.ts).
//
// One job per (n, k, seed), at the largest r of the grid: point (n, k, r) reads the job's first r
// runs (sweep-metrics.ts), so no r is paid twice. The jobs run one after another in the same job
// database and share what is exactly the same:
//   - examples for (task, k, seed, run, generator): the generation cache, filled by the first job
//     of each (k, seed) and read by every other n;
//   - paraphrases for (n, seed, run, input): the same cache, shared by every k;
//   - the evaluator's greedy answers, e.g. the original input under a run's examples, which every
//     n asks for: the evaluation store of sweep-backends.ts.
// Every call really sent to a model is counted by its job's usage meter, so the result can say
// what sharing saved against running each point alone.
import { writeFile } from 'node:fs/promises';
import {
  SweepStartInput,
  type SweepGrid,
  type SweepJob,
  type SweepResult,
  type SweepStartSpec,
  type SweepSummary,
} from '../common/contract/sweeps';
import { describeZodError } from '../common/contract';
import { jobStatus, type JobStatus } from '../common/contract/jobs';
import type { ExperimentProgress } from '../common/contract/experiment-progress';
import { UserError } from '../common/errors';
import type { TaskDefinition } from '../common/task';
import { openDataset } from '../jobs/dataset';
import { ExperimentManager, type CellState, type ExperimentDefinition } from './experiment';
import type { StoredExperiment } from '../jobs/experiment-store';
import type { JobManager } from '../jobs/manager';
import type { JobStore } from '../jobs/store';
import { aggregateSweep, sweepPointsCsv, type SweepCell } from './sweep-metrics';
import { sweepBackend } from './sweep-backends';
import { sumUsage } from '../jobs/usage';
import type { BackendProvider, ColumnMapping } from '../jobs/types';

/** Everything a resume needs, fixed when the sweep is created. */
export interface StoredSweepSpec {
  task: TaskDefinition;
  dataPath: string;
  mapping: ColumnMapping;
  generatorPath: string;
  evaluatorPath: string;
  grid: SweepGrid;
  limit: number | null;
  concurrency: number;
}

export type StoredSweep = StoredExperiment<StoredSweepSpec>;

/** One job of the grid. */
export interface SweepCellKey {
  n: number;
  k: number;
  seed: number;
}

export interface SweepManagerOptions {
  jobs: JobManager;
  store: JobStore;
  /** Given, the sweep holds its models between jobs so they load once. */
  pool?: BackendProvider;
  resolveTask: (id: string) => Promise<TaskDefinition>;
}

/** The grid's jobs in the order they run: seed, then k, then n (a first seed fills every point early). */
export function sweepCells(grid: StoredSweepSpec['grid']): SweepCellKey[] {
  const out: SweepCellKey[] = [];
  for (const seed of grid.seeds) for (const k of grid.k) for (const n of grid.n) out.push({ n, k, seed });
  return out;
}

/** A sweep as the experiments' runner sees it. */
function sweepDefinition(jobStore: JobStore): ExperimentDefinition<StoredSweepSpec, SweepCellKey> {
  // Shared evaluations live in the job store's cache table (sweep-backends.ts).
  const evaluations = { get: (key: string) => jobStore.cacheGet(key), set: (key: string, value: string) => jobStore.cacheSet(key, value) };
  return {
    kind: 'sweep',
    noun: 'sweep',
    cells: (spec) => sweepCells(spec.grid),
    key: (c) => JSON.stringify([c.n, c.k, c.seed]),
    describe: (c) => `n=${c.n} k=${c.k} seed=${c.seed}`,
    job: async ({ id, spec }, cell) => {
      const rMax = Math.max(...spec.grid.r);
      return {
        task: spec.task,
        settings: { n: cell.n, k: cell.k, r: rMax, seed: cell.seed, scope: 'run' },
        generatorPath: spec.generatorPath,
        evaluatorPath: spec.evaluatorPath,
        dataset: { path: spec.dataPath, mapping: spec.mapping },
        ...(spec.limit !== null ? { limit: spec.limit } : {}),
        concurrency: spec.concurrency,
        name: `sweep ${id}: n=${cell.n} k=${cell.k} r=${rMax} seed=${cell.seed}`,
      };
    },
    // Held for the whole sweep, so the models load once, not once per job.
    hold: (spec) => [...new Set([spec.generatorPath, spec.evaluatorPath])],
    concurrency: (spec) => spec.concurrency,
    // A failed job leaves holes in every point it feeds: the sweep stops, resumable once fixed.
    onJobFailed: 'stop',
    publishEveryMs: 0,
    // Shared evaluations; the generator's work is shared by the generation cache already.
    wrap: (role, backend) => (role === 'evaluator' ? sweepBackend(backend, evaluations) : backend),
  };
}

/** A job whose process died is one the sweep's resume continues: paused, as the sweep sees it. */
function pausedIfInterrupted(status: JobStatus): SweepJob['status'] {
  return status === 'interrupted' ? 'paused' : status;
}

export class SweepManager extends ExperimentManager<StoredSweepSpec, SweepCellKey, SweepSummary> {
  private readonly jobStore: JobStore;
  private readonly resolveTask: (id: string) => Promise<TaskDefinition>;

  constructor(opts: SweepManagerOptions) {
    super({
      jobs: opts.jobs,
      store: opts.store,
      ...(opts.pool ? { pool: opts.pool } : {}),
      definition: sweepDefinition(opts.store),
    });
    this.jobStore = opts.store;
    this.resolveTask = opts.resolveTask;
  }

  protected view(s: StoredSweep): SweepSummary {
    return this.summaryOf(s);
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
    const { columns } = await openDataset(spec.dataPath);
    for (const column of [spec.inputColumn, spec.goldColumn]) {
      if (column !== null && !columns.includes(column)) throw new UserError(`${spec.dataPath} has no column "${column}" (columns: ${columns.join(', ')})`, 'bad_option');
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
    const { id } = this.runner.create(name, stored);
    await this.runner.prepare(id);
    return this.summary(id);
  }

  /** The sweep's jobs, one per (n, k, seed), with their state. */
  private jobRows(states: readonly CellState<SweepCellKey>[]): SweepJob[] {
    return states.map(({ cell, job }) => ({
      ...cell,
      jobId: job ? job.id : null,
      status: job ? pausedIfInterrupted(jobStatus(job)) : 'queued',
      rowsDone: job?.rowsDone ?? 0,
      rowsTotal: job?.rowsTotal ?? 0,
    }));
  }

  private progress(s: StoredSweep, states = this.runner.cellStates(s)): ExperimentProgress {
    return this.runner.progress(states, s.id);
  }

  private summaryOf(s: StoredSweep, states = this.runner.cellStates(s)): SweepSummary {
    return {
      id: s.id,
      name: s.name,
      status: this.runner.status(s),
      taskId: s.spec.task.id,
      dataPath: s.spec.dataPath,
      generator: s.spec.generatorPath,
      evaluator: s.spec.evaluatorPath,
      grid: s.spec.grid,
      createdAt: Date.parse(s.created),
      updatedAt: Date.parse(s.updated),
      error: s.error,
      progress: this.progress(s, states),
      usage: sumUsage(states.flatMap((st) => (st.job ? [st.job.usage] : []))),
      budget: s.budget ? { kind: s.budget.kind, limit: s.budget.limit } : null,
      stoppedBy: this.runner.status(s) === 'paused' ? s.stoppedBy : null,
    };
  }

  summary(id: string): SweepSummary {
    return this.summaryOf(this.runner.find(id));
  }

  list(): SweepSummary[] {
    return this.runner.list().map((s) => this.summaryOf(s));
  }

  /** The result so far: every point over the seeds whose job is done, and what sharing saved. */
  get(id: string): SweepResult {
    const s = this.runner.find(id);
    const states = this.runner.cellStates(s);
    const cells: SweepCell[] = states.flatMap(({ cell, job }) =>
      job
        ? [
            {
              ...cell,
              done: job.status === 'done',
              rows: [...this.jobStore.iterateRows(job.id)],
              runExamples: this.jobStore.runExamples(job.id),
              elapsedMs: job.elapsedMs,
            },
          ]
        : [],
    );
    const agg = aggregateSweep({ task: s.spec.task, grid: s.spec.grid, cells, made: madeBy(states) });
    return {
      ...this.summaryOf(s, states),
      taskKind: s.spec.task.kind,
      limit: s.spec.limit,
      rows: states.find((r) => r.job)?.job?.rowsTotal ?? 0,
      jobs: this.jobRows(states),
      points: agg.points,
      sharing: agg.sharing,
      deterministic: sweepDeterministic(states.flatMap((r) => (r.job ? [r.job.deterministic] : []))),
    };
  }

  /** CSV: one line per point. JSON: the whole result. */
  async export(id: string, format: 'csv' | 'json', outPath: string): Promise<string> {
    const result = this.get(id);
    await writeFile(outPath, format === 'csv' ? sweepPointsCsv(result.points) : `${JSON.stringify(result, null, 2)}\n`);
    return outPath;
  }
}

/** What the sweep's jobs really sent, as their usage meters counted it (cached work is free). */
function madeBy(states: readonly CellState<SweepCellKey>[]): { generatorCalls: number; evaluatorCalls: number; tokens: number } {
  const u = sumUsage(states.flatMap((st) => (st.job ? [st.job.usage] : [])));
  return { generatorCalls: u.calls.examples + u.calls.paraphrases, evaluatorCalls: u.calls.evaluations, tokens: u.tokens.prompt + u.tokens.completion };
}

/** A sweep is reproducible while every job that ran is; null before any job ran a session. */
export function sweepDeterministic(jobs: readonly (boolean | null)[]): boolean | null {
  const known = jobs.filter((d): d is boolean => d !== null);
  return known.length === 0 ? null : known.every(Boolean);
}
