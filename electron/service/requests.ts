// What `tatra api` accepts, checked with zod before anything runs. Chat requests are OpenAI's:
// fields TATRA has no use for (temperature, max_tokens, tools…) are ignored, as OpenAI-compatible
// servers do, so any client works unchanged. TATRA's own settings ride in an extra `tatra` object
// (strict: a misspelt setting is an error, not a silent default); the seed is OpenAI's own `seed`.
import { z } from 'zod';
import { TatraSettings } from '../common/tatra';
import { badRequest } from './errors';

/** Per-request settings: each falls back to the server's default (`tatra api -n … -k … -r …`). */
export const TatraOverrides = z
  .strictObject({
    n: TatraSettings.shape.n,
    k: TatraSettings.shape.k,
    r: TatraSettings.shape.r,
    scope: TatraSettings.shape.scope,
    early_stop: z.boolean(),
  })
  .partial();
export type TatraOverrides = z.infer<typeof TatraOverrides>;

const Seed = TatraSettings.shape.seed;

const ContentPart = z.object({ type: z.string(), text: z.string().optional() });
const Message = z.object({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentPart)]).nullish(),
});

export const ChatCompletionRequest = z.object({
  model: z.string().min(1),
  messages: z.array(Message).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  seed: Seed.nullish(),
  /** OpenAI's number of choices, not TATRA's paraphrases (that is `tatra.n`). */
  n: z
    .number()
    .int()
    .refine((n) => n === 1, { message: 'TATRA answers with one choice; the paraphrase count is tatra.n' })
    .nullish(),
  tatra: TatraOverrides.nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** Inputs one /v1/classify request may carry: thousands, streamed back as they are decided. */
export const MAX_BATCH_INPUTS = 50_000;

export const ClassifyRequest = z.strictObject({
  model: z.string().min(1),
  inputs: z.array(z.string()).min(1).max(MAX_BATCH_INPUTS),
  seed: Seed.nullish(),
  tatra: TatraOverrides.nullish(),
  /** Results as JSON lines, one per input in order, each as soon as it and those before it are done. */
  stream: z.boolean().nullish(),
});
export type ClassifyRequest = z.infer<typeof ClassifyRequest>;

/** The input of a chat request: the last user message's text. */
export function lastUserText(messages: ChatCompletionRequest['messages']): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (!m.content) break;
    const other = m.content.find((p) => p.type !== 'text');
    if (other) throw badRequest(`messages[${i}] has a "${other.type}" part; TATRA classifies text only`, 'unsupported_content', `messages.${i}.content`);
    return m.content.map((p) => p.text ?? '').join('\n');
  }
  throw badRequest('no user message with text: the last user message is the input to classify', 'input_empty', 'messages');
}

/** The server's defaults with a request's seed and `tatra` settings on top. */
export function settingsFor(defaults: TatraSettings, seed: number | null | undefined, o: TatraOverrides | null | undefined): TatraSettings {
  return {
    ...defaults,
    ...(seed != null ? { seed } : {}),
    ...(o?.n !== undefined ? { n: o.n } : {}),
    ...(o?.k !== undefined ? { k: o.k } : {}),
    ...(o?.r !== undefined ? { r: o.r } : {}),
    ...(o?.scope !== undefined ? { scope: o.scope } : {}),
    ...(o?.early_stop !== undefined ? { earlyStop: o.early_stop } : {}),
  };
}
