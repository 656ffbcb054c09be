// Fast path for grammars that allow only a fixed set of strings (the evaluator's label set).
//
// llama.cpp first samples as if there were no grammar and applies the grammar to the whole
// vocabulary only when that token is rejected. A model with no idea of the answer (random weights,
// or a weak model) gets rejected at every step, and applying a grammar to Qwen's 151k tokens costs
// ~75-150 ms a step on this CPU: more than decoding. Biasing the tokens that spell the choices makes
// the first sample valid, and stopping as soon as a complete choice that nothing extends has been
// written saves the final step, whose only legal token is end-of-generation. The grammar stays in
// force, so the output is still guaranteed to be one of the choices.
import type { LlamaModel, Token, TokenBias } from 'node-llama-cpp';
import { loadedNodeLlamaCpp } from './module';
import { literalChoices } from '../engine/literal-choices';

export { literalChoices };

interface TrieNode {
  children: Map<Token, TrieNode>;
  terminal: boolean;
  bias?: TokenBias;
}

/** Token paths spelling each choice, with the biases that steer sampling along them. */
export class ChoiceTrie {
  private constructor(
    private readonly model: LlamaModel,
    readonly root: TrieNode,
  ) {}

  /**
   * A trie for `choices` as the model tokenizes them, or null when that is unsafe: a choice whose
   * tokens do not spell it back exactly, or a choice that is a prefix of another (ending there
   * needs end-of-generation, which TokenBias cannot favour).
   */
  static build(model: LlamaModel, choices: readonly string[], context: readonly Token[]): ChoiceTrie | null {
    const root: TrieNode = { children: new Map(), terminal: false };
    for (const choice of choices) {
      const tokens = [model.tokenize(choice, false, 'trimLeadingSpace'), model.tokenize(choice, false)].find(
        (t) => t.length > 0 && model.detokenize(t, false, context) === choice,
      );
      if (!tokens) return null;
      let node = root;
      for (const token of tokens) {
        let next = node.children.get(token);
        if (!next) {
          next = { children: new Map(), terminal: false };
          node.children.set(token, next);
        }
        node = next;
      }
      node.terminal = true;
    }
    const stack = [root];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.terminal && node.children.size > 0) return null;
      stack.push(...node.children.values());
    }
    return new ChoiceTrie(model, root);
  }

  /** The bias for the next token at `node`: +100 logits on every token that continues a choice. */
  biasAt(node: TrieNode): TokenBias {
    if (!node.bias) {
      node.bias = new (loadedNodeLlamaCpp().TokenBias)(this.model.tokenizer);
      for (const token of node.children.keys()) node.bias.set(token, { logit: 100 });
    }
    return node.bias;
  }
}

export type { TrieNode as ChoiceNode };
