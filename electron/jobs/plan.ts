// Plans of whole runs: one input (classify), a job over a data set (eval), a sweep's grid and a
// comparison's pairs, walked with the engine's cost ledger (engine/cost.ts) against the job
// store's generation cache, so work done before is not counted again. What a plan needs that
// generating would tell (lengths of generated text, the machine's speed) comes from the last job
// on the same models when there is one, else from stated assumptions; the plan says which.
import { join } from 'node:path';
import { z } from 'zod';
import { CostPlan, type CountRange, type PlanCount, type Price, priceOf } from '../common/plan';
import { labelNames, type TaskDefinition } from '../common/task';
import type { StageStats, TatraSettings } from '../common/tatra';
import {
  CostLedger,
  PLAN_STAGES,
  type GeneratedLengths,
  type PlanContext,
  type PlannedModel,
  type PlanStage,
  exampleCalls,
  fewestRuns,
  planBaseline,
  planExamples,
  planInput,
} from '../engine';
import type { GenerationCache } from '../engine/cache';
import { JsonFile } from '../state/json-file';
import { jobCallCost, runSeconds, stageWork, type CallCost, type LoadedCost } from './plan-time';
import type { JobStore } from './store';
import type { JobInfo } from './types';

/** A model of the plan: its identity, a prompt counter, and a price when it has one. */
export interface PlanModelInfo extends PlannedModel {
  spec: string;
  remote: boolean;
  price: Price | null;
}

/** Measured speed a plan's time comes from. */
export interface Throughput {
  tokensPerSecond: number;
  basis: string;
  /**
   * A calibration's cost of a call and the backend's slots (plan-time.ts): the time then comes
   * from the calls, the rows in flight and the tokens generated, not from tokens per second.
   */
  cost?: CallCost;
  /** A calibration's paraphrase lines' tokens per token of their inputs (GeneratedLengths.paraphraseRatio). */
  paraphraseRatio?: number;
}

/** Lengths of generated text, and where they come from. */
export interface LengthsBasis {
  lengths: GeneratedLengths;
  basis: string;
}

export interface PlanInputs {
  task: TaskDefinition;
  generator: PlanModelInfo;
  evaluator: PlanModelInfo;
  lengths: LengthsBasis;
  throughput: Throughput | null;
  /** Given, it prices every model of the run (overriding remote entries' prices). */
  price?: Price;
  cache?: GenerationCache;
  /** Rows the run keeps in flight (its concurrency; default 1). */
  inFlight?: number;
  /** Stops the walk between turns: a plan nobody waits for any more (settings changed, page closed) costs no more rows. */
  signal?: AbortSignal;
}

/** One input through classify (a fresh cache, examples made per input). */
export async function planClassify(p: PlanInputs & { settings: TatraSettings; input: string }): Promise<CostPlan> {
  const ledger = new CostLedger();
  const ctx = context(p, p.settings);
  await planInput(ctx, ledger, { min: fewestRuns(p.task, p.settings), max: p.settings.r }, p.input, false);
  return presentPlan(ledger, p, { rows: 1, ranges: p.settings.earlyStop === true, paraphrases: p.settings.n > 0 });
}

/** A job over `inputs` (the rows still to do): scope-run examples once, then every row. */
export async function planJob(
  p: PlanInputs & { settings: TatraSettings; inputs: readonly string[]; baseline?: boolean; examplesMade?: readonly number[] },
  ledger = new CostLedger(),
): Promise<{ ledger: CostLedger; plan: CostPlan }> {
  const ctx = context(p, p.settings);
  await addJob(ctx, ledger, p.settings, p.inputs, p.baseline === true, p.examplesMade ?? [], p.signal);
  return { ledger, plan: presentPlan(ledger, p, { rows: p.inputs.length, ranges: p.settings.earlyStop === true, paraphrases: p.settings.n > 0 }) };
}

/**
 * A plan reads its counts synchronously (the tokenizer, the generation cache), so a walk over a
 * large file would hold the process for as long as it lasts: a server planning 20,000 rows
 * answered nothing else for 17 s. The walk gives the event loop a turn every few milliseconds
 * (and every so many rows, however fast they go); a request that needs several turns of its own
 * (each file it reads is one) then waits tens of milliseconds, not the whole plan.
 */
const TURN_MS = 4;
const TURN_ROWS = 64;

async function addJob(ctx: PlanContext, ledger: CostLedger, settings: TatraSettings, inputs: readonly string[], baseline: boolean, examplesMade: readonly number[], signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  const runs = { min: fewestRuns(ctx.task, settings), max: settings.r };
  // A job makes every run's examples before its first row, whatever early stopping does later.
  if (settings.scope === 'run' && examplesMade.length < settings.r) {
    for (const scenario of ['min', 'max'] as const) await planExamples(ctx, ledger, scenario, settings.r, undefined, new Set(examplesMade));
  }
  let turn = performance.now();
  let rows = 0;
  for (const input of inputs) {
    if (++rows > TURN_ROWS || performance.now() - turn >= TURN_MS) {
      await new Promise((done) => setImmediate(done));
      signal?.throwIfAborted();
      turn = performance.now();
      rows = 1;
    }
    await planInput(ctx, ledger, runs, input, true);
    if (baseline) await planBaseline(ctx, ledger, input);
  }
}

/** A sweep: one job per (n, k, seed) at the largest r, all sharing the generation cache and the evaluation store. */
export async function planSweep(
  p: PlanInputs & { grid: { n: number[]; k: number[]; r: number[]; seeds: number[] }; inputs: readonly string[]; done?: (cell: { n: number; k: number; seed: number }) => { rowsDone: number } | null },
): Promise<CostPlan> {
  const ledger = new CostLedger();
  const rMax = Math.max(...p.grid.r);
  let rowRuns = 0;
  for (const seed of p.grid.seeds) {
    for (const k of p.grid.k) {
      for (const n of p.grid.n) {
        const settings: TatraSettings = { n, k, r: rMax, seed, scope: 'run' };
        const done = p.done?.({ n, k, seed });
        const ctx = { ...context(p, settings), shareEvaluations: true };
        const inputs = p.inputs.slice(done?.rowsDone ?? 0);
        rowRuns += inputs.length;
        await addJob(ctx, ledger, settings, inputs, false, done ? Array.from({ length: rMax }, (_, j) => j) : [], p.signal);
      }
    }
  }
  return presentPlan(ledger, p, { rows: p.inputs.length, rowRuns, ranges: false, paraphrases: p.grid.n.some((n) => n > 0) });
}

/**
 * A comparison: one job per (generator, evaluator) pair, generator-major, sharing the generation
 * cache. `pairs`: each pair's own plan inputs (its models' lengths and speed), so each is priced at
 * its own speed, as its time left is (`planCellSeconds`); the plan's time is theirs added up, and
 * unknown while any pair has no measured speed.
 */
export async function planCompare(p: { settings: TatraSettings; pairs: readonly PlanInputs[]; inputs: readonly string[]; price?: Price; signal?: AbortSignal }): Promise<CostPlan> {
  const ledger = new CostLedger();
  const cells = p.pairs.map((inputs) => ({ inputs, settings: p.settings, rows: p.inputs, examplesMade: [], shareEvaluations: false }));
  const seconds = await walkCells(cells, ledger, p.signal);
  const first = p.pairs[0]!;
  const known = seconds.every((s) => s !== null);
  const unmeasured = p.pairs.filter((_, i) => seconds[i] === null).map((x) => `${x.generator.spec} → ${x.evaluator.spec}`);
  const time: PlanTime = known
    ? { seconds: { min: sumOf(seconds, 'min'), max: sumOf(seconds, 'max') }, basis: [...new Set(p.pairs.map((x) => x.throughput!.basis))].join('; ') }
    : { seconds: null, basis: `nothing measured yet on ${unmeasured.join(', ')}: run a job on them, or plan with --calibrate` };
  return presentPlan(ledger, { ...first, ...(p.price ? { price: p.price } : {}), pairs: p.pairs }, { rows: p.inputs.length, ranges: p.settings.earlyStop === true, paraphrases: p.settings.n > 0, time });
}

/** Whole seconds, and tenths under 10 s: a job of a second or less is not "about 0 s". */
const planSecondsShown = (s: number): number => (s < 10 ? Math.round(s * 10) / 10 : Math.round(s));

const sumOf = (seconds: readonly (CountRange | null)[], end: 'min' | 'max') => seconds.reduce((a, s) => a + s![end], 0);

/** One cell of an experiment still to run, as its job will run: its models (their speed and lengths), settings, and the rows it has left. */
export interface CellToPrice {
  inputs: PlanInputs;
  settings: TatraSettings;
  rows: readonly string[];
  /** Runs whose examples its job has made already. */
  examplesMade: readonly number[];
  /** A sweep's cells share their evaluator's answers (experiments/sweep-backends.ts). */
  shareEvaluations: boolean;
}

/**
 * Each cell's time, walked in run order on one ledger as the plans of a sweep and a comparison
 * walk them (what an earlier cell makes, or the cache holds, costs a later one nothing): the
 * seconds its own part of the ledger takes at its own models' speed; null where nothing measured
 * that speed. An experiment's time left adds them up (experiments/experiment-eta.ts).
 */
export function planCellSeconds(cells: readonly CellToPrice[]): Promise<(CountRange | null)[]> {
  return walkCells(cells, new CostLedger());
}

/** Walks `cells` onto `ledger` in order: each cell's seconds from its own part of it, at its own speed. */
async function walkCells(cells: readonly CellToPrice[], ledger: CostLedger, signal?: AbortSignal): Promise<(CountRange | null)[]> {
  const out: (CountRange | null)[] = [];
  for (const c of cells) {
    const before = stagesCopy(ledger.stages);
    const ctx = { ...context(c.inputs, c.settings), ...(c.shareEvaluations ? { shareEvaluations: true } : {}) };
    await addJob(ctx, ledger, c.settings, c.rows, false, c.examplesMade, signal);
    const { throughput } = c.inputs;
    out.push(throughput ? planSeconds(stagesMinus(ledger.stages, before), throughput, c.rows.length, c.inputs.inFlight ?? 1) : null);
    // A long walk yields between cells: it runs beside the experiment's own jobs.
    await new Promise((done) => setImmediate(done));
  }
  return out;
}

/** A plan's time worked out by its caller (a comparison's, pair by pair), with what it rests on. */
interface PlanTime {
  seconds: CountRange | null;
  basis: string;
}

type LedgerStages = CostLedger['stages'];

function stagesCopy(s: LedgerStages): LedgerStages {
  return Object.fromEntries(PLAN_STAGES.map((st) => [st, { calls: { ...s[st].calls }, prompt: { ...s[st].prompt }, completion: { ...s[st].completion } }])) as LedgerStages;
}

function stagesMinus(a: LedgerStages, b: LedgerStages): LedgerStages {
  const minus = (x: CountRange, y: CountRange): CountRange => ({ min: x.min - y.min, max: x.max - y.max });
  return Object.fromEntries(PLAN_STAGES.map((st) => [st, { calls: minus(a[st].calls, b[st].calls), prompt: minus(a[st].prompt, b[st].prompt), completion: minus(a[st].completion, b[st].completion) }])) as LedgerStages;
}

function context(p: PlanInputs, settings: TatraSettings): PlanContext {
  return { task: p.task, settings, generator: p.generator, evaluator: p.evaluator, lengths: p.lengths.lengths, ...(p.cache ? { cache: p.cache } : {}) };
}

const span = (c: CountRange, ranges: boolean): PlanCount => (ranges || c.min !== c.max ? { min: c.min, max: c.max } : c.max);

/** The ledger as the contract's plan: counts (ranges with early stopping), time, money and what they rest on. */
export function presentPlan(
  ledger: CostLedger,
  p: PlanInputs & { pairs?: readonly { generator: PlanModelInfo; evaluator: PlanModelInfo }[] },
  opts: { rows: number; ranges: boolean; paraphrases: boolean; /** Rows classified over all the run's jobs (default: rows). */ rowRuns?: number; /** Its time, when the caller worked it out (default: from `p.throughput`). */ time?: PlanTime },
): CostPlan {
  const s = ledger.stages;
  const sum = (pick: (stage: PlanStage) => CountRange): CountRange => ({
    min: PLAN_STAGES.reduce((a, st) => a + pick(st).min, 0),
    max: PLAN_STAGES.reduce((a, st) => a + pick(st).max, 0),
  });
  const calls = sum((st) => s[st].calls);
  const prompt = sum((st) => s[st].prompt);
  const completion = sum((st) => s[st].completion);
  const r = opts.ranges;
  const models = p.pairs ? p.pairs.flatMap((x) => [x.generator, x.evaluator]) : [p.generator, p.evaluator];
  const exact = models.every((m) => m.counter.exact);
  const tokensBasis = [
    exact
      ? "prompts counted with each model's own tokenizer (examples and paraphrases not written yet estimated)"
      : 'estimated at about 4 characters a token (a remote model: its tokenizer is not at hand)',
    p.lengths.basis,
  ].join('; ');
  const planned = opts.time ? opts.time.seconds : p.throughput ? planSeconds(ledger.stages, p.throughput, opts.rowRuns ?? opts.rows, p.inFlight ?? 1) : null;
  const seconds = planned ? span({ min: planSecondsShown(planned.min), max: planSecondsShown(planned.max) }, r) : null;
  return CostPlan.parse({
    calls: { examples: span(s.examples.calls, r), paraphrases: span(s.paraphrases.calls, r), evaluations: span(s.evaluations.calls, r), total: span(calls, r) },
    tokens: { prompt: span(prompt, r), completion: span(completion, r) },
    seconds,
    basis: opts.time ? opts.time.basis : p.throughput ? p.throughput.basis : 'nothing measured yet on these models: run a job on them, or plan with --calibrate',
    tokensBasis,
    cost: planCost(ledger, p, r),
    stages: Object.fromEntries(
      PLAN_STAGES.map((st) => [
        st,
        { calls: span(s[st].calls, r), prompt: span(s[st].prompt, r), completion: span(s[st].completion, r), promptCounted: exact && (st !== 'evaluations' || ledger.evaluationPromptsCounted) },
      ]),
    ),
    rows: opts.rows,
    notes: planNotes(p.task, opts.paraphrases),
  });
}

/** The plan's time (seconds, unrounded): from a calibration's call cost when there is one, else at tokens per second. */
function planSeconds(stages: LedgerStages, t: Throughput, rows: number, inFlight: number): CountRange {
  if (t.cost) {
    const at = (scenario: 'min' | 'max') => runSeconds(stageWork(stages, scenario), rows, inFlight, t.cost!);
    return { min: at('min'), max: at('max') };
  }
  const tokens = (scenario: 'min' | 'max') => PLAN_STAGES.reduce((a, st) => a + stages[st].prompt[scenario] + stages[st].completion[scenario], 0);
  return { min: tokens('min') / t.tokensPerSecond, max: tokens('max') / t.tokensPerSecond };
}

/** Money: each stage's tokens at its role's price (examples and paraphrases: generator; evaluations: evaluator). */
function planCost(ledger: CostLedger, p: PlanInputs & { pairs?: readonly { generator: PlanModelInfo; evaluator: PlanModelInfo }[] }, ranges: boolean): CostPlan['cost'] {
  const genPrice = p.price ?? p.generator.price;
  const evPrice = p.price ?? p.evaluator.price;
  // A comparison mixes models: priced only when one price covers all of them.
  if (p.pairs && !p.price) return null;
  if (!genPrice && !evPrice) return null;
  const usd = (scenario: 'min' | 'max') => {
    let total = 0;
    for (const st of PLAN_STAGES) {
      const price = st === 'evaluations' ? evPrice : genPrice;
      if (price) total += priceOf(price, ledger.stages[st].prompt[scenario], ledger.stages[st].completion[scenario]);
    }
    return Math.round(total * 1e4) / 1e4;
  };
  const unpriced = [!genPrice ? 'the generator' : null, !evPrice ? 'the evaluator' : null].filter(Boolean);
  const priceText = (x: Price) => `$${x.inPerMillion}/M in, $${x.outPerMillion}/M out`;
  const basis = p.price
    ? `--price-in/--price-out: ${priceText(p.price)}`
    : `remote entry prices (${[genPrice ? `generator ${priceText(genPrice)}` : null, evPrice && evPrice !== genPrice ? `evaluator ${priceText(evPrice)}` : null].filter(Boolean).join('; ')})${unpriced.length > 0 ? `; ${unpriced.join(' and ')} has no price and counts as free` : ''}`;
  return { usd: span({ min: usd('min'), max: usd('max') }, ranges), basis };
}

function planNotes(task: TaskDefinition, paraphrases: boolean): string[] {
  const notes: string[] = [];
  if (paraphrases) notes.push('a paraphrase that repeats another or the input is evaluated once: evaluations can come out lower');
  if (task.kind === 'math') notes.push('an answer cut off before its final line takes a second short call: evaluations are given from none to every answer needing one');
  return notes;
}

// ---------------------------------------------------------------- what a plan rests on

/** A paraphrase's length where no job measured it, in words. */
function guessedParaphrase(ratio: number | undefined): string {
  return ratio === undefined ? 'a paraphrase as long as its input' : `a paraphrase line ${ratio.toFixed(2)}× its input's tokens (the calibration's)`;
}

/**
 * Stated lengths when no job measured them: a short example per planned sentence or two, a
 * paraphrase as long as its input (or as a calibration's paraphrase calls wrote them, against
 * their inputs: `paraphraseRatio`), a label.
 */
export function assumedLengths(task: TaskDefinition, evaluator: PlannedModel, paraphraseRatio?: number): LengthsBasis {
  const perExample = task.kind === 'classification' ? 35 : task.kind === 'multiple_choice' ? 150 : 100;
  let perAnswer: number;
  if (task.kind === 'math') perAnswer = Math.round(task.evaluatorMaxTokens / 2);
  else {
    const names = [...labelNames(task), ...(task.abstainLabel !== undefined ? [task.abstainLabel] : [])];
    // The evaluator writes one label (the end of its turn is not a generated token).
    const counts = names.map((l) => evaluator.counter.countText(l));
    perAnswer = counts.reduce((a, b) => a + b, 0) / Math.max(1, counts.length);
  }
  const paraphrase = guessedParaphrase(paraphraseRatio);
  return {
    lengths: { perExample, perParaphrase: null, ...(paraphraseRatio !== undefined ? { paraphraseRatio } : {}), perAnswer },
    basis: `no job on these models yet: assumed ${perExample} tokens an example, ${paraphrase}, ${+perAnswer.toFixed(1)} tokens an answer (the labels' mean)`,
  };
}

/** How many done rows of a job a basis reads at most (its figures are means). */
const BASIS_ROWS = 500;

/** Jobs on the same task and models with finished rows, newest first. */
export function jobsOn(store: JobStore, taskId: string, generator: string, evaluator: string): JobInfo[] {
  return store.listJobs().filter((j) => j.task.id === taskId && j.generator.path === generator && j.evaluator.path === evaluator && j.rowsDone > 0 && j.elapsedMs > 0);
}

/** How many recent jobs a basis looks through for a figure (a job that found everything cached measured no example). */
const BASIS_JOBS = 5;

/**
 * Lengths of generated text as jobs measured them (tokens per example, per paraphrase line, per
 * answer), each from the newest of `jobs` that generated such text; the fallback's otherwise.
 */
export function measuredLengths(store: JobStore, jobs: readonly JobInfo[], fallback: LengthsBasis): LengthsBasis {
  const found: { perExample?: [number, string]; perParaphrase?: [number, string]; perAnswer?: [number, string] } = {};
  for (const job of jobs.slice(0, BASIS_JOBS)) {
    const ex = store.runExamples(job.id).filter((e) => e.stats.calls > 0);
    const examplesAsked = ex.length * exampleCalls(job.task, job.settings.k).reduce((a, c) => a + c.count, 0);
    const exampleTokens = ex.reduce((a, e) => a + e.stats.completionTokens, 0);
    if (!found.perExample && examplesAsked > 0 && exampleTokens > 0) found.perExample = [exampleTokens / examplesAsked, job.id];
    let paraCalls = 0;
    let paraTokens = 0;
    let evalCalls = 0;
    let evalTokens = 0;
    let seen = 0;
    for (const row of store.iterateRows(job.id)) {
      if (row.status !== 'done' || !row.stages) continue;
      paraCalls += row.stages.paraphrases.calls;
      paraTokens += row.stages.paraphrases.completionTokens;
      evalCalls += row.stages.evaluation.calls;
      evalTokens += row.stages.evaluation.completionTokens;
      if (++seen >= BASIS_ROWS) break;
    }
    // A paraphrase call writes n lines and n − 1 line breaks.
    if (!found.perParaphrase && paraCalls > 0 && job.settings.n > 0) found.perParaphrase = [Math.max(1, (paraTokens / paraCalls + 1) / job.settings.n - 1), job.id];
    if (!found.perAnswer && evalCalls > 0) found.perAnswer = [evalTokens / evalCalls, job.id];
  }
  const l = fallback.lengths;
  const lengths: GeneratedLengths = {
    perExample: found.perExample?.[0] ?? l.perExample,
    perParaphrase: found.perParaphrase?.[0] ?? l.perParaphrase,
    ...(!found.perParaphrase && l.paraphraseRatio !== undefined ? { paraphraseRatio: l.paraphraseRatio } : {}),
    perAnswer: found.perAnswer?.[0] ?? l.perAnswer,
  };
  const fmt = (x: number) => x.toFixed(1);
  const from = (f: [number, string] | undefined) => (f ? ` (job ${f[1]})` : ' (assumed)');
  if (!found.perExample && !found.perParaphrase && !found.perAnswer) return fallback;
  return {
    lengths,
    basis: `generated lengths as measured: ${fmt(lengths.perExample)} tokens an example${from(found.perExample)}, ${lengths.perParaphrase === null ? guessedParaphrase(lengths.paraphraseRatio) : `${fmt(lengths.perParaphrase)} a paraphrase${from(found.perParaphrase)}`}, ${fmt(lengths.perAnswer)} an answer${from(found.perAnswer)}`,
  };
}

/**
 * The speed a job measured on its models: a call's cost fitted to its own stages and wall time
 * (plan-time.ts jobCallCost), the measure a calibration gives, so a plan is made one way
 * whichever it rests on. (Tokens per second counted every evaluation's repeated examples
 * and no rows in flight: plans from the last job were up to 2.4× off where a calibration's were
 * within a quarter.) `tokensPerSecond` is kept for the plan's record.
 */
export function jobThroughput(store: JobStore, job: JobInfo): Throughput | null {
  const examples = store.runExamples(job.id).reduce((a, e) => ({ calls: a.calls + e.stats.calls, completion: a.completion + e.stats.completionTokens }), { calls: 0, completion: 0 });
  let tokens = store.runExamples(job.id).reduce((a, e) => a + e.stats.promptTokens + e.stats.completionTokens, 0);
  const paraphrases = { calls: 0, completion: 0, ms: 0 };
  const evaluations = { calls: 0, completion: 0, ms: 0 };
  let rows = 0;
  for (const row of store.iterateRows(job.id)) {
    if (row.status !== 'done' || !row.stages) continue;
    rows++;
    for (const st of Object.values(row.stages)) tokens += st.promptTokens + st.completionTokens;
    const add = (into: typeof paraphrases, st: StageStats) => {
      if (st.calls === 0) return;
      into.calls += st.calls;
      into.completion += st.completionTokens;
      into.ms += st.ms;
    };
    add(paraphrases, row.stages.paraphrases);
    add(evaluations, row.stages.evaluation);
    // A row's own examples (scope `input`) are generator calls made before its paraphrases.
    examples.calls += row.stages.examples.calls;
    examples.completion += row.stages.examples.completionTokens;
  }
  const seconds = job.elapsedMs / 1000;
  if (rows === 0 || seconds <= 0) return null;
  const cost = jobCallCost({ examples, paraphrases, evaluations }, rows, job.concurrency, seconds);
  if (!cost) return null;
  const when = `job ${job.id} (${job.created.slice(0, 16).replace('T', ' ')}) on these models`;
  return {
    tokensPerSecond: tokens / seconds,
    cost,
    basis: `${when}: ${(cost.perCall * 1000).toFixed(1)} ms a call + ${(cost.perToken * 1000).toFixed(2)} ms a generated token, its calls one after another at its pace (${rows} rows in ${seconds.toFixed(0)} s, ${job.concurrency} in flight)`,
  };
}

/** A short calibration's result, kept in the data folder per (generator, evaluator, threads, concurrency). */
const StoredCalibration = z.object({
  tokensPerSecond: z.number().nonnegative(),
  measuredAt: z.string(),
  seconds: z.number().nonnegative(),
  tokens: z.number().nonnegative(),
  /** A call's cost and the backend's slots (plan-time.ts); absent in calibrations made before they were measured. */
  perCall: z.number().nonnegative().optional(),
  perToken: z.number().nonnegative().optional(),
  slots: z.number().min(1).optional(),
  /** A generator call's fixed cost, where measured apart from an evaluation's (plan-time.ts CallCost). */
  perGeneratorCall: z.number().nonnegative().optional(),
  /** Its paraphrase lines' tokens per token of their inputs; absent in calibrations made before it was kept, or with n = 0. */
  paraphraseRatio: z.number().positive().optional(),
  /** What calls cost at full load (plan-time.ts LoadedCost); absent in calibrations made before it was measured, or with n = 0. */
  loaded: (z.object({ perCall: z.number().nonnegative(), perGeneratorCall: z.number().nonnegative(), perToken: z.number().nonnegative() }) satisfies z.ZodType<LoadedCost>).optional(),
});
type StoredCalibration = z.infer<typeof StoredCalibration>;

const CALIBRATION_FILE = 'calibration.json';

const calibrations = (dataDir: string) =>
  new JsonFile<Record<string, StoredCalibration>>(join(dataDir, CALIBRATION_FILE), {
    schema: z.record(z.string(), StoredCalibration),
    empty: () => ({}),
    code: 'calibration_invalid',
    hint: '(it holds only measured speeds: plans assume one until a calibration or a job measures it again)',
    indent: 1,
  });

export function calibrationKey(generatorId: string, evaluatorId: string, threads: number | undefined, concurrency: number): string {
  return JSON.stringify([generatorId, evaluatorId, threads ?? null, concurrency]);
}

function calibrationThroughput(c: StoredCalibration | undefined): Throughput | null {
  if (!c || !(c.tokensPerSecond > 0)) return null;
  const when = `a calibration on ${c.measuredAt.slice(0, 16).replace('T', ' ')}`;
  if (c.perCall !== undefined && c.perToken !== undefined && c.slots !== undefined && c.perCall + c.perToken > 0) {
    const cost: CallCost = { perCall: c.perCall, perToken: c.perToken, slots: c.slots, ...(c.perGeneratorCall !== undefined ? { perGeneratorCall: c.perGeneratorCall } : {}), ...(c.loaded ? { loaded: c.loaded } : {}) };
    const ms = (s: number, digits = 0) => `${(s * 1000).toFixed(digits)} ms`;
    const calls = c.perGeneratorCall === undefined ? `${ms(c.perCall)} a call` : `${ms(c.perCall)} an evaluation, ${ms(c.perGeneratorCall)} a generator call`;
    const full = c.loaded ? `; at full load ${ms(c.loaded.perCall, 1)} an evaluation, ${ms(c.loaded.perGeneratorCall, 1)} a generator call + ${ms(c.loaded.perToken, 1)} a generated token` : `, ${c.slots.toFixed(1)} calls at once`;
    return {
      tokensPerSecond: c.tokensPerSecond,
      cost,
      ...(c.paraphraseRatio !== undefined ? { paraphraseRatio: c.paraphraseRatio } : {}),
      basis: `${when}: alone ${calls} + ${ms(c.perToken, 1)} a generated token${full}`,
    };
  }
  return { tokensPerSecond: c.tokensPerSecond, basis: `${when}: ${c.tokens} tokens in ${c.seconds.toFixed(1)} s, ${c.tokensPerSecond.toFixed(0)} tokens/s` };
}

/** The calibration kept for `key`, or null; a damaged calibration.json is one line naming it. */
export async function readCalibration(dataDir: string, key: string): Promise<Throughput | null> {
  return calibrationThroughput((await calibrations(dataDir).read())[key]);
}

/** Keeps a calibration beside the others (every other key is kept, whoever writes at once). */
export async function writeCalibration(dataDir: string, key: string, tokens: number, seconds: number, cost?: CallCost, paraphraseRatio?: number): Promise<Throughput | null> {
  const entry: StoredCalibration = {
    tokensPerSecond: tokens / seconds,
    measuredAt: new Date().toISOString(),
    seconds,
    tokens,
    ...(cost ? { perCall: cost.perCall, perToken: cost.perToken, slots: cost.slots, ...(cost.perGeneratorCall !== undefined ? { perGeneratorCall: cost.perGeneratorCall } : {}), ...(cost.loaded ? { loaded: cost.loaded } : {}) } : {}),
    ...(paraphraseRatio !== undefined && paraphraseRatio > 0 ? { paraphraseRatio } : {}),
  };
  await calibrations(dataDir).update((all) => ({ ...all, [key]: entry }));
  return calibrationThroughput(entry);
}
