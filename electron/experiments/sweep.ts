// Sensitivity sweeps (docs/method.md, the sweep) as one kind of experiment (kind.ts), resumable,
// made of evaluation jobs on the experiments' one runner (experiment.ts).
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
import { SweepStartInput, type SweepGrid, type SweepJob, type SweepStartSpec } from '../common/contract/sweeps';
import { describeZodError } from '../common/contract';
import { jobStatus, type JobStatus } from '../common/contract/jobs';
import { UserError } from '../common/errors';
import { parseModelPair } from '../common/model-spec';
import { checkRowsInFlight } from '../common/settings';
import type { TaskDefinition } from '../common/task';
import type { TatraSettings } from '../common/tatra';
import { openDataset } from '../jobs/dataset';
import type { StoredExperiment } from '../jobs/experiment-store';
import type { JobStore } from '../jobs/store';
import { sumUsage } from '../jobs/usage';
import type { ColumnMapping } from '../jobs/types';
import { unmadeCellStatus, type CellLeft, type CellPrice, type CellState, type ExperimentKindDefinition, type ExperimentStatus } from './kind';
import type { Planner } from '../jobs/planner';
import { aggregateSweep, sweepPointsCsv, type SweepCell } from './sweep-metrics';
import { sweepBackend } from './sweep-backends';

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
  /** Raced (`--race`; absent in sweeps recorded before racing). */
  race?: boolean;
}

export type StoredSweep = StoredExperiment<StoredSweepSpec>;

/** One job of the grid. */
export interface SweepCellKey {
  n: number;
  k: number;
  seed: number;
}

/** The grid's jobs in the order they run: seed, then k, then n (a first seed fills every point early). */
export function sweepCells(grid: StoredSweepSpec['grid']): SweepCellKey[] {
  const out: SweepCellKey[] = [];
  for (const seed of grid.seeds) for (const k of grid.k) for (const n of grid.n) out.push({ n, k, seed });
  return out;
}

/** The settings of a cell's job: its (n, k, seed) at the grid's largest r. */
function cellSettings(spec: StoredSweepSpec, cell: SweepCellKey): TatraSettings {
  return { n: cell.n, k: cell.k, r: Math.max(...spec.grid.r), seed: cell.seed, scope: 'run' };
}

function parseSweep(input: unknown): SweepStartSpec {
  const parsed = SweepStartInput.safeParse(input);
  if (!parsed.success) throw new UserError(describeZodError(parsed.error, 'invalid sweep: '), 'bad_option');
  const spec = parsed.data;
  // Every job of the sweep runs at its concurrency: refused here, before the first one fails on it.
  if (spec.concurrency !== undefined) {
    const { generator, evaluator } = parseModelPair(spec);
    checkRowsInFlight(spec.concurrency, [generator, evaluator]);
  }
  return spec;
}

/** A sweep, for the runner, the manager and the planner. */
export function sweepKind(opts: { store: JobStore; resolveTask(idOrPath: string): Promise<TaskDefinition> }): ExperimentKindDefinition<'sweep', StoredSweepSpec, SweepCellKey> {
  const { store, resolveTask } = opts;
  // Shared evaluations live in the job store's cache table (sweep-backends.ts).
  const evaluations = { get: (key: string) => store.cacheGet(key), set: (key: string, value: string) => store.cacheSet(key, value) };
  return {
    kind: 'sweep',
    noun: 'sweep',
    cells: (spec) => sweepCells(spec.grid),
    key: (c) => JSON.stringify([c.n, c.k, c.seed]),
    describe: (c) => `n=${c.n} k=${c.k} seed=${c.seed}`,
    raced: (spec) => spec.race === true,
    // A setting races with all its seeds: its outcome on a row is the mean over them.
    entrant: (c) => ({ key: JSON.stringify([c.n, c.k]), name: `n=${c.n} k=${c.k}` }),
    models: (spec) => ({ generator: spec.generatorPath, evaluator: spec.evaluatorPath }),
    job: async ({ id, spec }, cell) => {
      const rMax = Math.max(...spec.grid.r);
      return {
        task: spec.task,
        settings: cellSettings(spec, cell),
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

    async create(input) {
      const spec = parseSweep(input);
      const task = await resolveTask(spec.taskId);
      const { columns } = await openDataset(spec.dataPath);
      for (const column of [spec.inputColumn, spec.goldColumn]) {
        if (column !== null && !columns.includes(column)) throw new UserError(`${spec.dataPath} has no column "${column}" (columns: ${columns.join(', ')})`, 'bad_option');
      }
      const g = spec.grid;
      return {
        name: spec.name ?? `${task.id}: n ${g.n.join(',')} · k ${g.k.join(',')} · r ${g.r.join(',')} · seeds ${g.seeds.join(',')}`,
        spec: {
          task,
          dataPath: spec.dataPath,
          mapping: { textColumn: spec.inputColumn, labelColumn: spec.goldColumn, ...(Object.keys(spec.labelMap).length > 0 ? { labelMap: spec.labelMap } : {}) },
          generatorPath: spec.generator,
          evaluatorPath: spec.evaluator,
          grid: spec.grid,
          limit: spec.limit ?? null,
          concurrency: spec.concurrency ?? 4,
          ...(spec.race ? { race: true } : {}),
        },
      };
    },

    summary: ({ spec }) => ({ taskId: spec.task.id, dataPath: spec.dataPath, generator: spec.generatorPath, evaluator: spec.evaluatorPath, grid: spec.grid }),

    // Every point over the seeds whose job is done, and what sharing saved.
    result: ({ spec }, states, status) => {
      const cells: SweepCell[] = states.flatMap(({ cell, job }) =>
        job ? [{ ...cell, done: job.status === 'done', rows: [...store.iterateRows(job.id)], runExamples: store.runExamples(job.id), elapsedMs: job.elapsedMs }] : [],
      );
      const agg = aggregateSweep({ task: spec.task, grid: spec.grid, cells, made: madeBy(states) });
      return {
        taskKind: spec.task.kind,
        limit: spec.limit,
        rows: states.find((r) => r.job)?.job?.rowsTotal ?? 0,
        jobs: jobRows(states, status),
        points: agg.points,
        sharing: agg.sharing,
        deterministic: sweepDeterministic(states.flatMap((r) => (r.job ? [r.job.deterministic] : []))),
      };
    },

    csv: (result) => sweepPointsCsv(result.points),

    price: ({ spec }, left, planner) => pricePoints(spec, left, planner),

    async plan(input, planner, { price, calibrate, format, signal }) {
      const spec = parseSweep(input);
      return planner.sweep({
        task: await resolveTask(spec.taskId),
        grid: spec.grid,
        ...parseModelPair(spec),
        data: { path: spec.dataPath, textColumn: spec.inputColumn, ...(format ? { format } : {}), ...(spec.limit !== undefined ? { limit: spec.limit } : {}) },
        ...(spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {}),
        ...(price ? { price } : {}),
        ...(calibrate ? { calibrate } : {}),
        ...(signal ? { signal } : {}),
      });
    },
  };
}

/** The planner's time for each job still to run (kind.ts price): the jobs share their evaluations. */
function pricePoints(spec: StoredSweepSpec, left: readonly CellLeft<SweepCellKey>[], planner: Planner): Promise<CellPrice[]> {
  return planner.cellSeconds({
    task: spec.task,
    data: { path: spec.dataPath, textColumn: spec.mapping.textColumn, ...(spec.limit !== null ? { limit: spec.limit } : {}) },
    concurrency: spec.concurrency,
    shareEvaluations: true,
    cells: left.map(({ cell, rowsDone, examplesMade }) => ({ ...parseModelPair({ generator: spec.generatorPath, evaluator: spec.evaluatorPath }), settings: cellSettings(spec, cell), rowsDone, examplesMade })),
  });
}

/** A job whose process died is one the sweep's resume continues: paused, as the sweep sees it. */
function pausedIfInterrupted(status: JobStatus): SweepJob['status'] {
  return status === 'interrupted' ? 'paused' : status;
}

/** The sweep's jobs, one per (n, k, seed), with their state: one never made is queued, or cancelled once the sweep has stopped for good. */
function jobRows(states: readonly CellState<SweepCellKey>[], status: ExperimentStatus): SweepJob[] {
  return states.map(({ cell, job, dropped }) => ({
    ...cell,
    jobId: job ? job.id : null,
    dropped,
    status: dropped ? 'dropped' : job ? pausedIfInterrupted(jobStatus(job)) : unmadeCellStatus(status),
    rowsDone: job?.rowsDone ?? 0,
    rowsTotal: job?.rowsTotal ?? 0,
  }));
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
