// How a prompt becomes the tokens LlamaBackend decodes: the model's chat template (or a fixed one
// when the GGUF has none), rendered and tokenized as one text. The backend and the plan's token
// counter (tokens.ts) both render here, so a count is the count the backend reports.
import type { ChatHistoryItem, ChatWrapper, LlamaModel, Token } from 'node-llama-cpp';
import { loadedNodeLlamaCpp } from './module';
import type { ChatPrompt } from '../engine/backend';
import type { GgufInspection } from './gguf';

// An explicit template for GGUFs that carry none (e.g. stories260K): node-llama-cpp would guess
// one from the name, and a guess would make the rendered prompt depend on a file name.
function fallbackChatWrapper(): ChatWrapper {
  return new (loadedNodeLlamaCpp().GeneralChatWrapper)();
}

/** The chat wrapper a model's prompts are rendered with: its own template, or a fixed one when the GGUF has none. */
export function chatWrapperFor(model: LlamaModel, inspection: Pick<GgufInspection, 'hasChatTemplate'>): ChatWrapper {
  return inspection.hasChatTemplate ? loadedNodeLlamaCpp().resolveChatWrapper(model) : fallbackChatWrapper();
}

/** A prompt's tokens as the backend decodes them (the chat template's rendering, tokenized as one text). */
export function renderPromptTokens(chatWrapper: ChatWrapper, model: LlamaModel, prompt: ChatPrompt, user = prompt.user): Token[] {
  const items: ChatHistoryItem[] = [];
  if (prompt.system !== '') items.push({ type: 'system', text: prompt.system });
  items.push({ type: 'user', text: user }, { type: 'model', response: prompt.assistantPrefix ? [prompt.assistantPrefix] : [] });
  const { contextText } = chatWrapper.generateContextState({ chatHistory: items });
  return contextText.tokenize(model.tokenizer);
}
