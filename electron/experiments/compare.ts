// Generator × evaluator pairing comparisons (the paper's cross-model study), on the experiments'
// one runner (experiment.ts): each pair is one evaluation job, and a comparison paused,
// stopped or killed resumes like a sweep, each pair's rows done once. Pairs run generator-major:
// the first job of a generator fills the jobs' generation cache (keyed by generator, task,
// settings, seed and input), and every later evaluator of that generator reads the same cached
// texts, so it sees byte-identical examples and paraphrases and the generator's work is done once.
// While a generator's pairs run it is held, so it stays loaded between its jobs; nothing else is
// held, so a model no job uses unloads.
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import {
  ComparisonSpec as ComparisonSpecSchema,
  type ComparisonPair,
  type ComparisonResult,
  type ComparisonSpec,
  type ComparisonSpecInput,
  type ComparisonSummary,
} from '../common/contract/comparisons';
import { toCsv } from '../jobs/export';
import { accuracyOf } from '../common/contract/jobs';
import { UserError } from '../common/errors';
import { plainZodError } from '../common/plain-errors';
import { modelLabel, parseModelSpec, type ModelSpec } from '../common/model-spec';
import type { TaskDefinition } from '../common/task';
import { openDataset, type BackendProvider, type JobInfo, type JobManager, type JobStore, type StoredExperiment, sumUsage } from '../jobs';
import { ExperimentManager, type CellState, type ExperimentDefinition, type ExperimentStatus } from './experiment';
import { resolveTask as resolveTaskFile } from '../tasks';
import { inspectModelFile } from '../models/gguf';
import { estimateFit } from '../models/hardware';

/** One pair of the grid. */
export interface PairCell {
  generator: string;
  evaluator: string;
}

/** Everything a resume needs, fixed when the comparison is created. */
export interface StoredComparisonSpec {
  /** Paths resolved, models deduplicated, the text and gold columns decided. */
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

function parseSpec(specInput: ComparisonSpecInput): ComparisonSpec {
  const parsed = ComparisonSpecSchema.safeParse(specInput);
  if (!parsed.success) throw new UserError(`invalid comparison: ${plainZodError(parsed.error, specInput)}`, 'bad_option');
  return { ...parsed.data, generators: unique(parsed.data.generators), evaluators: unique(parsed.data.evaluators), dataPath: resolve(parsed.data.dataPath) };
}

function pendingPair(p: PairCell): ComparisonPair {
  return { ...p, jobId: null, status: 'queued', rowsDone: 0, rowsTotal: 0, accuracy: null, macroF1: null, elapsedMs: 0, tokens: 0, error: null };
}

/** The plan of a comparison before anything runs: its spec checked and every pair pending. */
export function newComparisonResult(specInput: ComparisonSpecInput, id: string = randomUUID()): ComparisonResult {
  const spec = parseSpec(specInput);
  const now = Date.now();
  return { id, createdAt: now, updatedAt: now, status: 'running', spec, pairs: orderPairs(spec.generators, spec.evaluators).map(pendingPair), error: null, warnings: [], progress: { jobsDone: 0, jobsTotal: spec.generators.length * spec.evaluators.length, rowsDone: 0, rowsTotal: 0, elapsedSeconds: 0, etaSeconds: null, etaRange: null }, usage: null, budget: null, stoppedBy: null };
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

/** Warnings for models that will not fit (the jobs still try: estimates are conservative). */
async function fitWarnings(spec: ComparisonSpec): Promise<string[]> {
  const warnings: string[] = [];
  for (const model of uniqueModels([...spec.generators, ...spec.evaluators])) {
    if (model.kind !== 'gguf') continue;
    try {
      const fit = await estimateFit(model.path, { contextSize: spec.contextSize ?? 4096, sequences: spec.concurrency ?? 4 });
      if (!fit.fits && fit.warning) warnings.push(fit.warning);
    } catch {
      // An estimate is advice; the job reports real load failures.
    }
  }
  return warnings;
}

/** A comparison as the experiments' runner sees it. */
const comparisonDefinition: ExperimentDefinition<StoredComparisonSpec, PairCell> = {
  kind: 'compare',
  noun: 'comparison',
  cells: ({ spec }) => orderPairs(spec.generators, spec.evaluators),
  key: (p) => JSON.stringify([p.generator, p.evaluator]),
  describe: (p) => `${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}`,
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
  // A view reads the whole record again with each event (every pair's job read back): a few a second at most.
  publishEveryMs: 250,
};

export interface ComparisonManagerOptions {
  jobs: JobManager;
  store: JobStore;
  /** Given, each generator is held while its pairs run, so it is loaded once for all of them. */
  pool?: BackendProvider;
  /** Resolves the spec's task (id or file) when the comparison is created; default electron/tasks'. */
  resolveTask?: (idOrPath: string) => Promise<TaskDefinition>;
}

export class ComparisonManager extends ExperimentManager<StoredComparisonSpec, PairCell, ComparisonResult, ComparisonSummary> {
  private readonly jobs: JobManager;
  private readonly resolveTask: (idOrPath: string) => Promise<TaskDefinition>;
  /** Macro-F1 and tokens of a job that is not running, by job id and rows done (a finished job's rows do not change). */
  private readonly finished = new Map<string, { rowsDone: number; macroF1: number | null; tokens: number }>();

  constructor(opts: ComparisonManagerOptions) {
    super({
      jobs: opts.jobs,
      store: opts.store,
      ...(opts.pool ? { pool: opts.pool } : {}),
      definition: comparisonDefinition,
    });
    this.jobs = opts.jobs;
    this.resolveTask = opts.resolveTask ?? ((ref) => resolveTaskFile(ref));
  }

  protected view(c: StoredComparison): ComparisonResult {
    return this.recordOf(c);
  }

  /**
   * Checks the spec (settings, model files, data set, columns) and records the comparison; nothing
   * runs until `start`. Bad input is one UserError, before any job exists.
   */
  async create(specInput: ComparisonSpecInput): Promise<ComparisonResult> {
    const spec = parseSpec(specInput);
    const columns = await checkComparisonInputs(spec);
    const task = await this.resolveTask(spec.taskId);
    const decided: ComparisonSpec = { ...spec, inputColumn: columns.inputColumn, ...(columns.goldColumn !== null ? { goldColumn: columns.goldColumn } : {}) };
    const stored: StoredComparisonSpec = { spec: decided, task, warnings: await fitWarnings(spec) };
    const name = `${task.id}: ${spec.generators.length} × ${spec.evaluators.length} on ${basename(spec.dataPath)}`;
    return this.recordOf(this.runner.create(name, stored));
  }

  /** A comparison by id or unique id prefix, its pairs read from their jobs; UserError compare_unknown otherwise. */
  get(id: string): ComparisonResult {
    return this.recordOf(this.runner.find(id));
  }

  summary(id: string): ComparisonSummary {
    return this.summaryOf(this.runner.find(id));
  }

  list(): ComparisonSummary[] {
    return this.runner.list().map((c) => this.summaryOf(c));
  }

  /** CSV: one line per pair. JSON: the whole record. */
  async export(id: string, format: 'csv' | 'json', outPath: string): Promise<string> {
    const rec = this.get(id);
    await writeFile(outPath, format === 'csv' ? pairsCsv(rec.pairs) : `${JSON.stringify(rec, null, 2)}\n`);
    return outPath;
  }

  private summaryOf(c: StoredComparison): ComparisonSummary {
    const { spec } = c.spec;
    return {
      id: c.id,
      createdAt: Date.parse(c.created),
      updatedAt: Date.parse(c.updated),
      status: this.runner.status(c),
      error: c.error,
      progress: this.runner.progress(this.runner.cellStates(c), c.id),
      taskId: spec.taskId,
      dataPath: spec.dataPath,
      generators: spec.generators,
      evaluators: spec.evaluators,
    };
  }

  private recordOf(c: StoredComparison): ComparisonResult {
    const status = this.runner.status(c);
    const states = this.runner.cellStates(c);
    return {
      id: c.id,
      createdAt: Date.parse(c.created),
      updatedAt: Date.parse(c.updated),
      status,
      spec: c.spec.spec,
      pairs: states.map((s) => this.pairOf(c, s, status)),
      error: c.error,
      warnings: c.spec.warnings,
      progress: this.runner.progress(states, c.id),
      usage: sumUsage(states.flatMap((st) => (st.job ? [st.job.usage] : []))),
      budget: c.budget ? { kind: c.budget.kind, limit: c.budget.limit } : null,
      stoppedBy: status === 'paused' ? c.stoppedBy : null,
    };
  }

  private pairOf(c: StoredComparison, { cell, job }: CellState<PairCell>, status: ExperimentStatus): ComparisonPair {
    if (!job) {
      const error = this.runner.cellError(c.id, cell);
      if (error !== null) return { ...pendingPair(cell), status: 'failed', error };
      // Never started, and the comparison has stopped for good.
      return { ...pendingPair(cell), status: status === 'cancelled' || status === 'failed' ? 'cancelled' : 'queued' };
    }
    const running = job.status === 'running' && !job.interrupted;
    const scores = running ? null : this.scores(job);
    return {
      ...cell,
      jobId: job.id,
      status: pairStatus(job),
      rowsDone: job.rowsDone,
      rowsTotal: job.rowsTotal,
      accuracy: accuracyOf(job.rowsCorrect, job.rowsWithGold),
      macroF1: scores?.macroF1 ?? null,
      elapsedMs: job.elapsedMs,
      tokens: scores?.tokens ?? 0,
      error: job.status === 'failed' ? (job.error ?? 'the job failed') : null,
    };
  }

  private scores(job: JobInfo): { macroF1: number | null; tokens: number } {
    const hit = this.finished.get(job.id);
    if (hit && hit.rowsDone === job.rowsDone) return hit;
    const value = { rowsDone: job.rowsDone, macroF1: this.jobs.metrics(job.id).macroF1, tokens: job.usage.tokens.prompt + job.usage.tokens.completion };
    this.finished.set(job.id, value);
    return value;
  }
}

function pairStatus(job: JobInfo): ComparisonPair['status'] {
  return job.interrupted ? 'paused' : job.status;
}

const PAIR_COLUMNS = ['generator', 'evaluator', 'status', 'rowsDone', 'rowsTotal', 'accuracy', 'macroF1', 'elapsedMs', 'tokens', 'error'] as const;

/** One line per pair, with the same CSV writer as the job exports (RFC 4180, CRLF, formula escaping). */
export function pairsCsv(pairs: readonly ComparisonPair[]): string {
  return toCsv([...PAIR_COLUMNS]) + pairs.map((p) => toCsv(PAIR_COLUMNS.map((c) => (p[c] === null ? '' : String(p[c]))))).join('');
}
