// Shapes the TATRA engine produces and consumes: settings, results and the events it streams.
// Zod schemas, because these cross process boundaries (IPC, WebSocket, SQLite, --json output);
// the engine's TypeScript types are inferred from them so the two can never drift apart.
// common/: no Node, no DOM.
import { z } from 'zod';
import { EARLY_STOP_CONFIDENCE, INT_SETTINGS, SCOPE_SETTING, SCOPES, type IntSettingName } from './settings';
import { safeRecord } from './records';

export const ExampleScope = z.enum(SCOPES);
export type ExampleScope = z.infer<typeof ExampleScope>;

function intSetting(name: IntSettingName) {
  const b = INT_SETTINGS[name];
  return z.number().int().min(b.min).max(b.max);
}

export const TatraSettings = z.object({
  /** Paraphrases per run (0 allowed: the original only). */
  n: intSetting('n'),
  /** Synthetic few-shot examples per run. */
  k: intSetting('k'),
  /** Independent runs. */
  r: intSetting('r'),
  /** Base seed; run j uses seed + 10000·j. */
  seed: intSetting('seed'),
  /** `run`: examples made once per run and shared by every input (the paper); `input`: per input. */
  scope: ExampleScope,
  /**
   * Stop launching runs once the vote is decided (the leader has more votes than the runner-up
   * plus every vote still to come); runs then go in waves. Absent: off. The faces choose the
   * default: on for a single input, off for evaluations (accuracy after 1…r runs needs every run).
   */
  earlyStop: z.boolean().optional(),
  /**
   * With earlyStop, the confident rule's level P: stop sooner, so that under the engine's stated
   * model of the votes the stopped vote disagrees with the full vote in at most 1 − P of inputs on
   * average (not for each input: docs/method.md §10, engine/confident-limit.ts). Absent or 1: the
   * exact rule above.
   */
  earlyStopConfidence: z.number().min(EARLY_STOP_CONFIDENCE.min).max(1).optional(),
});
export type TatraSettings = z.infer<typeof TatraSettings>;

/** The paper's recommended cost/quality trade-off, with a few runs (docs/method.md §2). */
export const DEFAULT_SETTINGS: TatraSettings = {
  n: INT_SETTINGS.n.default,
  k: INT_SETTINGS.k.default,
  r: INT_SETTINGS.r.default,
  seed: INT_SETTINGS.seed.default,
  scope: SCOPE_SETTING.default,
};

export const Example = z.object({
  text: z.string(),
  /** For classification and multiple choice, one of the task's labels; for math, the answer. */
  label: z.string(),
});
export type Example = z.infer<typeof Example>;

export const ExampleFilterCounts = z.object({
  wrongLabel: z.number().int(),
  duplicate: z.number().int(),
  malformed: z.number().int(),
  empty: z.number().int(),
  /** Valid examples dropped because the pool held more than k. */
  overK: z.number().int(),
});
export type ExampleFilterCounts = z.infer<typeof ExampleFilterCounts>;

export const ParaphraseFallback = z.object({
  /** `padded`: fewer than n parsed, the last one repeated; `original`: none parsed, copies of the input. */
  kind: z.enum(['padded', 'original']),
  parsed: z.number().int(),
  wanted: z.number().int(),
});
export type ParaphraseFallback = z.infer<typeof ParaphraseFallback>;

export const Prediction = z.object({
  /** 0 is the original input, 1..n the paraphrases. */
  variant: z.number().int().min(0),
  /** Voting label: a task label, or the normalised math answer; null is no vote. */
  label: z.string().nullable(),
  /** What the evaluator wrote, before mapping. */
  raw: z.string(),
});
export type Prediction = z.infer<typeof Prediction>;

export const StageStats = z.object({
  calls: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  ms: z.number(),
});
export type StageStats = z.infer<typeof StageStats>;

export const StageName = z.enum(['examples', 'paraphrases', 'evaluation']);
export type StageName = z.infer<typeof StageName>;

export const RunResult = z.object({
  run: z.number().int(),
  seed: z.number().int(),
  examples: z.array(Example),
  paraphrases: z.array(z.string()),
  predictions: z.array(Prediction),
  filtered: ExampleFilterCounts,
  fallback: ParaphraseFallback.nullable(),
  /** True when this run's examples came from a cache (shared run-scope examples or a re-run). */
  examplesCached: z.boolean(),
  paraphrasesCached: z.boolean(),
});
export type RunResult = z.infer<typeof RunResult>;

/**
 * How a backend held its outputs to the engine's grammars: `grammar` (the GBNF as is: in-process
 * llama.cpp, llama-server, vLLM's grammar), `choice` (a server-side choice among the literal
 * labels: vLLM), `json-schema` (a JSON-schema enum of the labels: OpenAI, LM Studio, Ollama), `none`
 * (free text, parsed and validated as the engine parses every output; nothing stopped the model
 * from writing something else, which then counts as no vote or a dropped example).
 */
export const OutputConstraint = z.enum(['grammar', 'choice', 'json-schema', 'none']);
export type OutputConstraint = z.infer<typeof OutputConstraint>;

export const TatraResult = z.object({
  taskId: z.string(),
  input: z.string(),
  settings: TatraSettings,
  /** Winning label; null only when no prediction was a valid vote. */
  label: z.string().nullable(),
  /** Winner's share of valid votes, 0..1. */
  confidence: z.number(),
  /** Valid votes per label, every task label present (0 when none). */
  votes: safeRecord(z.number().int()),
  /** Which tie-break rule decided, when there was a tie. */
  tieBreak: z.enum(['none', 'first-original', 'originals-majority', 'default-label', 'label-order']),
  /** How each role's outputs were constrained (examples and paraphrases: generator; answers: evaluator). */
  constrained: z.object({ generator: OutputConstraint, evaluator: OutputConstraint }),
  runs: z.array(RunResult),
  filteredExamples: z.number().int(),
  fallbacks: z.number().int(),
  stages: z.record(StageName, StageStats),
  totalMs: z.number(),
  /**
   * Whether both backends promise that the same inputs, seed and settings give this very result
   * again (in-process inference on the CPU does; a remote server or a GPU build does not).
   */
  deterministic: z.boolean(),
  /** The vote was decided before all r runs, and the remaining runs were never launched. */
  decidedEarly: z.boolean(),
  /** Predictions made ((n+1) per run done); `confidence` and `votes` are over these. */
  votesCast: z.number().int(),
  /** Model calls the runs not launched would have made as planned (without caches or deduplication). */
  callsSaved: z.number().int(),
  /**
   * The early-stop rule in force (null: every run was made): `exact` (p 1) or `confident` at level
   * p; `risk` is the probability bound the vote stopped at (0 for a decided vote), absent when it
   * ran to the end.
   */
  earlyStop: z.object({ rule: z.enum(['exact', 'confident']), p: z.number(), risk: z.number().optional() }).nullable().default(null),
});
export type TatraResult = z.infer<typeof TatraResult>;

/** What the engine streams while it works, in order, so a UI can fill in live. */
export const TatraEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('run-start'), run: z.number().int(), seed: z.number().int() }),
  z.object({
    type: z.literal('examples'),
    run: z.number().int(),
    /** The label these examples were requested for (null for math tasks). */
    label: z.string().nullable(),
    examples: z.array(Example),
    cached: z.boolean(),
  }),
  z.object({
    type: z.literal('paraphrases'),
    run: z.number().int(),
    paraphrases: z.array(z.string()),
    fallback: ParaphraseFallback.nullable(),
    cached: z.boolean(),
  }),
  z.object({ type: z.literal('prediction'), run: z.number().int(), prediction: Prediction }),
  z.object({ type: z.literal('done'), result: TatraResult }),
]);
export type TatraEvent = z.infer<typeof TatraEvent>;

/** Run j's seed (reference code). */
export function runSeed(seed: number, run: number): number {
  return seed + 10000 * run;
}
