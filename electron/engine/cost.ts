// The plan of a run before it starts: every model call the method will make, found by walking the
// same steps classify() takes (engine/classify.ts, examples.ts) without generating anything.
//
// Calls are known exactly: the example calls of each run, one paraphrase call per run, n + 1
// evaluations per run, minus what a cache already holds and what the run would evaluate once
// (identical prompts in one wave; in a sweep, greedy prompts any job already asked). Two things
// only the generated text decides are left as stated limits: a paraphrase that repeats another
// (evaluated once, so fewer calls) and, for math, an answer cut off before its final line (a
// second short call). Tokens of prompts known in advance (the example and paraphrase prompts,
// the evaluator's instruction and input) are counted with the model's tokenizer; text not written
// yet (examples, paraphrases, answers) is estimated from lengths the caller supplies.
import { runSeed, type StageName, type TatraSettings } from '../common/tatra';
import { type TaskDefinition, labelNames } from '../common/task';
import { type ChatPrompt } from './backend';
import { type GenerationCache, generationCacheKey, taskContentHash } from './cache';
import { earlyStopRule } from './confident';
import { stopRisk } from './confident-limit';
import { exampleMaxTokens, FINAL_ANSWER_MAX_TOKENS } from './grammar';
import { contentHash } from './hash';
import { exampleCalls } from './label-split';
import { evaluationPrompt, examplePrompt, paraphrasePrompt } from './prompts';
import { PARAPHRASE_SAMPLING, cachedParaphrases } from './classify';
import { cachedRunExamples } from './examples';
import type { Example } from '../common/tatra';
import { runWaves } from './vote';

/** Counts a prompt's tokens as the model would see it (chat template included); `exact`: with the model's own tokenizer. */
export interface PromptCounter {
  count(prompt: ChatPrompt): Promise<number>;
  /** Tokens of a bare text (a label as the evaluator writes it, an input). */
  countText(text: string): number;
  readonly exact: boolean;
}

/** A model as the plan sees it: the identity its cache keys use, and a way to count its prompts. */
export interface PlannedModel {
  id: string;
  counter: PromptCounter;
  contextSize: number;
}

/** Lengths of text not generated yet, in tokens. */
export interface GeneratedLengths {
  /** One example as the generator writes it (and, nearly the same, as it then appears in an evaluator prompt). */
  perExample: number;
  /** One paraphrase line; null: its input's tokens × paraphraseRatio. */
  perParaphrase: number | null;
  /** With perParaphrase null: a paraphrase line's tokens per token of its input (1 when not given: as long as its input). */
  paraphraseRatio?: number;
  /** One evaluator answer. */
  perAnswer: number;
}

export interface Span {
  min: number;
  max: number;
}

export interface StageTotals {
  calls: Span;
  prompt: Span;
  completion: Span;
}

export type PlanStage = 'examples' | 'paraphrases' | 'evaluations';
export const PLAN_STAGES: readonly PlanStage[] = ['examples', 'paraphrases', 'evaluations'];

/** The plan's stage of an engine stage. */
export function planStage(stage: StageName): PlanStage {
  return stage === 'evaluation' ? 'evaluations' : stage;
}

const zero = (): Span => ({ min: 0, max: 0 });

/**
 * Calls and tokens per stage, for the fewest runs early stopping could make (`min`) and for all
 * of them (`max`). Each scenario remembers which requests it has already counted, as the run's
 * caches would.
 */
export class CostLedger {
  readonly stages: Record<PlanStage, StageTotals> = {
    examples: { calls: zero(), prompt: zero(), completion: zero() },
    paraphrases: { calls: zero(), prompt: zero(), completion: zero() },
    evaluations: { calls: zero(), prompt: zero(), completion: zero() },
  };
  private readonly seen = { min: new Set<string>(), max: new Set<string>() };
  /** False once an evaluator prompt held text not written yet (examples or paraphrases) and was estimated. */
  evaluationPromptsCounted = true;

  /**
   * Counts one request in one scenario unless its key was counted there already. `maybe`: a call
   * that happens only sometimes (a math answer's second call): counted in max only.
   */
  add(scenario: 'min' | 'max', stage: PlanStage, key: string | null, prompt: number, completion: number, maybe = false): void {
    if (key !== null) {
      if (this.seen[scenario].has(key)) return;
      this.seen[scenario].add(key);
    }
    if (maybe && scenario === 'min') return;
    const s = this.stages[stage];
    s.calls[scenario] += 1;
    s.prompt[scenario] += prompt;
    s.completion[scenario] += completion;
  }

  /** Whether a scenario already counted a key (a generation cache the plan itself fills). */
  has(scenario: 'min' | 'max', key: string): boolean {
    return this.seen[scenario].has(key);
  }
}

export interface PlanContext {
  task: TaskDefinition;
  settings: TatraSettings;
  generator: PlannedModel;
  evaluator: PlannedModel;
  lengths: GeneratedLengths;
  /** The generation cache the run will read (examples and paraphrases found there cost nothing). */
  cache?: GenerationCache;
  /**
   * A sweep: every greedy evaluator request any of its jobs made is answered from a shared store,
   * so identical prompts are evaluated once across rows and jobs (experiments/sweep-backends.ts).
   */
  shareEvaluations?: boolean;
}

/**
 * Runs early stopping makes at the least: the first wave at whose end a unanimous vote would
 * stop. r without early stop.
 */
export function fewestRuns(task: TaskDefinition, settings: TatraSettings): number {
  const rule = earlyStopRule(settings);
  if (!rule) return settings.r;
  const labels = task.kind === 'math' ? [] : labelNames(task);
  const leader = labels[0] ?? 'answer';
  const opts = { labels, ...(task.abstainLabel !== undefined ? { abstainLabel: task.abstainLabel } : {}) };
  let done = 0;
  for (const wave of runWaves(settings.r, rule.rule)) {
    done += wave.length;
    const votes: Record<string, number> = Object.fromEntries(labels.map((l) => [l, 0]));
    votes[leader] = done * (settings.n + 1);
    if (stopRisk(rule, votes, leader, (settings.r - done) * (settings.n + 1), opts, leader, { r: settings.r, perRun: settings.n + 1 }) !== null) return done;
  }
  return settings.r;
}

/** The example calls of runs 0..runs-1 (once per job with scope `run`, per input with scope `input`). */
export async function planExamples(ctx: PlanContext, ledger: CostLedger, scenario: 'min' | 'max', runs: number, input?: string, made?: ReadonlySet<number>): Promise<void> {
  const { task, settings, generator } = ctx;
  const taskHash = taskContentHash(task);
  const calls = exampleCalls(task, settings.k);
  const promptTokens = await Promise.all(calls.map((c) => generator.counter.count(examplePrompt(task, c.label, c.shapes))));
  for (let run = 0; run < runs; run++) {
    // A job that stored a run's examples reads them back.
    if (made?.has(run)) continue;
    for (const [i, call] of calls.entries()) {
      const seed = runSeed(settings.seed, run) + call.labelIndex;
      const key = generationCacheKey({ generator: generator.id, taskHash, stage: 'examples', label: call.label, count: call.count, seed, ...(input !== undefined ? { input } : {}) });
      if (await cached(ctx, key)) continue;
      const room = Math.max(1, generator.contextSize - promptTokens[i]! - 1);
      const completion = Math.min(room, exampleMaxTokens(task, call.label, call.shapes), Math.round(call.count * ctx.lengths.perExample));
      ledger.add(scenario, 'examples', `gen:${key}`, promptTokens[i]!, completion);
    }
  }
}

async function cached(ctx: PlanContext, key: string): Promise<boolean> {
  return ctx.cache !== undefined && (await ctx.cache.get(key)) !== undefined;
}

/** Runs per scenario: the fewest early stopping could make (`min`) and all of them (`max`). */
export type ScenarioRuns = Readonly<Record<'min' | 'max', number>>;

const SCENARIOS = ['min', 'max'] as const;

/**
 * One input through its runs in both scenarios: its paraphrase calls and evaluations (and, with
 * scope `input`, its examples), as classify() makes them. `examplesFromJob`: a dataset job made
 * the examples. The fewest runs are the first runs, so one walk over `max` runs counts both: a
 * request of run j is added to every scenario that makes run j (each scenario's ledger apart).
 *
 * An evaluator prompt is counted exactly when the text it holds is known: the run's examples and
 * the candidate paraphrase found in the generation cache (what the run will read back); then
 * identical prompts (a paraphrase repeating another) are counted once, as the run evaluates them.
 * Otherwise the prompt without examples is counted and each example adds its estimated length.
 */
export async function planInput(ctx: PlanContext, ledger: CostLedger, runs: ScenarioRuns, input: string, examplesFromJob: boolean): Promise<void> {
  const { task, settings, generator, evaluator, lengths } = ctx;
  const text = input.trim();
  const n = settings.n;
  if (!examplesFromJob || settings.scope === 'input') {
    for (const scenario of SCENARIOS) await planExamples(ctx, ledger, scenario, runs[scenario], settings.scope === 'input' ? text : undefined);
  }
  const add = (run: number, stage: PlanStage, key: string | null, prompt: number, completion: number, maybe = false) => {
    for (const scenario of SCENARIOS) if (run < runs[scenario]) ledger.add(scenario, stage, key, prompt, completion, maybe);
  };
  const inputHash = contentHash(text);
  // One paraphrase prompt per input, the same for every run (only the seed differs).
  let paraphraseTokens = 0;
  let paraphraseCompletion = 0;
  if (n > 0) {
    paraphraseTokens = await generator.counter.count(paraphrasePrompt(task, text, n));
    const maxTokens = Math.min(PARAPHRASE_SAMPLING.maxTokens, generator.contextSize - paraphraseTokens - 1);
    const perLine = lengths.perParaphrase ?? Math.round((lengths.paraphraseRatio ?? 1) * generator.counter.countText(text));
    // n lines and the n − 1 breaks between them.
    paraphraseCompletion = Math.max(1, Math.min(maxTokens, Math.round(n * (perLine + 1) - 1)));
  }
  const bare = await evaluator.counter.count(evaluationPrompt(task, [], text).prompt);
  const estimated = bare + (settings.k > 0 ? Math.round(settings.k * lengths.perExample) : 0);
  const taskHash = taskContentHash(task);
  const rule = earlyStopRule(settings);
  const waves = runWaves(settings.r, rule?.rule ?? false);
  const call = ctx.shareEvaluations ? null : nextCall++;
  // An evaluation scoped to this call is told apart from this call's others only: kept here, not
  // in the ledger, which would otherwise hold (n + 1) × r keys per row for the whole plan.
  const seenHere = { min: new Set<string>(), max: new Set<string>() };
  const addEvaluation = (run: number, key: string, prompt: number, completion: number, maybe = false) => {
    if (call === null) return add(run, 'evaluations', key, prompt, completion, maybe);
    for (const scenario of SCENARIOS) {
      if (run >= runs[scenario] || seenHere[scenario].has(key)) continue;
      seenHere[scenario].add(key);
      ledger.add(scenario, 'evaluations', null, prompt, completion, maybe);
    }
  };
  let wave = 0;
  let inWave = 0;
  for (let run = 0; run < Math.max(runs.min, runs.max); run++) {
    if (inWave >= waves[wave]!.length) {
      wave++;
      inWave = 0;
    }
    inWave++;
    const seed = runSeed(settings.seed, run);
    let paraphrases: string[] | null = n === 0 ? [] : null;
    if (n > 0) {
      const key = generationCacheKey({ generator: generator.id, taskHash, stage: 'paraphrases', label: null, count: n, seed, input: text });
      const hit = ctx.cache ? await ctx.cache.get(key) : undefined;
      if (hit !== undefined) paraphrases = cachedParaphrases(hit, n, text);
      else add(run, 'paraphrases', `gen:${key}`, paraphraseTokens, paraphraseCompletion);
    }
    const examples = await knownExamples(ctx, run, settings.scope === 'input' ? text : undefined);
    // Identical prompts are evaluated once per wave of one classify() call, or once per sweep (its store).
    const scope = call === null ? `sweep:${evaluator.id}` : `${call}:${wave}`;
    // Without the text: what makes the prompt, the run's examples (none when k = 0: the same for every run) and the candidate.
    const examplesId = settings.k === 0 ? 'none' : `k${settings.k}:s${seed}${settings.scope === 'input' ? `:${inputHash}` : ''}`;
    for (let variant = 0; variant <= n; variant++) {
      const candidate = variant === 0 ? text : paraphrases?.[variant - 1];
      let key: string;
      let promptTokens: number;
      if (examples !== null && candidate !== undefined) {
        const { prompt } = evaluationPrompt(task, examples, candidate);
        key = `eval:${scope}:${contentHash(`${prompt.system}\u0000${prompt.user}`)}`;
        promptTokens = await evaluator.counter.count(prompt);
      } else {
        key = `eval:${scope}:${examplesId}:${variant === 0 ? `in:${inputHash}` : `para:${n}:${seed}:${inputHash}:${variant}`}`;
        promptTokens = estimated;
        ledger.evaluationPromptsCounted = false;
      }
      addEvaluation(run, key, promptTokens, lengths.perAnswer);
      if (task.kind === 'math') addEvaluation(run, `${key}:final`, promptTokens + task.evaluatorMaxTokens, FINAL_ANSWER_MAX_TOKENS, true);
    }
  }
}

/**
 * A run's examples when the run will read them from the cache (k = 0: none), else null. With
 * scope `run` they are the same for every row: read once per plan context, not once per row (a
 * plan is one reading of the cache, even where a job beside it writes to it meanwhile).
 */
function knownExamples(ctx: PlanContext, run: number, input: string | undefined): Promise<Example[] | null> {
  if (ctx.settings.k === 0) return Promise.resolve([]);
  const cache = ctx.cache;
  if (!cache) return Promise.resolve(null);
  const read = () => cachedRunExamples(ctx.task, ctx.settings, run, ctx.generator.id, cache, input);
  if (input !== undefined) return read();
  let runs = examplesByRun.get(ctx);
  if (!runs) examplesByRun.set(ctx, (runs = new Map()));
  let examples = runs.get(run);
  if (!examples) runs.set(run, (examples = read()));
  return examples;
}

/** Each plan context's runs' examples (scope `run`), read once. */
const examplesByRun = new WeakMap<PlanContext, Map<number, Promise<Example[] | null>>>();

/** Tells one classify() call from another (rows repeating an input evaluate it again outside a sweep). */
let nextCall = 0;

/** The zero-shot baseline of one input, in both scenarios: one greedy evaluator call. */
export async function planBaseline(ctx: PlanContext, ledger: CostLedger, input: string): Promise<void> {
  const tokens = await ctx.evaluator.counter.count(evaluationPrompt(ctx.task, [], input.trim()).prompt);
  for (const scenario of SCENARIOS) {
    ledger.add(scenario, 'evaluations', null, tokens, ctx.lengths.perAnswer);
    if (ctx.task.kind === 'math') ledger.add(scenario, 'evaluations', null, tokens + ctx.task.evaluatorMaxTokens, FINAL_ANSWER_MAX_TOKENS, true);
  }
}

