// Turning generator and evaluator text into data (docs/method.md §5–§8): example blocks, paraphrase
// lines, labels. Everything here is lenient in what it reads (a model may add quotes, bullets or
// a preamble) and strict in what it keeps, and it counts what it throws away.
import { type Example, type ExampleFilterCounts, type ParaphraseFallback } from '../common/tatra';
import { type TaskDefinition } from '../common/task';
import { seededShuffle } from './rng';

export function emptyFilterCounts(): ExampleFilterCounts {
  return { wrongLabel: 0, duplicate: 0, malformed: 0, empty: 0, overK: 0 };
}

export function addFilterCounts(a: ExampleFilterCounts, b: ExampleFilterCounts): ExampleFilterCounts {
  return {
    wrongLabel: a.wrongLabel + b.wrongLabel,
    duplicate: a.duplicate + b.duplicate,
    malformed: a.malformed + b.malformed,
    empty: a.empty + b.empty,
    overK: a.overK + b.overK,
  };
}

export function totalFiltered(c: ExampleFilterCounts): number {
  return c.wrongLabel + c.duplicate + c.malformed + c.empty + c.overK;
}

/** Name of the answer line: the task's own, else "Label" for classification and "Answer" otherwise. */
export function answerNameOf(task: TaskDefinition): string {
  return task.answerName ?? (task.kind === 'classification' ? 'Label' : 'Answer');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Strips one pair of wrapping quotes (straight or curly, double or single). */
export function stripQuotes(s: string): string {
  const t = s.trim();
  const m = /^["“”'‘’`]+([\s\S]*?)["“”'‘’`]+$/.exec(t);
  if (m) return (m[1] ?? '').trim();
  return t.replace(/^["“”]+/, '').replace(/["“”]+$/, '').trim();
}

export interface ParsedBlock {
  /** The example, or why the block was rejected. */
  example?: Example;
  problem?: 'malformed' | 'empty';
}

/**
 * Splits generator output into example blocks. A block starts at `ExampleN:`; output with no such
 * marker is read as one run of `<Input>: ... / <Answer>: ...` pairs. A preamble before the first
 * marker is not an example and is ignored.
 */
export function parseExampleBlocks(raw: string, task: TaskDefinition): ParsedBlock[] {
  const answerName = answerNameOf(task);
  const inputNames = [...new Set([task.inputName, 'Sentence', 'Question', 'Problem', 'Headline', 'Text'])];
  const inputRe = new RegExp(`^\\s*\\**(?:${inputNames.map(escapeRegExp).join('|')})\\**\\s*:\\s*`, 'im');
  const answerRe = new RegExp(`^\\s*\\**${escapeRegExp(answerName)}\\**\\s*:[ \\t]*(.*)$`, 'im');
  const text = raw.replace(/\r\n?/g, '\n').replace(/```[a-z]*\n?/gi, '');

  let blocks: string[];
  const markers = [...text.matchAll(/^[ \t]*\**Example[ \t]*\d+\**[ \t]*:?\**[ \t]*$/gim)];
  if (markers.length > 0) {
    blocks = markers.map((m, i) => text.slice((m.index ?? 0) + m[0].length, markers[i + 1]?.index ?? text.length));
  } else {
    // No markers: cut before every input line.
    const starts = [...text.matchAll(new RegExp(inputRe.source, 'gim'))].map((m) => m.index ?? 0);
    blocks = starts.map((s, i) => text.slice(s, starts[i + 1] ?? text.length));
  }

  return blocks.map((block): ParsedBlock => {
    const inputMatch = inputRe.exec(block);
    const answerMatch = answerRe.exec(block);
    if (!inputMatch || !answerMatch || (answerMatch.index ?? 0) < (inputMatch.index ?? 0)) return { problem: 'malformed' };
    const body = block.slice((inputMatch.index ?? 0) + inputMatch[0].length, answerMatch.index);
    const exampleText = stripQuotes(body.replace(/\s*\n\s*/g, ' '));
    const label = stripQuotes(answerMatch[1] ?? '').replace(/\s+$/, '');
    if (exampleText === '' || label === '') return { problem: 'empty' };
    return { example: { text: exampleText, label } };
  });
}

/** True when a multiple-choice question carries every option letter (`A:` or `A)` or `(A)`). */
export function hasAllOptions(text: string, options: readonly string[]): boolean {
  return options.every((o) => new RegExp(`(^|[\\s(])${escapeRegExp(o)}\\s*[:)]`).test(text));
}

function duplicateKey(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
}

export interface LabelOutput {
  /** The label the call asked for; null for math (any answer is fine). */
  label: string | null;
  raw: string;
}

export interface ValidatedExamples {
  examples: Example[];
  /** Per requested label (null for math), the valid examples before shuffling and the k cut. */
  byLabel: { label: string | null; examples: Example[] }[];
  filtered: ExampleFilterCounts;
}

/**
 * Validation (docs/method.md §5): parses each label call's output, drops examples that do not parse, are
 * empty, carry another label than the one requested, or repeat an earlier text; then pools the
 * rest, shuffles them with `shuffleSeed` and keeps at most k.
 */
export function validateExamples(task: TaskDefinition, outputs: readonly LabelOutput[], k: number, shuffleSeed: number): ValidatedExamples {
  const filtered = emptyFilterCounts();
  const seen = new Set<string>();
  const byLabel: ValidatedExamples['byLabel'] = [];
  const pool: Example[] = [];
  const options = task.kind === 'multiple_choice' ? (task.options ?? task.labels.map((l) => l.name)) : [];
  for (const out of outputs) {
    const kept: Example[] = [];
    for (const block of parseExampleBlocks(out.raw, task)) {
      if (!block.example) {
        filtered[block.problem ?? 'malformed']++;
        continue;
      }
      const ex = block.example;
      let label = ex.label;
      if (out.label !== null) {
        if (mapExampleLabel(label) !== out.label.toLowerCase()) {
          filtered.wrongLabel++;
          continue;
        }
        label = out.label;
      }
      if (options.length > 0 && !hasAllOptions(ex.text, options)) {
        filtered.malformed++;
        continue;
      }
      const key = duplicateKey(ex.text);
      if (key === '') {
        filtered.empty++;
        continue;
      }
      if (seen.has(key)) {
        filtered.duplicate++;
        continue;
      }
      seen.add(key);
      kept.push({ text: ex.text, label });
    }
    byLabel.push({ label: out.label, examples: kept });
    pool.push(...kept);
  }
  const shuffled = seededShuffle(pool, shuffleSeed);
  const examples = shuffled.slice(0, Math.max(0, k));
  filtered.overK += shuffled.length - examples.length;
  return { examples, byLabel, filtered };
}

function mapExampleLabel(label: string): string {
  return label.trim().replace(/[.;,!]+$/, '').trim().toLowerCase();
}

const BULLET = /^\s*(?:[-*•·●▪–—>]+|\(?\d{1,3}[.):\]]|\(?[a-z][.)]|#+|paraphrase\s*\d*\s*[:.)-]|rephrasing\s*\d*\s*[:.)-])\s*/i;

/**
 * Paraphrase lines, cleaned: bullets, numbering, `Paraphrase 1:` prefixes and wrapping quotes go;
 * empty lines and commentary lines (ending in a colon) go. When the output was cut off by the token
 * limit (`truncated`), its last line is incomplete and is dropped too.
 */
export function cleanParaphrases(raw: string, opts: { truncated?: boolean } = {}): string[] {
  const lines = raw.replace(/\r\n?/g, '\n').replace(/```[a-z]*\n?/gi, '').split('\n');
  if (opts.truncated && lines.length > 0) lines.pop();
  const out: string[] = [];
  for (const line of lines) {
    let s = line.trim();
    for (let i = 0; i < 3 && BULLET.test(s); i++) s = s.replace(BULLET, '').trim();
    s = stripQuotes(s);
    if (s === '' || /:\s*$/.test(s)) continue;
    out.push(s);
  }
  return out;
}

/**
 * Exactly n paraphrases (reference code): a short list is padded by repeating its last line; with
 * nothing usable, n copies of the original. Either way the fallback is recorded.
 */
export function padParaphrases(parsed: readonly string[], n: number, original: string): { paraphrases: string[]; fallback: ParaphraseFallback | null } {
  if (n <= 0) return { paraphrases: [], fallback: null };
  const kept = parsed.slice(0, n);
  if (kept.length === n) return { paraphrases: kept, fallback: null };
  if (kept.length === 0) return { paraphrases: Array.from({ length: n }, () => original), fallback: { kind: 'original', parsed: 0, wanted: n } };
  const last = kept[kept.length - 1] as string;
  const paraphrases = [...kept];
  while (paraphrases.length < n) paraphrases.push(last);
  return { paraphrases, fallback: { kind: 'padded', parsed: kept.length, wanted: n } };
}

/**
 * Maps evaluator output onto the label set: trimmed and case-insensitive; an exact match first,
 * then the first label in label order that appears in it as a whole word, then a unique label that the
 * output is a prefix of (a constrained answer cut short by the token limit). Null: no vote.
 */
export function mapLabel(raw: string, labels: readonly string[]): string | null {
  const s = raw.trim().replace(/^["'`*\s]+|["'`*.!;,\s]+$/g, '').toLowerCase();
  if (s === '') return null;
  for (const l of labels) if (l.toLowerCase() === s) return l;
  const tail = /(?:label|answer)\s*[:=]\s*(.+)$/i.exec(raw)?.[1];
  if (tail !== undefined && tail.trim().toLowerCase() !== s) {
    const viaTail = mapLabel(tail, labels);
    if (viaTail !== null) return viaTail;
  }
  for (const l of labels) {
    if (new RegExp(`(^|[^a-z0-9])${escapeRegExp(l.toLowerCase())}(?![a-z0-9])`).test(s)) return l;
  }
  const prefixOf = labels.filter((l) => l.toLowerCase().startsWith(s));
  return prefixOf.length === 1 ? (prefixOf[0] as string) : null;
}

/** The classification prompt keeps the input inside double quotes, so its own become single. */
export function quoteSafe(text: string): string {
  return text.replace(/["“”]/g, "'");
}
