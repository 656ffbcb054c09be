// Stage 1 of a run (docs/method.md §4): one generator call per label (one for math), all labels' calls
// in one backend.generate so they decode in parallel, then validation, pooling and the seeded cut.
import { type Example, type ExampleFilterCounts, type StageStats, type TatraEvent, type TatraSettings, runSeed } from '../common/tatra';
import { type TaskDefinition } from '../common/task';
import { UserError } from '../common/errors';
import { type GenerateRequest, type TatraBackend } from './backend';
import { type GenerationCache, generationCacheKey, taskContentHash } from './cache';
import { exampleGrammar, exampleMaxTokens } from './grammar';
import { validateExamples } from './parse';
import { type LabelCall, exampleCalls } from './label-split';
import { examplePrompt } from './prompts';

/** Sampling for example generation (reference code). */
export const EXAMPLE_SAMPLING = { temperature: 0.6, topP: 0.9 } as const;

export interface RunExamples {
  run: number;
  /** The run's seed (seed + 10000·run); label i's call used seed + i. */
  seed: number;
  /** The pooled, shuffled examples the evaluator sees, at most k. */
  examples: Example[];
  filtered: ExampleFilterCounts;
  /** True when every label call came from the cache (nothing was generated). */
  cached: boolean;
  stats: StageStats;
  /** Per label call, in label order: the final examples carrying that label (null label: math). */
  byLabel?: { label: string | null; examples: Example[]; cached: boolean }[];
}

export interface GenerateRunExamplesOptions {
  task: TaskDefinition;
  settings: TatraSettings;
  run: number;
  generator: TatraBackend;
  cache?: GenerationCache;
  signal?: AbortSignal;
  onEvent?: (e: TatraEvent) => void;
  /** With scope `input`: the input the examples are for (it only enters the cache key). */
  input?: string;
}

interface PlannedCall {
  run: number;
  call: LabelCall;
  seed: number;
  key: string;
  request: GenerateRequest;
}

function planRun(task: TaskDefinition, settings: TatraSettings, run: number, generatorId: string, taskHash: string, input: string | undefined, signal?: AbortSignal): PlannedCall[] {
  const seed = runSeed(settings.seed, run);
  return exampleCalls(task, settings.k).map((call) => {
    const callSeed = seed + call.labelIndex;
    return {
      run,
      call,
      seed: callSeed,
      key: generationCacheKey({ generator: generatorId, taskHash, stage: 'examples', label: call.label, count: call.count, seed: callSeed, ...(input !== undefined ? { input } : {}) }),
      request: {
        prompt: examplePrompt(task, call.label, call.shapes),
        grammar: exampleGrammar(task, call.label, call.shapes),
        maxTokens: exampleMaxTokens(task, call.label, call.shapes),
        ...EXAMPLE_SAMPLING,
        seed: callSeed,
        stage: 'examples',
        ...(signal ? { signal } : {}),
      },
    };
  });
}

/**
 * Examples for several runs at once: cache hits are read, every miss of every run goes into ONE
 * generate call. Used by `generateRunExamples` (one run) and by `classify` (all runs).
 */
export async function generateExamplesForRuns(
  opts: Omit<GenerateRunExamplesOptions, 'run' | 'onEvent'> & {
    runs: readonly number[];
    /** Each run's examples as soon as all of its calls are done (a UI shows them while other runs decode). */
    onRun?: (result: RunExamples) => void;
  },
): Promise<RunExamples[]> {
  const { task, settings, generator, cache, signal } = opts;
  signal?.throwIfAborted();
  const taskHash = taskContentHash(task);
  const planned = opts.runs.map((run) => planRun(task, settings, run, generator.id, taskHash, opts.input, signal));
  const flat = planned.flat();
  const raws = new Map<PlannedCall, { text: string; cached: boolean; promptTokens: number; completionTokens: number; ms: number }>();
  const misses: PlannedCall[] = [];
  for (const p of flat) {
    const hit = cache ? await cache.get(p.key) : undefined;
    if (hit !== undefined) raws.set(p, { text: hit, cached: true, promptTokens: 0, completionTokens: 0, ms: 0 });
    else misses.push(p);
  }
  const runOf = new Map<PlannedCall, number>();
  planned.forEach((calls, i) => calls.forEach((p) => runOf.set(p, i)));
  const remaining = planned.map((calls) => calls.filter((p) => !raws.has(p)).length);
  const announce = (i: number) => opts.onRun?.(build(i));
  remaining.forEach((left, i) => (left === 0 ? announce(i) : undefined));
  if (misses.length > 0) {
    await capToContext(generator, misses.map((m) => m.request));
    signal?.throwIfAborted();
    const results = await generator.generate(
      misses.map((m) => m.request),
      opts.onRun &&
        ((j, r) => {
          const p = misses[j]!;
          raws.set(p, { text: r.text, cached: false, promptTokens: r.promptTokens, completionTokens: r.completionTokens, ms: r.ms });
          const i = runOf.get(p)!;
          if (--remaining[i]! === 0) announce(i);
        }),
    );
    signal?.throwIfAborted();
    for (let i = 0; i < misses.length; i++) {
      const p = misses[i] as PlannedCall;
      const r = results[i];
      if (!r) throw new Error(`the generator returned ${results.length} results for ${misses.length} requests`);
      raws.set(p, { text: r.text, cached: false, promptTokens: r.promptTokens, completionTokens: r.completionTokens, ms: r.ms });
      if (cache) await cache.set(p.key, r.text);
    }
  }
  return planned.map((_, i) => build(i));

  function build(i: number): RunExamples {
    const calls = planned[i]!;
    const run = opts.runs[i] as number;
    const seed = runSeed(settings.seed, run);
    const outs = calls.map((p) => ({ p, raw: raws.get(p) as { text: string; cached: boolean; promptTokens: number; completionTokens: number; ms: number } }));
    const validated = validateRun(task, settings, run, outs.map(({ raw }) => raw.text));
    const generated = outs.filter((o) => !o.raw.cached);
    return {
      run,
      seed,
      examples: validated.examples,
      filtered: validated.filtered,
      cached: generated.length === 0,
      stats: {
        calls: generated.length,
        promptTokens: generated.reduce((s, o) => s + o.raw.promptTokens, 0),
        completionTokens: generated.reduce((s, o) => s + o.raw.completionTokens, 0),
        ms: generated.reduce((s, o) => Math.max(s, o.raw.ms), 0),
      },
      byLabel: outs.map(({ p, raw }) => ({
        label: p.call.label,
        examples: p.call.label === null ? validated.examples : validated.examples.filter((e) => e.label === p.call.label),
        cached: raw.cached,
      })),
    };
  }
}

/** A run's examples from its label calls' texts (in exampleCalls order): validated, pooled and cut as a run makes them. */
function validateRun(task: TaskDefinition, settings: TatraSettings, run: number, texts: readonly string[]): ReturnType<typeof validateExamples> {
  const calls = exampleCalls(task, settings.k);
  return validateExamples(task, calls.map((c, i) => ({ label: c.label, raw: texts[i]! })), settings.k, runSeed(settings.seed, run));
}

/**
 * A run's examples when every label call is in the cache (what a job would read back), else null:
 * a plan then counts the evaluator's prompts exactly.
 */
export async function cachedRunExamples(task: TaskDefinition, settings: TatraSettings, run: number, generatorId: string, cache: GenerationCache, input?: string): Promise<Example[] | null> {
  const planned = planRun(task, settings, run, generatorId, taskContentHash(task), input);
  const texts: string[] = [];
  for (const p of planned) {
    const hit = await cache.get(p.key);
    if (hit === undefined) return null;
    texts.push(hit);
  }
  return validateRun(task, settings, run, texts).examples;
}

/**
 * Lowers each request's token limit so prompt plus completion fit the generator's context. The
 * grammar still bounds the text; a model that would need more simply gets fewer examples parsed.
 */
/** Below this much room an example call cannot write even one example. */
const MIN_EXAMPLE_TOKENS = 32;

async function capToContext(backend: TatraBackend, requests: GenerateRequest[]): Promise<void> {
  for (const r of requests) {
    const promptTokens = await backend.countPromptTokens(r.prompt);
    const room = backend.contextSize - promptTokens - 1;
    if (room < MIN_EXAMPLE_TOKENS) {
      throw new UserError(
        `the generator's context (${backend.contextSize} tokens) is too small: an example prompt needs ${promptTokens} tokens plus room to answer; use a larger context or lower k`,
        'context_too_small',
      );
    }
    if (room < r.maxTokens) r.maxTokens = room;
  }
}

/** The examples of one run: one call per label, decoded in parallel; cached when a cache is given. */
export async function generateRunExamples(opts: GenerateRunExamplesOptions): Promise<RunExamples> {
  const [result] = await generateExamplesForRuns({ ...opts, runs: [opts.run] });
  if (!result) throw new Error('no examples result');
  emitExampleEvents(opts.task, result, opts.onEvent);
  return result;
}

/** The per-label groups of a run's examples (derived from `examples` when `byLabel` was not kept, e.g. read back from a store). */
export function exampleGroups(task: TaskDefinition, result: RunExamples): { label: string | null; examples: Example[]; cached: boolean }[] {
  if (result.byLabel) return result.byLabel;
  if (task.kind === 'math') return [{ label: null, examples: result.examples, cached: result.cached }];
  return task.labels.map((l) => ({ label: l.name, examples: result.examples.filter((e) => e.label === l.name), cached: result.cached }));
}

export function emitExampleEvents(task: TaskDefinition, result: RunExamples, onEvent?: (e: TatraEvent) => void): void {
  if (!onEvent) return;
  for (const group of exampleGroups(task, result)) onEvent({ type: 'examples', run: result.run, label: group.label, examples: group.examples, cached: group.cached });
}
