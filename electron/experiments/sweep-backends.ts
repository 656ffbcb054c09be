// The evaluator a sweep's jobs see: the pool's backend, wrapped so the sweep evaluates a prompt
// once for all its jobs. What it really sends is counted by the jobs' usage meter beneath it
// (usage.ts), like every job's.
//
// The generator needs no sharing of its own here: its examples and paraphrases already go through
// the generation cache, keyed by everything that determines them. The evaluator's calls are
// greedy, so a request with the same prompt, grammar and token limit on the same model has one
// answer; the original input's evaluation under a run's examples is such a request for every n,
// and the shared cache answers it after the first job. Sampled requests are never shared.
import { z } from 'zod';
import { contentHash, stableStringify } from '../engine/hash';
import { PROMPT_VERSION } from '../engine/cache';
import { type GenerateRequest, type GenerateResult, type GenerateResultListener, type TatraBackend, withGenerate } from '../engine/backend';

/** Where shared evaluations are kept (the job store's cache table in a sweep). */
export interface EvaluationStore {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

/** Everything that determines a greedy request's output, but not its scheduling hints. */
export function evaluationCacheKey(backendId: string, req: GenerateRequest): string {
  const identity = stableStringify({
    prompt: { system: req.prompt.system, user: req.prompt.user, assistantPrefix: req.prompt.assistantPrefix ?? null },
    grammar: req.grammar ?? null,
    maxTokens: req.maxTokens,
  });
  return ['tatra', `v${PROMPT_VERSION}`, 'evaluation', contentHash(backendId), contentHash(identity)].join(':');
}

function isGreedy(req: GenerateRequest): boolean {
  return (req.temperature ?? 0) === 0;
}

/**
 * An answer as kept: `[text, promptTokens, completionTokens, ms]`, the time to a tenth of a
 * millisecond. A sweep keeps one per distinct evaluation (most of its database), so the
 * field names of the object form, which entries written before still have, are not repeated in each.
 */
function storedForm(r: GenerateResult): string {
  return JSON.stringify([r.text, r.promptTokens, r.completionTokens, Math.round(r.ms * 10) / 10]);
}

const StoredAnswer = z.union([
  z.tuple([z.string(), z.number(), z.number(), z.number()]).transform(([text, promptTokens, completionTokens, ms]) => ({ text, promptTokens, completionTokens, ms })),
  // As entries written before the tuple have it.
  z.object({ text: z.string(), promptTokens: z.number(), completionTokens: z.number(), ms: z.number() }),
]);

function parseStored(value: string): GenerateResult | undefined {
  try {
    const parsed = StoredAnswer.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Wraps an evaluator: greedy requests answered before (by any job of the sweep) come from `store`,
 * with the tokens and time they cost then, and are not sent again.
 */
export function sweepBackend(inner: TatraBackend, store: EvaluationStore): TatraBackend {
  // Answers from the store are what the inner backend gave: the wrapper keeps its promises.
  return withGenerate(inner, async (requests: readonly GenerateRequest[], onResult?: GenerateResultListener): Promise<GenerateResult[]> => {
    const results: (GenerateResult | undefined)[] = new Array(requests.length);
    const keys = requests.map((r) => (isGreedy(r) ? evaluationCacheKey(inner.id, r) : null));
    const sent: number[] = [];
    requests.forEach((_, i) => {
      const key = keys[i];
      const hit = key ? store.get(key) : undefined;
      const stored = hit === undefined ? undefined : parseStored(hit);
      if (stored) results[i] = stored;
      else sent.push(i);
    });
    results.forEach((r, i) => (r ? onResult?.(i, r) : undefined));
    if (sent.length > 0) {
      const fresh = await inner.generate(
        sent.map((i) => requests[i]!),
        onResult && ((j, r) => onResult(sent[j]!, r)),
      );
      sent.forEach((i, j) => {
        const r = fresh[j]!;
        results[i] = r;
        const key = keys[i];
        if (key) store.set(key, storedForm(r));
      });
    }
    return results as GenerateResult[];
  });
}
