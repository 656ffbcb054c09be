// The models of a plan (`--dry-run`, the app's plan beside Start): a local GGUF's tokenizer alone
// (llama/tokens.ts), or a remote model's identity and a character-based estimate of its tokens
// (its server is not asked: a plan never touches the network). Each file is opened once.
import type { ModelSpec } from '../common/model-spec';
import type { RemoteModelEntry } from '../common/remote';
import type { Price } from '../common/plan';
import type { ChatPrompt } from '../engine/backend';
import type { PlannedModel } from '../engine/cost';
import { remoteBackendId, type RemoteLookup } from '../remote';
import { loadTokenCounter } from '../llama/tokens';

export interface PlanModel extends PlannedModel {
  spec: string;
  remote: boolean;
  /** From the remote entry, when it has one. */
  price: Price | null;
}

/** About four characters a token in English text, plus the chat template's few tokens per turn. */
export function estimatePromptTokens(prompt: ChatPrompt): number {
  const chars = prompt.system.length + prompt.user.length + (prompt.assistantPrefix?.length ?? 0);
  return Math.ceil(chars / 4) + 12;
}

/** A remote server's context when the plan cannot ask it (the remote backend's own default). */
const REMOTE_CONTEXT = 4096;

export class PlanModels {
  private readonly open = new Map<string, Promise<PlanModel & { dispose(): Promise<void> }>>();

  constructor(private readonly opts: { lookup?: RemoteLookup; contextSize?: number } = {}) {}

  get(spec: ModelSpec): Promise<PlanModel> {
    let m = this.open.get(spec.text);
    if (!m) {
      m = this.load(spec);
      this.open.set(spec.text, m);
      m.catch(() => this.open.delete(spec.text));
    }
    return m;
  }

  async dispose(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(all.map(async (m) => (await m).dispose()));
  }

  private async load(spec: ModelSpec): Promise<PlanModel & { dispose(): Promise<void> }> {
    if (spec.kind === 'gguf') {
      const local = await loadTokenCounter(spec.path, this.opts.contextSize !== undefined ? { contextSize: this.opts.contextSize } : {});
      return { ...local, spec: spec.text, remote: false, price: null };
    }
    let entry: Pick<RemoteModelEntry, 'urls' | 'model' | 'price'>;
    if (spec.kind === 'inline') entry = { urls: [spec.url], model: spec.model };
    else if (this.opts.lookup) entry = await this.opts.lookup.entry(spec.entry);
    else throw new Error(`${spec.text} needs the model library of a data folder`);
    return {
      spec: spec.text,
      remote: true,
      id: remoteBackendId(entry.model, entry.urls),
      contextSize: this.opts.contextSize ?? REMOTE_CONTEXT,
      price: entry.price ?? null,
      counter: { exact: false, count: (prompt) => Promise.resolve(estimatePromptTokens(prompt)), countText: (text) => Math.max(1, Math.ceil(text.length / 4)) },
      dispose: () => Promise.resolve(),
    };
  }
}
