// Prompt token counts for a plan, without loading a model for generation: a GGUF's vocabulary
// alone (node-llama-cpp's `vocabOnly`: no weights, no context), rendered with the very chat
// wrapper LlamaBackend uses, so a count here is the count the backend reports.
import type { LlamaModel } from 'node-llama-cpp';
import type { ChatPrompt } from '../engine/backend';
import type { PlannedModel } from '../engine/cost';
import { chatWrapperFor, renderPromptTokens } from './chat-template';
import { llamaBackendId } from './inspection';
import { inspectGguf } from './gguf';
import { getLlamaRuntime } from './runtime';

export interface TokenCounterModel extends PlannedModel {
  dispose(): Promise<void>;
}

/**
 * A local model's tokenizer and chat template as a PlannedModel. `contextSize`: as LlamaBackend
 * would load it (given, or min(4096, trained)).
 */
export async function loadTokenCounter(modelPath: string, opts: { contextSize?: number } = {}): Promise<TokenCounterModel> {
  // The process's Llama first, as every model load does (its logger then catches llama.cpp's warnings).
  const llama = await getLlamaRuntime();
  const inspection = await inspectGguf(modelPath);
  const model: LlamaModel = await llama.loadModel({ modelPath, vocabOnly: true, gpuLayers: 0 });
  const wrapper = chatWrapperFor(model, inspection);
  const counted = new Map<string, number>();
  return {
    id: llamaBackendId(inspection),
    contextSize: opts.contextSize ?? Math.min(4096, inspection.contextLength ?? 4096),
    counter: {
      exact: true,
      count(prompt: ChatPrompt): Promise<number> {
        const key = `${prompt.system}\u0000${prompt.user}\u0000${prompt.assistantPrefix ?? ''}`;
        let n = counted.get(key);
        if (n === undefined) {
          n = renderPromptTokens(wrapper, model, prompt).length;
          if (counted.size > 4096) counted.clear();
          counted.set(key, n);
        }
        return Promise.resolve(n);
      },
      countText: (text) => model.tokenize(text).length,
    },
    dispose: () => model.dispose(),
  };
}
