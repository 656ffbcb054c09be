// Generator outputs are cached by everything that determines them, so a re-run with another
// evaluator (or a pairing comparison) reuses them byte for byte and the generator's work is done
// once. The engine caches raw texts and re-parses them: parsing is deterministic and cheap.
import { type TaskDefinition } from '../common/task';
import { contentHash, stableStringify } from './hash';

export interface GenerationCache {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
}

/** A cache that lives as long as the process: shared run-scope examples, tests. */
export class MemoryGenerationCache implements GenerationCache {
  private readonly map = new Map<string, string>();
  async get(key: string): Promise<string | undefined> {
    return this.map.get(key);
  }
  async set(key: string, value: string): Promise<void> {
    this.map.set(key, value);
  }
  get size(): number {
    return this.map.size;
  }
  keys(): string[] {
    return [...this.map.keys()];
  }
}

export interface GenerationCacheKeyParts {
  /** `TatraBackend.id` of the generator. */
  generator: string;
  /** `taskContentHash(task)`: any edit to the task's prompts invalidates its entries. */
  taskHash: string;
  stage: 'examples' | 'paraphrases';
  /** The label an example call was for (null for math and for paraphrases). */
  label: string | null;
  /** Examples asked for in the call, or paraphrases wanted. */
  count: number;
  /** The sampling seed of the call. */
  seed: number;
  /** The input: always for paraphrases, for examples only with scope `input`. */
  input?: string;
}

/** Version of the prompt templates and grammars; bump it when they change, so old entries are not reused. */
export const PROMPT_VERSION = 1;

export function generationCacheKey(parts: GenerationCacheKeyParts): string {
  const input = parts.input === undefined ? '-' : contentHash(parts.input);
  return ['tatra', `v${PROMPT_VERSION}`, parts.stage, contentHash(parts.generator), parts.taskHash, parts.label ?? '-', parts.count, parts.seed, input].join(':');
}

/**
 * What a paraphrase output's key says about where it is used: the run's seed and the input, the
 * last two fields of `generationCacheKey`. A job's store uses it to find, among the outputs it has
 * just read or written, the one a row's run was paraphrased from (paraphraseOriginOfKey), so the
 * row can refer to that text instead of holding the paraphrases again.
 */
export function paraphraseOrigin(seed: number, input: string): string {
  return `${seed}:${contentHash(input)}`;
}

/** `paraphraseOrigin` of the output a key names; null for a key that is not a paraphrase output's. */
export function paraphraseOriginOfKey(key: string): string | null {
  const fields = key.split(':');
  return fields.length === 9 && fields[2] === 'paraphrases' ? `${fields[7]}:${fields[8]}` : null;
}

// A job hands the same task object to every row: its hash is taken once, not per row.
const taskHashes = new WeakMap<TaskDefinition, string>();

/** Hash of everything in a task that reaches a prompt or a grammar. */
export function taskContentHash(task: TaskDefinition): string {
  let hash = taskHashes.get(task);
  if (hash === undefined) {
    hash = contentHash(stableStringify(task));
    taskHashes.set(task, hash);
  }
  return hash;
}
