// The request each server kind needs for one GenerateRequest, and how its answer reads back.
// Pure data in, data out: the request-shape tests pin these against the servers' documented APIs.
//
// - llama-server: its native `/completion` with the prompt rendered by the server's own chat
//   template (`/apply-template`), so the prompt is exact (an assistant prefix is appended as
//   text) and `cache_prompt` reuses the shared prefix in the slot's KV cache; `grammar` is the
//   engine's GBNF as is.
// - vLLM: `/v1/chat/completions` with `structured_outputs` (`choice` for a label set, else the
//   GBNF as `grammar`), or the pre-0.12 `guided_choice` / `guided_grammar`; an assistant prefix
//   is continued with `continue_final_message`.
// - Ollama: its native `/api/chat` with `format` = a JSON schema (label sets only) and
//   `options` (seed, temperature, top_p, num_predict).
// - OpenAI and LM Studio: `/v1/chat/completions` with `response_format` json_schema (label sets only).
//   No `logit_bias`, though both take it: a bias needs the model's token ids, and neither HTTP API
//   tokenizes (LM Studio only in its SDK; OpenAI's ids depend on a tokenizer per model family that a
//   client can only guess), while the strict schema already holds the answer to the set.
// - llama-server label sets also get `logit_bias` on the labels' tokens (its /tokenize) and the
//   labels as stop words: the grammar then costs nothing (see ChoiceTokens).
// - Anything else, and grammars a JSON schema cannot express (examples, paraphrases): free text,
//   which the engine parses and validates as it does every output; the result says so.
import { z } from 'zod';
import type { ConstrainedMode, ServerKind } from '../common/remote';
import type { OutputConstraint } from '../common/tatra';
import type { ChatPrompt, GenerateRequest } from '../engine/backend';
import { literalChoices } from '../engine/literal-choices';

/** Top-k as node-llama-cpp and llama.cpp default it, so sampled text is drawn alike. */
const TOP_K = 40;

export interface ShapedCall {
  /** Path under the server root (`/completion`, `/api/chat`) or the API root (`/chat/completions`). */
  path: string;
  /** Whether `path` is relative to the server root rather than the OpenAI API root (…/v1). */
  fromRoot: boolean;
  body: Record<string, unknown>;
  /** Whether the server is asked to constrain this output. */
  constrained: boolean;
  /** When the answer is a JSON object wrapping the choice: the property holding it. */
  unwrap?: 'answer' | 'string';
  /** llama-server leaves a matched stop word out of `content`; here that word is the answer's end. */
  stopWordIsAnswer?: boolean;
}

export interface ShapedAnswer {
  text: string;
  promptTokens: number | null;
  completionTokens: number | null;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export function chatMessages(prompt: ChatPrompt, withPrefix = true): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (prompt.system !== '') messages.push({ role: 'system', content: prompt.system });
  messages.push({ role: 'user', content: prompt.user });
  if (withPrefix && prompt.assistantPrefix) messages.push({ role: 'assistant', content: prompt.assistantPrefix });
  return messages;
}

function sampling(req: GenerateRequest): { temperature: number; top_p?: number; seed?: number } {
  const temperature = req.temperature ?? 0;
  // Greedy decoding ignores top-p and the seed; sending them anyway would only make servers that
  // validate the pair (temperature 0 with top_p < 1) complain.
  return temperature > 0 ? { temperature, top_p: req.topP ?? 1, seed: req.seed ?? 0 } : { temperature: 0 };
}

/** JSON schema of a label set: an object with one `answer` property (OpenAI's strict mode wants an object root). */
export function choiceSchema(choices: readonly string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: { answer: { type: 'string', enum: [...choices] } },
    required: ['answer'],
    additionalProperties: false,
  };
}

/**
 * A label set as llama-server's tokenizer spells it. llama.cpp samples first as if there were no
 * grammar and applies the grammar to the whole vocabulary (Qwen: 151,936 tokens) only when that
 * token is rejected, which for a model with no idea of the answer is every step and costs more than
 * decoding. Biasing the tokens that spell the choices makes the first sample valid, and the choices
 * as stop words end the request as soon as one is written, instead of one more full-vocabulary step
 * whose only legal token is end-of-generation. The grammar stays in force, so the output is still
 * one of the choices (the in-process backend does the same: llama/choices.ts).
 */
export interface ChoiceTokens {
  choices: string[];
  /** Every token of every choice's tokenization (biased by CHOICE_BIAS). */
  tokens: number[];
  /** Whether the choices can be stop words: none occurs inside another, so a match is a whole answer. */
  stop: boolean;
}

/** Logits added to the choices' tokens (as node-llama-cpp's path does). */
export const CHOICE_BIAS = 100;

/**
 * ChoiceTokens from llama-server's `/tokenize` answers (with_pieces) for each choice; null when a
 * tokenization does not spell its choice back exactly (then the grammar alone decides).
 */
export function choiceTokensFrom(choices: readonly string[], tokenized: readonly unknown[]): ChoiceTokens | null {
  if (choices.length === 0 || tokenized.length !== choices.length) return null;
  const tokens = new Set<number>();
  for (const [i, answer] of tokenized.entries()) {
    const list = (answer as { tokens?: unknown } | null)?.tokens;
    if (!Array.isArray(list) || list.length === 0) return null;
    let spelled = '';
    for (const t of list as { id?: unknown; piece?: unknown }[]) {
      // A piece that is not valid UTF-8 on its own comes back as bytes: not worth the edge case.
      if (typeof t?.id !== 'number' || typeof t.piece !== 'string') return null;
      spelled += t.piece;
      tokens.add(t.id);
    }
    if (spelled !== choices[i]) return null;
  }
  const stop = choices.every((a, i) => choices.every((b, j) => i === j || !b.includes(a)));
  return { choices: [...choices], tokens: [...tokens].sort((a, b) => a - b), stop };
}

/** llama-server's native completion of a prompt already rendered with its chat template. */
export function llamaServerCompletion(renderedPrompt: string, req: GenerateRequest, choice: ChoiceTokens | null = null): ShapedCall {
  const s = sampling(req);
  const body: Record<string, unknown> = {
    prompt: renderedPrompt + (req.prompt.assistantPrefix ?? ''),
    n_predict: req.maxTokens,
    temperature: s.temperature,
    top_k: TOP_K,
    ...(s.top_p !== undefined ? { top_p: s.top_p } : {}),
    ...(s.seed !== undefined ? { seed: s.seed } : {}),
    cache_prompt: true,
    stream: false,
  };
  if (req.grammar !== undefined) body.grammar = req.grammar;
  if (req.grammar !== undefined && choice) {
    body.logit_bias = choice.tokens.map((t) => [t, CHOICE_BIAS]);
    if (choice.stop) body.stop = choice.choices;
  }
  const stopWordIsAnswer = req.grammar !== undefined && !!choice?.stop;
  return { path: '/completion', fromRoot: true, body, constrained: req.grammar !== undefined, ...(stopWordIsAnswer ? { stopWordIsAnswer } : {}) };
}

/** The request for one generation on a server of `kind` offering `mode`. */
export function shapeChatCall(kind: ServerKind, mode: ConstrainedMode, model: string, req: GenerateRequest): ShapedCall {
  const choices = req.grammar === undefined ? null : literalChoices(req.grammar);
  const s = sampling(req);
  const messages = chatMessages(req.prompt);
  const prefix = req.prompt.assistantPrefix !== undefined && req.prompt.assistantPrefix !== '';

  if (kind === 'ollama' && mode !== 'none') {
    const options: Record<string, unknown> = { temperature: s.temperature, num_predict: req.maxTokens, top_k: TOP_K };
    if (s.top_p !== undefined) options.top_p = s.top_p;
    if (s.seed !== undefined) options.seed = s.seed;
    const body: Record<string, unknown> = { model, messages, stream: false, options };
    if (choices && mode === 'ollama-format') body.format = choiceSchema(choices);
    return { path: '/api/chat', fromRoot: true, body, constrained: !!choices && mode === 'ollama-format', ...(choices && mode === 'ollama-format' ? { unwrap: 'answer' as const } : {}) };
  }

  const body: Record<string, unknown> = { model, messages, stream: false, ...s };
  // OpenAI's newer models take max_completion_tokens only; compatible servers take max_tokens.
  if (kind === 'openai') body.max_completion_tokens = req.maxTokens;
  else body.max_tokens = req.maxTokens;
  if (kind === 'vllm') {
    body.top_k = TOP_K;
    if (prefix) {
      body.add_generation_prompt = false;
      body.continue_final_message = true;
    }
  }
  let constrained = false;
  let unwrap: ShapedCall['unwrap'];
  if (req.grammar !== undefined) {
    if (mode === 'structured-outputs') {
      body.structured_outputs = choices ? { choice: choices } : { grammar: req.grammar };
      constrained = true;
    } else if (mode === 'guided') {
      if (choices) body.guided_choice = choices;
      else body.guided_grammar = req.grammar;
      constrained = true;
    } else if (mode === 'gbnf') {
      // llama-server's OpenAI endpoint also takes a raw GBNF grammar.
      body.grammar = req.grammar;
      constrained = true;
    } else if ((mode === 'json-schema' || mode === 'ollama-format') && choices) {
      body.response_format = { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: choiceSchema(choices) } };
      constrained = true;
      unwrap = 'answer';
    }
  }
  return { path: '/chat/completions', fromRoot: false, body, constrained, ...(unwrap ? { unwrap } : {}) };
}

/**
 * How outputs come back on a server of `kind` offering `mode`, for a general GBNF grammar and for a
 * label set: read off the requests shapeChatCall builds (or llama-server's /completion), so what a
 * result records is what was asked of the server.
 */
export function outputConstraintFor(kind: ServerKind, mode: ConstrainedMode): { grammar: OutputConstraint; choice: OutputConstraint } {
  if (kind === 'llama-server' && mode === 'gbnf') return { grammar: 'grammar', choice: 'grammar' };
  const of = (grammar: string): OutputConstraint => {
    const call = shapeChatCall(kind, mode, 'model', { prompt: { system: '', user: '' }, grammar, maxTokens: 1 });
    if (!call.constrained) return 'none';
    if (call.unwrap === 'answer') return 'json-schema';
    if (call.body.grammar !== undefined || call.body.guided_grammar !== undefined || (call.body.structured_outputs as { grammar?: unknown } | undefined)?.grammar !== undefined) return 'grammar';
    return 'choice';
  };
  return { grammar: of('root ::= [a-z]+'), choice: of('root ::= "yes" | "no"') };
}

function count(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

// What each answer must hold, checked by the HTTP client before readAnswer sees it: only what is
// read, loose about the rest (token counts are optional and read leniently by count()).
const completionAnswer = z.looseObject({ content: z.string() });
const ollamaChatAnswer = z.looseObject({ message: z.looseObject({ content: z.string() }) });
const chatChoice = z.union([z.looseObject({ message: z.looseObject({ content: z.string().nullable() }) }), z.looseObject({ text: z.string() })]);
const chatAnswer = z.looseObject({ choices: z.array(chatChoice).min(1) });

/** The schema of the answer to `call`: a server answering anything else is one clear line, not a crash. */
export function answerSchema(call: ShapedCall): z.ZodType<Record<string, unknown>> {
  if (call.path === '/completion') return completionAnswer;
  if (call.path === '/api/chat') return ollamaChatAnswer;
  return chatAnswer;
}

/** Text and token counts from an answer to `call` (checked against answerSchema(call)); null when it has neither shape. */
export function readAnswer(call: ShapedCall, json: unknown): ShapedAnswer | null {
  if (!json || typeof json !== 'object') return null;
  const j = json as Record<string, unknown>;
  let answer: ShapedAnswer | null = null;
  if (call.path === '/completion' && typeof j.content === 'string') {
    const stopWord = call.stopWordIsAnswer && j.stop_type === 'word' && typeof j.stopping_word === 'string' ? j.stopping_word : '';
    answer = { text: j.content + stopWord, promptTokens: count(j.tokens_evaluated), completionTokens: count(j.tokens_predicted) };
  } else if (call.path === '/api/chat') {
    const message = j.message as { content?: unknown } | undefined;
    if (typeof message?.content === 'string') answer = { text: message.content, promptTokens: count(j.prompt_eval_count), completionTokens: count(j.eval_count) };
  } else {
    const choice = Array.isArray(j.choices) ? (j.choices[0] as { message?: { content?: unknown }; text?: unknown } | undefined) : undefined;
    const text = typeof choice?.message?.content === 'string' ? choice.message.content : typeof choice?.text === 'string' ? choice.text : choice?.message?.content === null ? '' : undefined;
    const usage = j.usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
    if (text !== undefined) answer = { text, promptTokens: count(usage?.prompt_tokens), completionTokens: count(usage?.completion_tokens) };
  }
  if (answer && call.unwrap === 'answer') {
    // The schema wraps the label in {"answer": …}; a truncated or odd answer is passed on as it
    // is, and the engine's parser treats it like any unparsable output.
    try {
      const parsed = JSON.parse(answer.text) as { answer?: unknown };
      if (typeof parsed.answer === 'string') answer = { ...answer, text: parsed.answer };
    } catch {
      /* keep the raw text */
    }
  }
  return answer;
}
