// The shapes `tatra api` answers with: OpenAI's chat completion and its stream chunks (the label
// as the assistant's content), and beside them a `tatra` object with what the vote was. The same
// `tatra` object is each row of /v1/classify, so one parser reads both.
import { randomBytes } from 'node:crypto';
import type { TatraEvent, TatraResult } from '../common/tatra';
import type { Target } from './catalog';

export function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('base64url')}`;
}

/** What TATRA adds to an answer. Snake case, like the OpenAI fields around it. */
export function tatraSummary(target: Target, result: TatraResult, cached: boolean) {
  const stages = Object.fromEntries(
    Object.entries(result.stages).map(([name, s]) => [name, { calls: s.calls, prompt_tokens: s.promptTokens, completion_tokens: s.completionTokens, ms: Math.round(s.ms) }]),
  );
  const all = Object.values(result.stages);
  const s = result.settings;
  return {
    task: target.served.task.id,
    pairing: target.pairing.name,
    label: result.label,
    confidence: result.confidence,
    votes: result.votes,
    tie_break: result.tieBreak,
    decided_early: result.decidedEarly,
    votes_cast: result.votesCast,
    calls_saved: result.callsSaved,
    calls: all.reduce((n, x) => n + x.calls, 0),
    tokens: { prompt: all.reduce((n, x) => n + x.promptTokens, 0), completion: all.reduce((n, x) => n + x.completionTokens, 0) },
    stages,
    deterministic: result.deterministic,
    /** From the result cache: no model was called for this answer (`calls` and `tokens` are what it took when computed). */
    cached,
    settings: { n: s.n, k: s.k, r: s.r, seed: s.seed, scope: s.scope, early_stop: s.earlyStop === true },
    ms: Math.round(result.totalMs),
  };
}
export type TatraSummary = ReturnType<typeof tatraSummary>;

/** OpenAI's usage: what this request spent (nothing when the answer came from the cache). */
export function usage(summary: TatraSummary) {
  const prompt = summary.cached ? 0 : summary.tokens.prompt;
  const completion = summary.cached ? 0 : summary.tokens.completion;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

export function chatCompletion(id: string, created: number, target: Target, summary: TatraSummary) {
  return {
    id,
    object: 'chat.completion' as const,
    created,
    model: target.id,
    choices: [{ index: 0, message: { role: 'assistant' as const, content: summary.label ?? '', refusal: null }, logprobs: null, finish_reason: 'stop' as const }],
    usage: usage(summary),
    system_fingerprint: null,
    tatra: summary,
  };
}

/** One chunk of a streamed completion; `extra` goes beside `choices` (TATRA's stage progress, the summary, usage). */
export function chunk(id: string, created: number, target: Target, delta: { role?: 'assistant'; content?: string }, finishReason: 'stop' | null, extra: Record<string, unknown> = {}) {
  return {
    id,
    object: 'chat.completion.chunk' as const,
    created,
    model: target.id,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...extra,
  };
}

/**
 * A stage that finished, as a stream shows it: each run's examples (per label) and paraphrases,
 * and each evaluation of a variant. Null for the engine's bookkeeping events (run start, done).
 */
export function stageProgress(event: TatraEvent) {
  switch (event.type) {
    case 'examples':
      return { stage: 'examples' as const, run: event.run, label: event.label, count: event.examples.length, cached: event.cached };
    case 'paraphrases':
      return { stage: 'paraphrases' as const, run: event.run, paraphrases: event.paraphrases, fallback: event.fallback?.kind ?? null, cached: event.cached };
    case 'prediction':
      return { stage: 'evaluation' as const, run: event.run, variant: event.prediction.variant, label: event.prediction.label };
    default:
      return null;
  }
}
