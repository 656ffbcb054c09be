// A TatraBackend whose outputs a test scripts: it pins the engine's exact semantics (what was
// asked, with which seed, in which batch) where a real model's text would be noise. Every
// request is recorded. Real inference is tested elsewhere; this is for exact semantics only.
import { type ChatPrompt, type GenerateRequest, type GenerateResult, type GenerateResultListener, type LoadedBackend } from '../../electron/engine/backend';
import { onAbort } from '../../electron/common/abort';

export type RequestStage = 'examples' | 'paraphrases' | 'evaluation';

/** Which stage a request belongs to, by its sampling: examples 0.6, paraphrases 0.9, evaluation greedy. */
export function requestStage(req: GenerateRequest): RequestStage {
  if (req.temperature === 0.6) return 'examples';
  if (req.temperature === 0.9) return 'paraphrases';
  return 'evaluation';
}

/** The label an example request is for (null for math), read from the prompt. */
export function requestedLabel(req: GenerateRequest): string | null {
  return /^Every example's label is: (.+)$/m.exec(req.prompt.user)?.[1] ?? null;
}

/** The candidate an evaluation request is about (the text after the last input-name line). */
export function evaluatedCandidate(req: GenerateRequest): string {
  const lines = req.prompt.user.trimEnd().split('\n');
  const line = lines[lines.length - 2] ?? '';
  const m = /^[A-Za-z ]+: (.*)$/.exec(line);
  const text = m?.[1] ?? line;
  return text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
}

/** The input a paraphrase request is about (the prompt's last line). */
export function paraphrasedInput(req: GenerateRequest): string {
  const lines = req.prompt.user.split('\n');
  return lines[lines.length - 1] ?? '';
}

/** Examples in the strict format, numbered from 1, for a scripted example call. */
export function formatScriptedExamples(inputName: string, answerName: string, items: readonly { text: string; label: string }[]): string {
  return items.map((it, i) => `Example${i + 1}:\n${inputName}: "${it.text}"\n${answerName}: ${it.label}`).join('\n\n');
}

export interface ScriptContext {
  /** Position of this request in its batch. */
  index: number;
  /** Which generate() call this is (0-based, over the backend's life). */
  batch: number;
  stage: RequestStage;
}

export type ScriptOutput = string | Partial<GenerateResult> & { text: string };
export type Script = (req: GenerateRequest, ctx: ScriptContext) => ScriptOutput | Promise<ScriptOutput>;

export interface ScriptedBackendOptions {
  id?: string;
  contextSize?: number;
  /** Tokens per prompt: ceil(characters / charsPerToken); default 4. */
  charsPerToken?: number;
  /** Milliseconds each batch takes (lets abort tests land mid-batch). */
  delayMs?: number;
  /** What the backend declares (default true: a script is a function of the request). */
  deterministic?: boolean;
}

export class ScriptedBackend implements LoadedBackend {
  readonly id: string;
  readonly contextSize: number;
  readonly deterministic: boolean;
  /** Every request, in order. */
  readonly requests: GenerateRequest[] = [];
  /** Every generate() call's requests, one array per call. */
  readonly batches: GenerateRequest[][] = [];
  countCalls = 0;
  disposed = false;
  private readonly charsPerToken: number;
  private readonly delayMs: number;

  constructor(
    private readonly script: Script,
    opts: ScriptedBackendOptions = {},
  ) {
    this.id = opts.id ?? 'scripted';
    this.contextSize = opts.contextSize ?? 8192;
    this.charsPerToken = opts.charsPerToken ?? 4;
    this.delayMs = opts.delayMs ?? 0;
    this.deterministic = opts.deterministic ?? true;
  }

  private tokens(prompt: ChatPrompt): number {
    return Math.ceil((prompt.system.length + prompt.user.length) / this.charsPerToken);
  }

  async countPromptTokens(prompt: ChatPrompt): Promise<number> {
    this.countCalls++;
    return this.tokens(prompt);
  }

  async generate(requests: readonly GenerateRequest[], onResult?: GenerateResultListener): Promise<GenerateResult[]> {
    const batch = this.batches.length;
    this.batches.push([...requests]);
    this.requests.push(...requests);
    for (const r of requests) r.signal?.throwIfAborted();
    if (this.delayMs > 0) {
      // Each request waits on its signal as a real backend's do (onAbort: one listener per signal).
      await new Promise<void>((resolve, reject) => {
        const forgets: (() => void)[] = [];
        const timer = setTimeout(() => {
          for (const f of forgets) f();
          resolve();
        }, this.delayMs);
        for (const r of requests) {
          if (!r.signal) continue;
          forgets.push(
            onAbort(r.signal, () => {
              clearTimeout(timer);
              for (const f of forgets) f();
              reject(r.signal!.reason);
            }),
          );
        }
      });
    }
    const out: GenerateResult[] = [];
    for (const [index, req] of requests.entries()) {
      const o = await this.script(req, { index, batch, stage: requestStage(req) });
      const text = typeof o === 'string' ? o : o.text;
      out.push({
        text,
        promptTokens: typeof o === 'string' || o.promptTokens === undefined ? this.tokens(req.prompt) : o.promptTokens,
        completionTokens: typeof o === 'string' || o.completionTokens === undefined ? Math.max(1, Math.ceil(text.length / this.charsPerToken)) : o.completionTokens,
        ms: typeof o === 'string' || o.ms === undefined ? 1 : o.ms,
      });
      onResult?.(index, out[index]!);
    }
    return out;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }

  /** Requests of one stage, in order. */
  stage(stage: RequestStage): GenerateRequest[] {
    return this.requests.filter((r) => requestStage(r) === stage);
  }
}

/**
 * A well-behaved scripted model for a task: valid examples for the requested label (texts made
 * unique by seed and position), `Paraphrase i of <input>` lines, and for evaluation the answer
 * `answer(candidate)` (default: the first label, or `Final Answer: 42` for math).
 */
export function politeScript(opts: {
  inputName?: string;
  answerName?: string;
  mathAnswer?: string;
  answer?: (candidate: string, req: GenerateRequest) => string;
  firstLabel?: string;
}): Script {
  const inputName = opts.inputName ?? 'Sentence';
  const answerName = opts.answerName ?? 'Label';
  return (req) => {
    const stage = requestStage(req);
    if (stage === 'examples') {
      const label = requestedLabel(req);
      const count = Number(/Write exactly (\d+)/.exec(req.prompt.user)?.[1] ?? '1');
      const items = Array.from({ length: count }, (_, i) => ({
        text: `example ${i + 1} for ${label ?? 'math'} seed ${req.seed}`,
        label: label ?? opts.mathAnswer ?? String(i + 1),
      }));
      return formatScriptedExamples(inputName, answerName, items);
    }
    if (stage === 'paraphrases') {
      const n = Number(/Write exactly (\d+)/.exec(req.prompt.user)?.[1] ?? '1');
      const input = paraphrasedInput(req);
      return Array.from({ length: n }, (_, i) => `Paraphrase ${i + 1} of ${input}`).join('\n');
    }
    const candidate = evaluatedCandidate(req);
    if (opts.answer) return opts.answer(candidate, req);
    return opts.firstLabel ?? 'Final Answer: 42';
  };
}
