// One input through the whole method (docs/method.md §1): r runs of examples, paraphrases and evaluation,
// then the vote. Independent requests go to the backend together (a wave's example calls, its
// paraphrase calls, then its evaluations), so a backend with parallel sequences decodes them side
// by side; events still come out run by run within each stage. Without early stop there is one
// wave of all r runs; with it, runs go in waves (vote.ts runWaves) and no wave is launched once
// the vote is decided (exact) or sure enough (confident.ts). The waves are a function of r and the
// rule alone, so a deterministic backend gives the same result on every run.
import { UserError } from '../common/errors';
import {
  type ParaphraseFallback,
  type Prediction,
  type RunResult,
  StageName,
  type StageStats,
  type TatraEvent,
  type TatraResult,
  TatraSettings,
  runSeed,
} from '../common/tatra';
import { type TaskDefinition, answerLabels } from '../common/task';
import { ContextOverflowError, type GenerateRequest, type GenerateResult, type GenerateResultListener, type TatraBackend } from './backend';
import { type GenerationCache, generationCacheKey, taskContentHash } from './cache';
import { outputConstraints } from './constraint';
import { type RunExamples, emitExampleEvents, generateExamplesForRuns } from './examples';
import { FINAL_ANSWER_MAX_TOKENS, evaluationGrammar, finalAnswerGrammar, paraphraseGrammar, paraphraseLineLimit } from './grammar';
import { extractFinalAnswer, normaliseMathAnswer } from './math';
import { addFilterCounts, cleanParaphrases, emptyFilterCounts, mapLabel, padParaphrases, totalFiltered } from './parse';
import { evaluationPrompt, evaluationSuffix, evaluationSystem, paraphrasePrompt } from './prompts';
import { type Vote, firstOriginal, runWaves, tallyVotes, taskVoteOptions } from './vote';
import { earlyStopRule } from './confident';
import { stopRisk } from './confident-limit';
import { formatZodError } from '../common/task';
import { callsPerRun } from '../common/calls';

/** Sampling for paraphrases (reference code). */
export const PARAPHRASE_SAMPLING = { temperature: 0.9, topP: 0.95, maxTokens: 256 } as const;

export interface ClassifyOptions {
  task: TaskDefinition;
  input: string;
  settings: TatraSettings;
  generator: TatraBackend;
  evaluator: TatraBackend;
  cache?: GenerationCache;
  /** Examples for run j from elsewhere (a dataset job shares run-scope examples across rows). */
  examplesForRun?: (run: number) => Promise<RunExamples>;
  signal?: AbortSignal;
  onEvent?: (e: TatraEvent) => void;
}

function emptyStats(): StageStats {
  return { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 };
}

/** The voting label of one evaluator output: a task label (or the abstain label), or for math the normalised final answer. */
export function predictionLabel(task: TaskDefinition, raw: string): string | null {
  if (task.kind === 'math') {
    const answer = extractFinalAnswer(raw);
    return answer === null ? null : normaliseMathAnswer(answer);
  }
  return mapLabel(raw, answerLabels(task));
}

// A job passes the same settings object with every row: it is checked once, not once per row.
const checkedSettings = new WeakMap<TatraSettings, TatraSettings>();

function checkSettings(settings: TatraSettings): TatraSettings {
  const known = checkedSettings.get(settings);
  if (known) return known;
  const parsed = TatraSettings.safeParse(settings);
  if (!parsed.success) throw new UserError(`bad settings: ${formatZodError(parsed.error)}`, 'bad_settings');
  checkedSettings.set(settings, parsed.data);
  return parsed.data;
}

/** Sends a batch, turning a prompt that cannot fit into the user error it is. */
async function generate(backend: TatraBackend, requests: GenerateRequest[], onResult?: GenerateResultListener): Promise<{ results: GenerateResult[]; ms: number }> {
  const started = performance.now();
  try {
    const results = await backend.generate(requests, onResult);
    if (results.length !== requests.length) throw new Error(`the backend returned ${results.length} results for ${requests.length} requests`);
    return { results, ms: performance.now() - started };
  } catch (e) {
    if (e instanceof ContextOverflowError) throw new UserError(e.message, 'input_too_long');
    throw e;
  }
}

/**
 * The evaluator's greedy calls. A math answer that reached the token limit before its final line
 * gets a short second call continuing the same turn with "Final Answer:" under the answer grammar,
 * so long reasoning still votes; its tokens and time count in the same stage.
 */
async function evaluateRequests(
  task: TaskDefinition,
  evaluator: TatraBackend,
  requests: GenerateRequest[],
  /** Each request's final result as soon as it is known, so predictions stream while others decode. */
  onFinal?: GenerateResultListener,
): Promise<{ results: GenerateResult[]; ms: number }> {
  const complete = (r: GenerateResult) => task.kind !== 'math' || extractFinalAnswer(r.text) !== null;
  const first = await generate(evaluator, requests, onFinal && ((i, r) => (complete(r) ? onFinal(i, r) : undefined)));
  if (task.kind !== 'math') return first;
  const cut = first.results.flatMap((r, i) => (extractFinalAnswer(r.text) === null ? [i] : []));
  if (cut.length === 0) return first;
  const grammar = finalAnswerGrammar(task);
  const prefixes = cut.map((i) => `${first.results[i]!.text.trimEnd()}\nFinal Answer:`);
  const merged = (j: number, b: GenerateResult): GenerateResult => {
    const a = first.results[cut[j]!]!;
    return { text: prefixes[j]! + b.text, promptTokens: a.promptTokens + b.promptTokens, completionTokens: a.completionTokens + b.completionTokens, ms: a.ms + b.ms };
  };
  const second = await generate(
    evaluator,
    cut.map((i, j) => {
      const request = requests[i]!;
      return { ...request, prompt: { ...request.prompt, assistantPrefix: prefixes[j]! }, grammar, maxTokens: FINAL_ANSWER_MAX_TOKENS };
    }),
    onFinal && ((j, b) => onFinal(cut[j]!, merged(j, b))),
  );
  const results = [...first.results];
  cut.forEach((i, j) => {
    results[i] = merged(j, second.results[j]!);
  });
  return { results, ms: first.ms + second.ms };
}

/** New tokens the evaluator may need for one answer: its limit, plus the final-line call for math. */
function evaluatorAnswerTokens(task: TaskDefinition): number {
  return task.evaluatorMaxTokens + (task.kind === 'math' ? FINAL_ANSWER_MAX_TOKENS : 0);
}

/**
 * Rejects, before anything is generated, an input that cannot fit: the evaluator's prompt with no
 * examples plus its answer, or the paraphrase prompt plus its 256 tokens.
 */
async function checkInputFits(task: TaskDefinition, input: string, settings: TatraSettings, generator: TatraBackend, evaluator: TatraBackend): Promise<void> {
  const bare = evaluationPrompt(task, [], input).prompt;
  const evalTokens = await evaluator.countPromptTokens(bare);
  if (evalTokens + evaluatorAnswerTokens(task) > evaluator.contextSize) {
    throw new UserError(
      `the input is too long: the evaluator's prompt needs ${evalTokens} tokens plus ${evaluatorAnswerTokens(task)} for the answer, but its context holds ${evaluator.contextSize}`,
      'input_too_long',
    );
  }
  if (settings.n > 0) {
    const paraTokens = await generator.countPromptTokens(paraphrasePrompt(task, input, settings.n));
    if (paraTokens + MIN_PARAPHRASE_TOKENS > generator.contextSize) {
      throw new UserError(
        `the input is too long: the paraphrase prompt needs ${paraTokens} tokens plus at least ${MIN_PARAPHRASE_TOKENS} to answer, but the generator's context holds ${generator.contextSize}`,
        'input_too_long',
      );
    }
  }
}

/** Below this many tokens of room a paraphrase call is pointless; a smaller context is an error. */
const MIN_PARAPHRASE_TOKENS = 32;

export async function classify(opts: ClassifyOptions): Promise<TatraResult> {
  const { task, generator, evaluator, signal } = opts;
  const settings = checkSettings(opts.settings);
  const input = opts.input.trim();
  if (input === '') throw new UserError('the input is empty', 'input_empty');
  const started = performance.now();
  signal?.throwIfAborted();
  await checkInputFits(task, input, settings, generator, evaluator);
  signal?.throwIfAborted();

  const voteOptions = taskVoteOptions(task);
  const stages: Record<StageName, StageStats> = { examples: emptyStats(), paraphrases: emptyStats(), evaluation: emptyStats() };
  const done: WaveOutcome['runs'] = [];
  const rule = earlyStopRule(settings);
  const waves = runWaves(settings.r, rule?.rule ?? false);
  let decidedEarly = false;
  let risk: number | null = null;
  for (const wave of waves) {
    const outcome = await runWave({ ...opts, settings, input }, wave);
    addStages(stages, outcome.stages);
    done.push(...outcome.runs);
    const votesToCome = (settings.r - done.length) * (settings.n + 1);
    if (!rule || votesToCome === 0) continue;
    const cast = votesOf(done);
    const sofar = tallyVotes(cast, voteOptions);
    risk = stopRisk(rule, sofar.votes, sofar.label, votesToCome, voteOptions, firstOriginal(cast), { r: settings.r, perRun: settings.n + 1 });
    if (risk !== null) {
      decidedEarly = true;
      break;
    }
  }
  const outcome = tallyVotes(votesOf(done), voteOptions);
  const runResults: RunResult[] = done.map((r) => r.result);
  const result: TatraResult = {
    taskId: task.id,
    input,
    settings,
    label: outcome.label,
    confidence: outcome.confidence,
    votes: outcome.votes,
    tieBreak: outcome.tieBreak,
    constrained: outputConstraints(task, generator, evaluator),
    runs: runResults,
    filteredExamples: totalFiltered(runResults.reduce((acc, r) => addFilterCounts(acc, r.filtered), emptyFilterCounts())),
    fallbacks: runResults.filter((r) => r.fallback !== null).length,
    stages,
    totalMs: performance.now() - started,
    deterministic: generator.deterministic === true && evaluator.deterministic === true,
    decidedEarly,
    votesCast: runResults.reduce((n, r) => n + r.predictions.length, 0),
    callsSaved: decidedEarly ? callsPerRun(task, settings, opts.examplesForRun !== undefined) * (settings.r - done.length) : 0,
    earlyStop: rule ? { ...rule, ...(risk !== null ? { risk } : {}) } : null,
  };
  opts.onEvent?.({ type: 'done', result });
  return result;
}

function votesOf(runs: WaveOutcome['runs']): Vote[] {
  return runs.flatMap(({ result }) => result.predictions.map((p) => ({ run: result.run, variant: p.variant, label: p.label })));
}

function addStages(into: Record<StageName, StageStats>, add: Record<StageName, StageStats>): void {
  for (const name of StageName.options) {
    into[name].calls += add[name].calls;
    into[name].promptTokens += add[name].promptTokens;
    into[name].completionTokens += add[name].completionTokens;
    into[name].ms += add[name].ms;
  }
}

interface WaveOutcome {
  runs: { result: RunResult }[];
  stages: Record<StageName, StageStats>;
}

/**
 * Stages 1–3 for some runs. Stages 1 and 2 are independent generator work: both batches go to the
 * backend at once; each stage's time is its own wall clock (the two overlap). Events still come
 * out examples first, then paraphrases, then predictions as they finish.
 */
async function runWave(opts: ClassifyOptions & { settings: TatraSettings }, runs: number[]): Promise<WaveOutcome> {
  const { task, input, settings, signal } = opts;
  const emit = (e: TatraEvent) => opts.onEvent?.(e);
  for (const run of runs) emit({ type: 'run-start', run, seed: runSeed(settings.seed, run) });
  const stages: Record<StageName, StageStats> = { examples: emptyStats(), paraphrases: emptyStats(), evaluation: emptyStats() };

  const exampleStage = exampleRuns(opts, runs);
  const paraphraseStage = paraphraseRuns({
    task,
    input,
    settings,
    runs,
    generator: opts.generator,
    onRun: (run, p) => emit({ type: 'paraphrases', run, paraphrases: p.paraphrases, fallback: p.fallback, cached: p.cached }),
    ...(opts.cache ? { cache: opts.cache } : {}),
    ...(signal ? { signal } : {}),
  });
  // Whichever fails first is reported; the other must not become an unhandled rejection.
  exampleStage.catch(() => undefined);
  paraphraseStage.catch(() => undefined);

  const { runExamples, ms: exampleMs } = await exampleStage;
  // Examples handed in by a dataset job were paid for once by the job, not by this input: counting
  // them per row would multiply the example stage's tokens by the number of rows.
  for (const ex of opts.examplesForRun ? [] : runExamples) {
    stages.examples.calls += ex.stats.calls;
    stages.examples.promptTokens += ex.stats.promptTokens;
    stages.examples.completionTokens += ex.stats.completionTokens;
  }
  stages.examples.ms = exampleMs;
  signal?.throwIfAborted();

  const { paraphrased, stats: paraphraseStats } = await paraphraseStage;
  stages.paraphrases = paraphraseStats;
  signal?.throwIfAborted();

  const { predictions, stats: evaluationStats } = await evaluateRuns(opts, runs, runExamples, paraphrased);
  stages.evaluation = evaluationStats;
  return {
    stages,
    runs: runs.map((run, i) => ({
      result: {
        run,
        seed: runSeed(settings.seed, run),
        examples: runExamples[i]!.examples,
        paraphrases: paraphrased[i]!.paraphrases,
        predictions: predictions[i]!,
        filtered: runExamples[i]!.filtered,
        fallback: paraphrased[i]!.fallback,
        examplesCached: runExamples[i]!.cached,
        paraphrasesCached: paraphrased[i]!.cached,
      },
    })),
  };
}

/** Stage 1 for some runs: generated (cache first), or handed in by a dataset job. */
async function exampleRuns(opts: ClassifyOptions & { settings: TatraSettings }, runs: number[]): Promise<{ runExamples: RunExamples[]; ms: number }> {
  const { task, settings, signal } = opts;
  const t0 = performance.now();
  if (opts.examplesForRun) {
    const out: RunExamples[] = [];
    for (const run of runs) {
      const ex = await opts.examplesForRun(run);
      emitExampleEvents(task, ex, opts.onEvent);
      out.push(ex);
      signal?.throwIfAborted();
    }
    return { runExamples: out, ms: performance.now() - t0 };
  }
  const out = await generateExamplesForRuns({
    task,
    settings,
    generator: opts.generator,
    runs,
    onRun: (ex) => emitExampleEvents(task, ex, opts.onEvent),
    ...(opts.cache ? { cache: opts.cache } : {}),
    ...(signal ? { signal } : {}),
    ...(settings.scope === 'input' ? { input: opts.input.trim() } : {}),
  });
  return { runExamples: out, ms: performance.now() - t0 };
}

/**
 * Stage 3 for some runs: original + n paraphrases per run, in one batch. Identical prompts (a
 * fallback's copies of the original) are greedy and so evaluated once. Predictions are announced
 * as each evaluation finishes (a UI fills its grid live), and kept in run and variant order.
 */
async function evaluateRuns(
  opts: ClassifyOptions & { settings: TatraSettings },
  runs: number[],
  runExamples: RunExamples[],
  paraphrased: ParaphrasedRun[],
): Promise<{ predictions: Prediction[][]; stats: StageStats }> {
  const { task, signal } = opts;
  const input = opts.input.trim();
  const grammar = evaluationGrammar(task);
  const requests: GenerateRequest[] = [];
  const requestIndex = new Map<string, number>();
  const slots: { at: number; run: number; variant: number; request: number }[] = [];
  runs.forEach((run, at) => {
    const examples = runExamples[at]!.examples;
    const candidates = [input, ...paraphrased[at]!.paraphrases];
    candidates.forEach((candidate, variant) => {
      const { prompt, sharedUserPrefixLength } = evaluationPrompt(task, examples, candidate);
      const dedupeKey = `${prompt.system}\u0000${prompt.user}`;
      let index = requestIndex.get(dedupeKey);
      if (index === undefined) {
        index = requests.length;
        requestIndex.set(dedupeKey, index);
        requests.push({ prompt, sharedUserPrefixLength, grammar, maxTokens: task.evaluatorMaxTokens, temperature: 0, stage: 'evaluation', ...(signal ? { signal } : {}) });
      }
      slots.push({ at, run, variant, request: index });
    });
  });
  const slotsByRequest = new Map<number, typeof slots>();
  for (const slot of slots) slotsByRequest.set(slot.request, [...(slotsByRequest.get(slot.request) ?? []), slot]);
  const predictionAt = (slot: (typeof slots)[number], raw: string): Prediction => ({ variant: slot.variant, label: predictionLabel(task, raw), raw });
  const { results, ms } = await evaluateRequests(task, opts.evaluator, requests, (index, result) => {
    for (const slot of slotsByRequest.get(index) ?? []) opts.onEvent?.({ type: 'prediction', run: slot.run, prediction: predictionAt(slot, result.text) });
  });
  signal?.throwIfAborted();
  const predictions: Prediction[][] = runs.map(() => []);
  for (const slot of slots) predictions[slot.at]!.push(predictionAt(slot, results[slot.request]!.text));
  return {
    predictions,
    stats: {
      calls: results.length,
      promptTokens: results.reduce((s, r) => s + r.promptTokens, 0),
      completionTokens: results.reduce((s, r) => s + r.completionTokens, 0),
      ms,
    },
  };
}

interface ParaphrasedRun {
  paraphrases: string[];
  fallback: ParaphraseFallback | null;
  cached: boolean;
}

/** Stage 2: n paraphrases per run, one call per run, every uncached run in one batch. */
async function paraphraseRuns(opts: {
  task: TaskDefinition;
  input: string;
  settings: TatraSettings;
  runs: number[];
  generator: TatraBackend;
  cache?: GenerationCache;
  signal?: AbortSignal;
  /** Each run's paraphrases as soon as they are known. */
  onRun?: (run: number, paraphrased: ParaphrasedRun) => void;
}): Promise<{ paraphrased: ParaphrasedRun[]; stats: StageStats }> {
  const { task, input, settings, runs, generator, cache, signal } = opts;
  const stats = emptyStats();
  if (settings.n <= 0) {
    const none = runs.map(() => ({ paraphrases: [], fallback: null, cached: false }));
    none.forEach((p, i) => opts.onRun?.(runs[i]!, p));
    return { paraphrased: none, stats };
  }
  const t0 = performance.now();
  const taskHash = taskContentHash(task);
  const lineLimit = paraphraseLineLimit(input);
  // The reference budget of 256 tokens, or less where the generator's context has less room
  // (a cut-off answer is then padded, and the fallback recorded).
  const prompt = paraphrasePrompt(task, input, settings.n);
  const maxTokens = Math.min(PARAPHRASE_SAMPLING.maxTokens, generator.contextSize - (await generator.countPromptTokens(prompt)) - 1);
  const planned = runs.map((run) => {
    const seed = runSeed(settings.seed, run);
    const request: GenerateRequest = {
      prompt,
      grammar: paraphraseGrammar(settings.n, lineLimit),
      maxTokens,
      temperature: PARAPHRASE_SAMPLING.temperature,
      topP: PARAPHRASE_SAMPLING.topP,
      seed,
      stage: 'paraphrases',
      ...(signal ? { signal } : {}),
    };
    return { key: generationCacheKey({ generator: generator.id, taskHash, stage: 'paraphrases', label: null, count: settings.n, seed, input }), request };
  });
  const texts: { text: string; truncated: boolean; cached: boolean }[] = [];
  const missing: number[] = [];
  for (const [i, p] of planned.entries()) {
    const hit = cache ? await cache.get(p.key) : undefined;
    texts[i] = hit !== undefined ? { ...readTruncationMark(hit), cached: true } : { text: '', truncated: false, cached: false };
    if (hit === undefined) missing.push(i);
    else opts.onRun?.(runs[i]!, finish(texts[i]!));
  }
  if (missing.length > 0) {
    const { results } = await generate(
      generator,
      missing.map((i) => planned[i]!.request),
      opts.onRun &&
        ((j, r) => {
          const i = missing[j]!;
          opts.onRun?.(runs[i]!, finish({ text: r.text, truncated: r.completionTokens >= maxTokens, cached: false }));
        }),
    );
    signal?.throwIfAborted();
    for (const [j, i] of missing.entries()) {
      const r = results[j] as GenerateResult;
      // A completion that used its whole budget was cut off; its last line is incomplete.
      const truncated = r.completionTokens >= maxTokens;
      texts[i] = { text: r.text, truncated, cached: false };
      stats.calls++;
      stats.promptTokens += r.promptTokens;
      stats.completionTokens += r.completionTokens;
      if (cache) await cache.set(planned[i]!.key, truncationMarked(r.text, truncated));
    }
    stats.ms = performance.now() - t0;
  }
  return { paraphrased: texts.map(finish), stats };

  function finish(t: { text: string; truncated: boolean; cached: boolean }): ParaphrasedRun {
    return { ...paraphrasesOf(t, settings.n, input), cached: t.cached };
  }
}

// A cached paraphrase text must re-parse exactly as it did when fresh, including whether it was
// cut off; the flag rides along as a one-character prefix.
function truncationMarked(text: string, truncated: boolean): string {
  return `${truncated ? 'T' : 'F'}${text}`;
}

/** The n paraphrases a paraphrase call's text gives (padded when fewer parsed). */
function paraphrasesOf(t: { text: string; truncated: boolean }, n: number, input: string): { paraphrases: string[]; fallback: ParaphraseFallback | null } {
  return padParaphrases(cleanParaphrases(t.text, { truncated: t.truncated }), n, input);
}

/** The paraphrases a run gets from a cached paraphrase call (a plan counts their evaluator prompts exactly). */
export function cachedParaphrases(stored: string, n: number, input: string): string[] {
  return paraphrasesOf(readTruncationMark(stored), n, input.trim()).paraphrases;
}

function readTruncationMark(stored: string): { text: string; truncated: boolean } {
  return { text: stored.slice(1), truncated: stored.startsWith('T') };
}

export interface ZeroShotResult {
  label: string | null;
  raw: string;
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

/** The baseline: one greedy evaluator call with the instruction alone, no examples, no paraphrases. */
export async function zeroShot(opts: { task: TaskDefinition; input: string; evaluator: TatraBackend; signal?: AbortSignal }): Promise<ZeroShotResult> {
  const { task, evaluator, signal } = opts;
  const input = opts.input.trim();
  if (input === '') throw new UserError('the input is empty', 'input_empty');
  signal?.throwIfAborted();
  const prompt = { system: evaluationSystem(task), user: evaluationSuffix(task, input) };
  const tokens = await evaluator.countPromptTokens(prompt);
  if (tokens + evaluatorAnswerTokens(task) > evaluator.contextSize) {
    throw new UserError(`the input is too long: the prompt needs ${tokens} tokens plus ${evaluatorAnswerTokens(task)} for the answer, but the context holds ${evaluator.contextSize}`, 'input_too_long');
  }
  const { results } = await evaluateRequests(task, evaluator, [
    { prompt, grammar: evaluationGrammar(task), maxTokens: task.evaluatorMaxTokens, temperature: 0, stage: 'evaluation', ...(signal ? { signal } : {}) },
  ]);
  const r = results[0] as GenerateResult;
  return { label: predictionLabel(task, r.text), raw: r.text, promptTokens: r.promptTokens, completionTokens: r.completionTokens, ms: r.ms };
}
