// Generator × evaluator pairing comparisons (the paper's cross-model study) as one kind of
// experiment (kind.ts) on the experiments' one runner (experiment.ts): each pair is one evaluation
// job, and a comparison paused, stopped or killed resumes like a sweep, each pair's rows done once.
// Pairs run generator-major: the first job of a generator fills the jobs' generation cache (keyed
// by generator, task, settings, seed and input), and every later evaluator of that generator reads
// the same cached texts, so it sees byte-identical examples and paraphrases and the generator's
// work is done once. While a generator's pairs run it is held, so it stays loaded between its
// jobs; nothing else is held, so a model no job uses unloads. A raced comparison runs every pair
// again each round, so its runner holds both models of every pair still in (holds.ts).
import { basename, resolve } from 'node:path';
import { ComparisonSpec as ComparisonSpecSchema, type ComparisonPair, type ComparisonSpec } from '../common/contract/comparisons';
import { accuracyOf } from '../common/contract/jobs';
import type { Interval } from '../common/contract/interval';
import { UserError } from '../common/errors';
import { plainZodError } from '../common/plain-errors';
import { checkRowsInFlight } from '../common/settings';
import { modelLabel, parseModelPair, parseModelSpec, type ModelSpec } from '../common/model-spec';
import type { TaskDefinition } from '../common/task';
import { openDataset } from '../jobs/dataset';
import { toCsv } from '../jobs/export';
import type { StoredExperiment } from '../jobs/experiment-store';
import type { JobManager } from '../jobs/manager';
import type { JobInfo } from '../jobs/types';
import { inspectModelFile } from '../models/gguf';
import { estimateFit } from '../models/hardware';
import { PAIR_STATS_COLUMNS, pairStatsCells, pairsVersusBest, type PairScores } from './compare-stats';
import { unmadeCellStatus, type CellLeft, type CellPrice, type CellState, type ExperimentKindDefinition, type ExperimentStatus } from './kind';
import type { Planner } from '../jobs/planner';

/** One pair of the grid. */
export interface PairCell {
  generator: string;
  evaluator: string;
}

/** Everything a resume needs, fixed when the comparison is created. */
export interface StoredComparisonSpec {
  /** Paths resolved, models deduplicated, the input and gold columns decided. */
  spec: ComparisonSpec;
  /** The task as it was resolved at creation (absent in comparisons recorded before schema v6: resolved by `spec.taskId` then). */
  task?: TaskDefinition;
  /** Said before anything loaded: models whose estimated memory does not fit this machine. */
  warnings: string[];
}

export type StoredComparison = StoredExperiment<StoredComparisonSpec>;

/**
 * Generator-major order of all (generator, evaluator) pairs. Within a generator its own file comes
 * first as evaluator (one loaded copy serves both), so the cache is filled by the cheapest job.
 */
export function orderPairs(generators: readonly string[], evaluators: readonly string[]): PairCell[] {
  const out: PairCell[] = [];
  for (const g of generators) {
    const evs = [...evaluators].sort((a, b) => Number(b === g) - Number(a === g));
    for (const e of evs) out.push({ generator: g, evaluator: e });
  }
  return out;
}

/** The models once each: a GGUF by its absolute path, a remote model (`remote:NAME`, `openai+…#MODEL`) as written. */
function uniqueModels(paths: readonly string[]): ModelSpec[] {
  const models = new Map(paths.map((p) => parseModelSpec(p, { resolvePath: resolve })).map((m) => [m.text, m]));
  return [...models.values()];
}

function unique(paths: readonly string[]): string[] {
  return uniqueModels(paths).map((m) => m.text);
}

/** A comparison's spec checked, its models deduplicated and its paths resolved, as its jobs will name them. */
export function comparisonSpec(input: unknown): ComparisonSpec {
  const parsed = ComparisonSpecSchema.safeParse(input);
  if (!parsed.success) throw new UserError(`invalid comparison: ${plainZodError(parsed.error, input)}`, 'bad_option');
  const spec = parsed.data;
  // Every pair's job runs at the comparison's concurrency: refused here, before any of them fails on it.
  if (spec.concurrency !== undefined) checkRowsInFlight(spec.concurrency, uniqueModels([...spec.generators, ...spec.evaluators]));
  return { ...spec, generators: unique(spec.generators), evaluators: unique(spec.evaluators), dataPath: resolve(spec.dataPath) };
}

/** What a pair says of its uncertainty before anything is scored (compare-stats.ts fills it in). */
const UNSCORED = { accuracyInterval: null, best: false, versusBest: null, adjustedP: null, tiedForBest: false } as const;

/** A pair before its job exists. */
export function pendingPair(p: PairCell): ComparisonPair {
  return { ...p, jobId: null, status: 'queued', rowsDone: 0, rowsTotal: 0, accuracy: null, macroF1: null, macroF1Interval: null, elapsedMs: 0, tokens: 0, error: null, dropped: null, ...UNSCORED };
}

/**
 * Fails fast, before any job exists, on anything the user can fix: a model file that is not a
 * complete GGUF, a data set that cannot be read, a column that is not there. Returns the columns.
 */
export async function checkComparisonInputs(spec: ComparisonSpec): Promise<{ inputColumn: string; goldColumn: string | null }> {
  // Remote models are probed when their jobs are created; a malformed spec fails here.
  for (const model of uniqueModels([...spec.generators, ...spec.evaluators])) {
    if (model.kind === 'gguf') await inspectModelFile(model.path);
  }
  const ds = await openDataset(spec.dataPath);
  const inputColumn = spec.inputColumn ?? ds.suggestedTextColumn;
  if (!inputColumn) throw new UserError(`which column of ${spec.dataPath} holds the text? pass a text column (columns: ${ds.columns.join(', ')})`, 'bad_option');
  const goldColumn = spec.goldColumn ?? ds.suggestedLabelColumn ?? null;
  for (const column of [inputColumn, goldColumn]) {
    if (column !== null && !ds.columns.includes(column)) throw new UserError(`${spec.dataPath} has no column "${column}" (columns: ${ds.columns.join(', ')})`, 'bad_option');
  }
  return { inputColumn, goldColumn };
}

/**
 * Warnings for models that will not fit (the jobs still try: estimates are conservative). Starting
 * a comparison waits for them, so the models are estimated side by side: most of an estimate is
 * node-llama-cpp simulating the context off the main thread (2 models: 0.7 s instead of 1.3).
 */
async function fitWarnings(spec: ComparisonSpec): Promise<string[]> {
  const local = uniqueModels([...spec.generators, ...spec.evaluators]).flatMap((m) => (m.kind === 'gguf' ? [m.path] : []));
  const warnings = await Promise.all(
    local.map((path) =>
      estimateFit(path, { contextSize: spec.contextSize ?? 4096, sequences: spec.concurrency ?? 4 }).then(
        (fit) => (!fit.fits && fit.warning ? fit.warning : null),
        // An estimate is advice: one that fails says so and the comparison starts (its job reports a
        // file that cannot load, in its own words).
        (e: unknown) => `could not estimate whether ${basename(path)} fits: ${e instanceof Error ? e.message : String(e)}`,
      ),
    ),
  );
  return warnings.filter((w): w is string => w !== null);
}

/** A comparison, for the runner, the manager and the planner. */
export function comparisonKind(opts: { jobs: JobManager; resolveTask(idOrPath: string): Promise<TaskDefinition> }): ExperimentKindDefinition<'compare', StoredComparisonSpec, PairCell> {
  const { jobs, resolveTask } = opts;
  /** Macro-F1 and tokens of a job that is not running, by job id and rows done (a finished job's rows do not change). */
  const finished = new Map<string, { rowsDone: number; macroF1: number | null; macroF1Interval: Interval | null; tokens: number }>();
  const scores = (job: JobInfo): { macroF1: number | null; macroF1Interval: Interval | null; tokens: number } => {
    const hit = finished.get(job.id);
    if (hit && hit.rowsDone === job.rowsDone) return hit;
    const m = jobs.metrics(job.id);
    const value = { rowsDone: job.rowsDone, macroF1: m.macroF1, macroF1Interval: m.intervals?.macroF1 ?? null, tokens: job.usage.tokens.prompt + job.usage.tokens.completion };
    finished.set(job.id, value);
    return value;
  };
  const pairOf = ({ cell, job, error, dropped }: CellState<PairCell>, status: ExperimentStatus): PairScores => {
    if (!job) {
      if (error !== null) return { ...pendingPair(cell), status: 'failed', error };
      return { ...pendingPair(cell), status: unmadeCellStatus(status) };
    }
    const running = job.status === 'running' && !job.interrupted;
    const scored = running ? null : scores(job);
    return {
      ...cell,
      jobId: job.id,
      status: dropped ? 'dropped' : job.interrupted ? 'paused' : job.status,
      rowsDone: job.rowsDone,
      rowsTotal: job.rowsTotal,
      accuracy: accuracyOf(job.rowsCorrect, job.rowsWithGold),
      macroF1: scored?.macroF1 ?? null,
      macroF1Interval: scored?.macroF1Interval ?? null,
      elapsedMs: job.elapsedMs,
      tokens: scored?.tokens ?? 0,
      error: job.status === 'failed' ? (job.error ?? 'the job failed') : null,
      dropped,
    };
  };
  return {
    kind: 'compare',
    noun: 'comparison',
    cells: ({ spec }) => orderPairs(spec.generators, spec.evaluators),
    key: (p) => JSON.stringify([p.generator, p.evaluator]),
    describe: (p) => `${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}`,
    raced: ({ spec }) => spec.race === true,
    entrant: (p) => ({ key: JSON.stringify([p.generator, p.evaluator]), name: `${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}` }),
    models: (_spec, pair) => pair,
    job: async ({ id, spec: stored }, pair) => {
      const { spec } = stored;
      // Comparisons recorded before schema v6 left the columns to be guessed when they ran: guess them alike.
      const { inputColumn, goldColumn } = spec.inputColumn !== undefined ? { inputColumn: spec.inputColumn, goldColumn: spec.goldColumn ?? null } : await checkComparisonInputs(spec);
      return {
        task: stored.task ?? spec.taskId,
        settings: spec.settings,
        generatorPath: pair.generator,
        evaluatorPath: pair.evaluator,
        dataset: { path: spec.dataPath, mapping: { textColumn: inputColumn, labelColumn: goldColumn, ...(spec.labelMap ? { labelMap: spec.labelMap } : {}) } },
        ...(spec.limit !== undefined ? { limit: spec.limit } : {}),
        ...(spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {}),
        name: `compare ${id.slice(0, 8)}: ${modelLabel(pair.generator)} → ${modelLabel(pair.evaluator)}`,
      };
    },
    // The generator stays loaded for all its pairs; evaluators load with their jobs.
    hold: (_spec, pair) => [pair.generator],
    concurrency: ({ spec }) => spec.concurrency ?? 4,
    // A pair that fails is recorded with its error; the other pairs still count.
    onJobFailed: 'continue',
    // A view reads the whole result again with each event (every pair's job read back): a few a second at most.
    publishEveryMs: 250,

    async create(input) {
      const spec = comparisonSpec(input);
      const columns = await checkComparisonInputs(spec);
      const task = await resolveTask(spec.taskId);
      const decided: ComparisonSpec = { ...spec, inputColumn: columns.inputColumn, ...(columns.goldColumn !== null ? { goldColumn: columns.goldColumn } : {}) };
      return { name: `${task.id}: ${spec.generators.length} × ${spec.evaluators.length} on ${basename(spec.dataPath)}`, spec: { spec: decided, task, warnings: await fitWarnings(spec) } };
    },

    summary: ({ spec: { spec } }) => ({ taskId: spec.taskId, dataPath: spec.dataPath, generators: spec.generators, evaluators: spec.evaluators }),

    result: ({ id, spec }, states, status) => ({ spec: spec.spec, pairs: pairsVersusBest(id, states.map((s) => pairOf(s, status)), (jobId) => jobs.outcomes(jobId)), warnings: spec.warnings }),

    csv: (result) => pairsCsv(result.pairs),

    price: ({ spec }, left, planner) => pricePairs(spec, left, planner, resolveTask),

    // Its pairs and paths as its jobs will name them (their cache keys hold them), and the columns
    // checked as creating it checks them: a data set without the text column is refused in the
    // same words, never planned on a guessed column.
    async plan(input, planner, { price, calibrate, signal }) {
      const spec = comparisonSpec(input);
      const { inputColumn } = await checkComparisonInputs(spec);
      return planner.compare({
        task: await resolveTask(spec.taskId),
        settings: spec.settings,
        pairs: orderPairs(spec.generators, spec.evaluators).map(parseModelPair),
        data: { path: spec.dataPath, textColumn: inputColumn, ...(spec.limit !== undefined ? { limit: spec.limit } : {}) },
        ...(price ? { price } : {}),
        ...(calibrate ? { calibrate } : {}),
        ...(signal ? { signal } : {}),
      });
    },
  };
}

/** The planner's time for each pair still to run (kind.ts price). */
async function pricePairs(stored: StoredComparisonSpec, left: readonly CellLeft<PairCell>[], planner: Planner, resolveTask: (idOrPath: string) => Promise<TaskDefinition>): Promise<CellPrice[]> {
  const { spec } = stored;
  const { inputColumn } = spec.inputColumn !== undefined ? { inputColumn: spec.inputColumn } : await checkComparisonInputs(spec);
  return planner.cellSeconds({
    task: stored.task ?? (await resolveTask(spec.taskId)),
    data: { path: spec.dataPath, textColumn: inputColumn, ...(spec.limit !== undefined ? { limit: spec.limit } : {}) },
    ...(spec.concurrency !== undefined ? { concurrency: spec.concurrency } : {}),
    cells: left.map(({ cell, rowsDone, examplesMade }) => ({ ...parseModelPair(cell), settings: spec.settings, rowsDone, examplesMade })),
  });
}

const PAIR_COLUMNS = ['generator', 'evaluator', 'status', 'rowsDone', 'rowsTotal', 'accuracy', 'macroF1', 'elapsedMs', 'tokens', 'error'] as const;

/** One line per pair, with the same CSV writer as the job exports (RFC 4180, CRLF, formula escaping), and its statistics (compare-stats.ts pairsCsvStats). */
export function pairsCsv(pairs: readonly ComparisonPair[]): string {
  return (
    toCsv([...PAIR_COLUMNS, ...PAIR_STATS_COLUMNS]) +
    pairs.map((p) => toCsv([...PAIR_COLUMNS.map((c) => (p[c] === null ? '' : String(p[c]))), ...pairStatsCells(p)])).join('')
  );
}
