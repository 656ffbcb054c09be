// The one place plans are made for every face (the CLI's --dry-run, the app's plan beside Start):
// it reads the rows a run would read, opens the models' tokenizers (never the weights), and picks
// what the plan rests on: the last job on the same models, or a calibration, else assumptions.
import { UserError } from '../common/errors';
import type { CostPlan, Price } from '../common/plan';
import type { TaskDefinition } from '../common/task';
import type { TatraSettings } from '../common/tatra';
import { classify, MemoryGenerationCache } from '../engine';
import { withHeldModels } from '../hold/classify';
import { PlanModels } from '../hold/plan-models';
import type { RemoteLookup } from '../remote';
import { readDataset } from './dataset';
import {
  assumedLengths,
  calibrationKey,
  jobThroughput,
  jobsOn,
  measuredLengths,
  planClassify,
  planCompare,
  planJob,
  planSweep,
  readCalibration,
  writeCalibration,
  type LengthsBasis,
  type PlanInputs,
  type PlanModelInfo,
  type Throughput,
} from './plan';
import { SqliteGenerationCache, type JobStore } from './store';
import type { BackendProvider, DatasetFormat } from './types';

export interface PlannerOptions {
  store: JobStore;
  dataDir: string;
  /** Remote entries (`remote:NAME`) and their prices. */
  lookup?: RemoteLookup;
  /** Context per sequence the run will load models with (paraphrase room, example room). */
  contextSize?: number;
  /** CPU threads the run will use: part of a calibration's identity. */
  threads?: number;
}

/** The data a plan reads: the same file, columns and limit a job would. */
export interface PlanData {
  path: string;
  textColumn: string;
  format?: DatasetFormat;
  allowRagged?: boolean;
  limit?: number;
}

export interface PlanCommon {
  task: TaskDefinition;
  /** Prices every model of the run (--price-in/--price-out). */
  price?: Price;
  /** Measure speed now (loads the models and classifies a row or two); needs `pool`. */
  calibrate?: { pool: BackendProvider; concurrency?: number | undefined };
  signal?: AbortSignal;
}

export class Planner {
  private readonly models: PlanModels;

  constructor(private readonly opts: PlannerOptions) {
    this.models = new PlanModels({ ...(opts.lookup ? { lookup: opts.lookup } : {}), ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}) });
  }

  async dispose(): Promise<void> {
    await this.models.dispose();
  }

  /** One input through classify. */
  async classify(p: PlanCommon & { settings: TatraSettings; generator: string; evaluator: string; input: string }): Promise<CostPlan> {
    const inputs = await this.inputs(p, p.generator, p.evaluator, [p.input], p.settings, 1);
    // classify runs on a fresh memory cache: nothing cached counts.
    const { cache: _cache, ...rest } = inputs;
    return planClassify({ ...rest, settings: p.settings, input: p.input });
  }

  /** A new evaluation job. */
  async eval(p: PlanCommon & { settings: TatraSettings; generator: string; evaluator: string; data: PlanData; baseline?: boolean; concurrency?: number }): Promise<CostPlan> {
    const rows = await this.readInputs(p.data, p.signal);
    const inputs = await this.inputs(p, p.generator, p.evaluator, rows, p.settings, p.concurrency ?? 4);
    return (await planJob({ ...inputs, settings: p.settings, inputs: rows, ...(p.baseline ? { baseline: true } : {}) })).plan;
  }

  /** A new sweep over a grid (one job per (n, k, seed) at the largest r). */
  async sweep(p: PlanCommon & { grid: { n: number[]; k: number[]; r: number[]; seeds: number[] }; generator: string; evaluator: string; data: PlanData; concurrency?: number }): Promise<CostPlan> {
    const rows = await this.readInputs(p.data, p.signal);
    const rMax = Math.max(...p.grid.r);
    const first: TatraSettings = { n: p.grid.n[0]!, k: p.grid.k[0]!, r: rMax, seed: p.grid.seeds[0]!, scope: 'run' };
    const inputs = await this.inputs(p, p.generator, p.evaluator, rows, first, p.concurrency ?? 4);
    return planSweep({ ...inputs, grid: p.grid, inputs: rows });
  }

  /** A comparison of generator × evaluator pairs. */
  async compare(p: PlanCommon & { settings: TatraSettings; generators: string[]; evaluators: string[]; pairs: { generator: string; evaluator: string }[]; data: PlanData; concurrency?: number }): Promise<CostPlan> {
    const rows = await this.readInputs(p.data, p.signal);
    const pairs = await Promise.all(p.pairs.map(async (x) => ({ generator: await this.model(x.generator), evaluator: await this.model(x.evaluator) })));
    const first = p.pairs[0]!;
    const inputs = await this.inputs(p, first.generator, first.evaluator, rows, p.settings, p.concurrency ?? 4);
    return planCompare({ ...inputs, settings: p.settings, pairs, inputs: rows });
  }

  private async model(spec: string): Promise<PlanModelInfo> {
    try {
      return await this.models.get(spec);
    } catch (e) {
      if (e instanceof UserError) throw e;
      throw new UserError(`cannot plan with ${spec}: ${e instanceof Error ? e.message : String(e)}`, 'model_missing');
    }
  }

  /** The rows' inputs a job would read (empty inputs skipped, the limit applied). */
  private async readInputs(data: PlanData, signal?: AbortSignal): Promise<string[]> {
    const rows: string[] = [];
    const reader = readDataset(data.path, { textColumn: data.textColumn, labelColumn: null }, { ...(data.format ? { format: data.format } : {}), ...(data.allowRagged ? { allowRagged: true } : {}), ...(signal ? { signal } : {}) });
    for await (const row of reader) {
      rows.push(row.input);
      if (data.limit !== undefined && rows.length >= data.limit) break;
    }
    if (rows.length === 0) throw new UserError(`${data.path} has no rows with a non-empty "${data.textColumn}"`, 'dataset_empty');
    return rows;
  }

  /** Models, lengths and speed for a plan on (generator, evaluator). */
  private async inputs(p: PlanCommon, generatorSpec: string, evaluatorSpec: string, rows: readonly string[], settings: TatraSettings, concurrency: number): Promise<PlanInputs> {
    const [generator, evaluator] = await Promise.all([this.model(generatorSpec), this.model(evaluatorSpec)]);
    const { store } = this.opts;
    const recent = jobsOn(store, p.task.id, generatorSpec, evaluatorSpec);
    const last = recent[0] ?? null;
    const lengths: LengthsBasis = measuredLengths(store, recent, assumedLengths(p.task, evaluator));
    const key = calibrationKey(generator.id, evaluator.id, this.opts.threads, concurrency);
    let throughput: Throughput | null = null;
    if (p.calibrate) throughput = await this.calibrate(p, generatorSpec, evaluatorSpec, rows, settings, key);
    else throughput = (last ? jobThroughput(store, last) : null) ?? (await readCalibration(this.opts.dataDir, key));
    return { task: p.task, generator, evaluator, lengths, throughput, ...(p.price ? { price: p.price } : {}), cache: new SqliteGenerationCache(store) };
  }

  /**
   * A short calibration: the first rows (as many as run at once, two at most) classified with
   * these settings but one run, on the models loaded as the run will load them, timed; kept in
   * the data folder so later plans on the same models use it.
   */
  private async calibrate(p: PlanCommon, generatorSpec: string, evaluatorSpec: string, rows: readonly string[], settings: TatraSettings, key: string): Promise<Throughput | null> {
    const { pool } = p.calibrate!;
    const concurrency = p.calibrate!.concurrency ?? 4;
    const signal = p.signal;
    const sample = rows.slice(0, Math.max(1, Math.min(2, concurrency)));
    const one: TatraSettings = { ...settings, r: 1, earlyStop: false };
    const { tokens, seconds } = await withHeldModels(pool, { generator: generatorSpec, evaluator: evaluatorSpec, ...(signal ? { signal } : {}) }, async (generator, evaluator) => {
      const t0 = performance.now();
      const results = await Promise.all(sample.map((input) => classify({ task: p.task, input, settings: one, generator, evaluator, cache: new MemoryGenerationCache(), ...(signal ? { signal } : {}) })));
      return { seconds: (performance.now() - t0) / 1000, tokens: results.reduce((a, r) => a + Object.values(r.stages).reduce((b, st) => b + st.promptTokens + st.completionTokens, 0), 0) };
    });
    return writeCalibration(this.opts.dataDir, key, tokens, seconds);
  }
}
