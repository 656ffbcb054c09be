// The one place plans are made for every face (the CLI's --dry-run, the app's plan beside Start):
// it reads the rows a run would read, opens the models' tokenizers (never the weights), and picks
// what the plan rests on: the last job on the same models, or a calibration, else assumptions.
import { UserError } from '../common/errors';
import type { ModelSpec } from '../common/model-spec';
import type { CostPlan, CountRange, Price } from '../common/plan';
import type { TaskDefinition } from '../common/task';
import type { StageName, StageStats, TatraResult } from '../common/tatra';
import type { TatraSettings } from '../common/tatra';
import { defaultRowsInFlight } from '../common/settings';
import { classify, MemoryGenerationCache } from '../engine';
import { withHeldModels } from '../hold/classify';
import { PlanModels } from '../hold/plan-models';
import type { RemoteLookup } from '../remote';
import { readDataset } from './dataset';
import { fitCallCost, fitLoadedCost, fitSlots, type CallCost } from './plan-time';
import {
  assumedLengths,
  calibrationKey,
  jobThroughput,
  jobsOn,
  measuredLengths,
  planClassify,
  planCellSeconds,
  planCompare,
  planJob,
  planSweep,
  readCalibration,
  writeCalibration,
  type CellToPrice,
  type LengthsBasis,
  type PlanInputs,
  type PlanModelInfo,
  type Throughput,
} from './plan';
import { SqliteGenerationCache, type JobStore } from './store';
import { planPower } from './plan-power';
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
  /** Measure speed now (loads the models, times a few calls alone and rows at full load); needs `pool`. */
  calibrate?: { pool: BackendProvider };
  /** Stops the plan: reading the file, a calibration, and the walk over the rows (plan.ts). */
  signal?: AbortSignal;
}

/** Rows a calibration classifies at once to measure the backend at full load, at most. */
const CALIBRATION_LOAD_ROWS = 48;

export class Planner {
  private readonly models: PlanModels;

  constructor(private readonly opts: PlannerOptions) {
    this.models = new PlanModels({ ...(opts.lookup ? { lookup: opts.lookup } : {}), ...(opts.contextSize !== undefined ? { contextSize: opts.contextSize } : {}) });
  }

  async dispose(): Promise<void> {
    await this.models.dispose();
  }

  /** One input through classify. */
  async classify(p: PlanCommon & { settings: TatraSettings; generator: ModelSpec; evaluator: ModelSpec; input: string }): Promise<CostPlan> {
    const inputs = await this.inputs(p, p.generator, p.evaluator, [p.input], p.settings, 1);
    // classify runs on a fresh memory cache: nothing cached counts.
    const { cache: _cache, ...rest } = inputs;
    return planClassify({ ...rest, settings: p.settings, input: p.input });
  }

  /** A new evaluation job. */
  async eval(p: PlanCommon & { settings: TatraSettings; generator: ModelSpec; evaluator: ModelSpec; data: PlanData; baseline?: boolean; concurrency?: number }): Promise<CostPlan> {
    const rows = await this.readInputs(p.data, p.signal);
    const inputs = await this.inputs(p, p.generator, p.evaluator, rows, p.settings, p.concurrency ?? defaultRowsInFlight(p.generator, p.evaluator));
    const plan = (await planJob({ ...inputs, settings: p.settings, inputs: rows, ...(p.baseline ? { baseline: true } : {}) })).plan;
    return { ...plan, power: planPower(this.opts.store, p.data.path, rows.length) };
  }

  /** A new sweep over a grid (one job per (n, k, seed) at the largest r). */
  async sweep(p: PlanCommon & { grid: { n: number[]; k: number[]; r: number[]; seeds: number[] }; generator: ModelSpec; evaluator: ModelSpec; data: PlanData; concurrency?: number }): Promise<CostPlan> {
    const rows = await this.readInputs(p.data, p.signal);
    const rMax = Math.max(...p.grid.r);
    const first: TatraSettings = { n: p.grid.n[0]!, k: p.grid.k[0]!, r: rMax, seed: p.grid.seeds[0]!, scope: 'run' };
    const inputs = await this.inputs(p, p.generator, p.evaluator, rows, first, p.concurrency ?? defaultRowsInFlight(p.generator, p.evaluator));
    return { ...(await planSweep({ ...inputs, grid: p.grid, inputs: rows })), power: planPower(this.opts.store, p.data.path, rows.length) };
  }

  /** A comparison of generator × evaluator pairs, each priced at its own models' speed and lengths. */
  async compare(p: PlanCommon & { settings: TatraSettings; pairs: { generator: ModelSpec; evaluator: ModelSpec }[]; data: PlanData; concurrency?: number }): Promise<CostPlan> {
    const rows = await this.readInputs(p.data, p.signal);
    const pairs: PlanInputs[] = [];
    for (const x of p.pairs) pairs.push(await this.inputs(p, x.generator, x.evaluator, rows, p.settings, p.concurrency ?? defaultRowsInFlight(x.generator, x.evaluator)));
    return { ...(await planCompare({ settings: p.settings, pairs, inputs: rows, ...(p.price ? { price: p.price } : {}), ...(p.signal ? { signal: p.signal } : {}) })), power: planPower(this.opts.store, p.data.path, rows.length) };
  }

  /**
   * Each cell of an experiment still to run, in run order, priced as its kind's plan prices it
   * (plan.ts planCellSeconds), each on its own models' speed: an experiment's time left
   * (experiments/experiment-eta.ts). `rowsDone`: rows its job has finished (the plan counts the
   * rest); `examplesMade`: runs whose examples its job has made. Returns the seconds (null where
   * nothing measured its models' speed) and the rows priced.
   */
  async cellSeconds(p: {
    task: TaskDefinition;
    data: PlanData;
    concurrency?: number;
    shareEvaluations?: boolean;
    cells: readonly { generator: ModelSpec; evaluator: ModelSpec; settings: TatraSettings; rowsDone: number; examplesMade: readonly number[] }[];
  }): Promise<{ seconds: CountRange | null; rows: number }[]> {
    const rows = await this.readInputs(p.data);
    // Each pair of models once: their speed and lengths are read (a calibration, the last job) once.
    const byModels = new Map<string, Promise<PlanInputs>>();
    const inputsOf = (c: (typeof p.cells)[number]) => {
      const key = JSON.stringify([c.generator.text, c.evaluator.text]);
      if (!byModels.has(key)) byModels.set(key, this.inputs({ task: p.task }, c.generator, c.evaluator, rows, c.settings, p.concurrency ?? defaultRowsInFlight(c.generator, c.evaluator)));
      return byModels.get(key)!;
    };
    const cells: CellToPrice[] = [];
    for (const c of p.cells) cells.push({ inputs: await inputsOf(c), settings: c.settings, rows: rows.slice(c.rowsDone), examplesMade: c.examplesMade, shareEvaluations: p.shareEvaluations === true });
    const seconds = await planCellSeconds(cells);
    return cells.map((c, i) => ({ seconds: seconds[i]!, rows: c.rows.length }));
  }

  private async model(spec: ModelSpec): Promise<PlanModelInfo> {
    try {
      return await this.models.get(spec);
    } catch (e) {
      if (e instanceof UserError) throw e;
      throw new UserError(`cannot plan with ${spec.text}: ${e instanceof Error ? e.message : String(e)}`, 'model_missing');
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
  private async inputs(p: PlanCommon, generatorSpec: ModelSpec, evaluatorSpec: ModelSpec, rows: readonly string[], settings: TatraSettings, concurrency: number): Promise<PlanInputs> {
    const [generator, evaluator] = await Promise.all([this.model(generatorSpec), this.model(evaluatorSpec)]);
    const { store } = this.opts;
    const recent = jobsOn(store, p.task.id, generatorSpec.text, evaluatorSpec.text);
    const last = recent[0] ?? null;
    const key = calibrationKey(generator.id, evaluator.id, this.opts.threads, concurrency);
    // A new calibration is the plan's speed; otherwise the last job's, else the kept calibration's
    // (read only then: a damaged file does not stand in the way of a plan from a job).
    const fromJob = !p.calibrate && last ? jobThroughput(store, last) : null;
    const calibration = p.calibrate ? await this.calibrate(p, generator, generatorSpec, evaluatorSpec, rows, settings, key, concurrency) : fromJob ? null : await readCalibration(this.opts.dataDir, key);
    const throughput: Throughput | null = fromJob ?? calibration;
    // A job's measured lengths first; else the calibration's paraphrase lengths, when it kept them.
    const lengths: LengthsBasis = measuredLengths(store, recent, assumedLengths(p.task, evaluator, calibration?.paraphraseRatio));
    return { task: p.task, generator, evaluator, lengths, throughput, inFlight: concurrency, ...(p.price ? { price: p.price } : {}), ...(p.signal ? { signal: p.signal } : {}), cache: new SqliteGenerationCache(store) };
  }

  /**
   * A calibration on the models loaded as the run will load them, with the run's n and k
   * (plan-time.ts says what it measures and why): a first row makes the examples and warms the
   * evaluator's prefix (not timed); then, with those examples, an evaluation alone (n = 0) and two
   * paraphrase calls alone (one line and n), timed, give an evaluation's and a generator call's
   * fixed costs and the cost per generated token; then as many rows at once (one run each) as the
   * job will have runs in flight, two a row at least (at most CALIBRATION_LOAD_ROWS), kept in
   * flight over up to three times as many rows, give how many calls the backend serves at once and
   * its paraphrases' length against their inputs; the same rows again with one line and with none
   * give what a generator call, a token and an evaluation cost at full load. Kept in the data
   * folder so later plans on the same models use it.
   */
  private async calibrate(p: PlanCommon, planned: PlanModelInfo, generatorSpec: ModelSpec, evaluatorSpec: ModelSpec, rows: readonly string[], settings: TatraSettings, key: string, concurrency: number): Promise<Throughput | null> {
    const { pool } = p.calibrate!;
    const signal = p.signal;
    const one: TatraSettings = { ...settings, r: 1, earlyStop: false };
    // Cycled when the data set is short (a repeated input's paraphrases then come from the cache).
    const input = (i: number) => rows[i % rows.length]!;
    // Runs in flight as a job of two runs or more keeps them (each row keeps its r runs in flight):
    // more than the in-process model has sequences, so a sequence whose run is between calls has
    // another's call to decode. Measured at one run a sequence, the plans of the r = 2 jobs came
    // out 20 % long.
    const loadRows = Math.max(1, Math.min(CALIBRATION_LOAD_ROWS, concurrency * Math.max(2, settings.r)));
    return withHeldModels(pool, { generator: generatorSpec, evaluator: evaluatorSpec, ...(signal ? { signal } : {}) }, async (generator, evaluator) => {
      // The examples are made once (the first row) and then come from this cache, as in a job.
      const cache = new MemoryGenerationCache();
      const run = (i: number, s: TatraSettings) => classify({ task: p.task, input: input(i), settings: s, generator, evaluator, cache, ...(signal ? { signal } : {}) });
      await run(0, one);
      const alone = await run(1, { ...one, n: 0 });
      const timed = (st: StageStats) => ({ seconds: st.ms / 1000, completion: st.calls > 0 ? st.completionTokens / st.calls : 0 });
      const evaluation = timed(alone.stages.evaluation);
      let cost: Omit<CallCost, 'slots'> = fitCallCost(evaluation, evaluation);
      if (settings.n > 0) {
        // Two paraphrase calls of one input, one line and n (two for n = 1): a generator call's
        // fixed cost (its prompt, all new, where an evaluation's is mostly the examples the
        // backend holds) apart from its tokens. Fitted against an evaluation instead, that
        // prompt's cost went into every generated token.
        const short = timed((await run(2, { ...one, n: 1 })).stages.paraphrases);
        const long = timed((await run(2, { ...one, n: Math.max(2, settings.n) })).stages.paraphrases);
        const generator = fitCallCost(short, long);
        if (generator.perToken > 0) cost = { perCall: Math.max(0, evaluation.seconds - generator.perToken * evaluation.completion), perToken: generator.perToken, perGeneratorCall: generator.perCall };
        else cost = fitCallCost(evaluation, short);
      }
      // A full-load run keeps loadRows rows in flight over three times as many rows (fewer when
      // the data has fewer inputs left, never one twice: its paraphrases would come from the
      // cache), as a job keeps its rows in flight: one wave alone spent much of its time in its
      // tail, its last rows' long calls alone (on the tiny model its four paraphrase calls ended
      // between 1.0 and 1.7 s of a 1.8 s run), and twice as many rows still ran a fifth slower a
      // row than the job of 160 rows it planned; three times, as fast.
      const loadTotal = Math.max(loadRows, Math.min(3 * loadRows, rows.length - 3));
      const loadRun = async (n: number) => {
        const results: TatraResult[] = [];
        const loadInputs: string[] = [];
        let next = 0;
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: loadRows }, async () => {
            while (next < loadTotal) {
              const i = 3 + next++;
              results.push(await run(i, { ...one, n }));
              loadInputs.push(input(i));
            }
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        const sum = (stage: StageName) => ({
          calls: results.reduce((a, r) => a + r.stages[stage].calls, 0),
          completion: results.reduce((a, r) => a + r.stages[stage].completionTokens, 0),
        });
        // Its paraphrase lines against their inputs (a call writes n lines and n − 1 breaks), in
        // the generator's tokens as a plan counts them (a run without paraphrases tokenizes nothing).
        const para = sum('paraphrases');
        const lineTokens = n > 0 ? Math.max(0, (para.completion + para.calls) / n - para.calls) : 0;
        const inputTokens = n > 0 ? results.reduce((a, r, i) => a + planned.counter.countText(loadInputs[i]!.trim()) * r.stages.paraphrases.calls, 0) : 0;
        return { results, seconds, paraphrases: para, evaluations: sum('evaluation'), lineTokens, inputTokens };
      };
      const load = await loadRun(settings.n);
      const { results, seconds } = load;
      const slots = fitSlots(cost, { paraphrases: load.paraphrases, evaluations: load.evaluations, rows: loadTotal, inFlight: loadRows, seconds });
      // The same rows with one line (two for n = 1) and with none: how the full run's time
      // grows with its generator calls, tokens and evaluations (plan-time.ts fitLoadedCost). Only
      // where its runs in flight fill the backend's slots (a run has one call in flight at least):
      // two rows in flight on a server of 8 slots left its paraphrase calls and the run without
      // them half the slots, and the costs it fitted planned a job 48 % long.
      const other = settings.n > 0 && loadRows >= slots ? await loadRun(settings.n > 1 ? 1 : 2) : null;
      const loaded = other ? fitLoadedCost([load, other, await loadRun(0)]) : null;
      const tokens = results.reduce((a, r) => a + Object.values(r.stages).reduce((b, st) => b + st.promptTokens + st.completionTokens, 0), 0);
      // The paraphrase lines' length against their inputs, over both runs that wrote them: the
      // plan's guess "as long as its input" was a third short on a model whose lines fill what
      // the grammar allows.
      const written = [load, ...(other ? [other] : [])];
      const inputTokens = written.reduce((a, r) => a + r.inputTokens, 0);
      const ratio = inputTokens > 0 ? written.reduce((a, r) => a + r.lineTokens, 0) / inputTokens : undefined;
      return writeCalibration(this.opts.dataDir, key, tokens, seconds, { ...cost, slots, ...(loaded ? { loaded } : {}) }, ratio);
    });
  }
}
