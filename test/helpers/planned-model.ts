// A model as a plan sees it, without a tokenizer: its prompts count a token per 4 characters
// (as a remote model's are estimated). For tests of how plans walk and price their rows.
import type { ChatPrompt } from '../../electron/engine/backend';
import type { PlanModelInfo } from '../../electron/jobs/plan';

export function charCountedModel(id: string): PlanModelInfo {
  return {
    id,
    spec: `${id}.gguf`,
    remote: false,
    price: null,
    contextSize: 4096,
    counter: { count: (p: ChatPrompt) => Promise.resolve(Math.ceil((p.system.length + p.user.length) / 4)), countText: (t: string) => Math.ceil(t.length / 4), exact: false },
  };
}
