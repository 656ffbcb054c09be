// Options shared by every command: parsers that turn bad numbers into one clear UserError line,
// and the option groups (settings, models, runtime) that several commands take alike.
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { UserError } from '../common/errors';
import { ifMissing } from '../common/env-errors';
import { parseModelSpec, type ModelSpec } from '../common/model-spec';
import type { OpenedDataset } from '../jobs';
import { THREADS_HELP } from '../llama/threads';
import { CONTEXT_SIZE, EARLY_STOP_CONFIDENCE, confidentStopPromise, EARLY_STOP_DEFAULT, INT_SETTING_NAMES, INT_SETTINGS, SCOPE_SETTING, SCOPES, type IntSettingName } from '../common/settings';
import { type ExampleScope, type TatraSettings } from '../common/tatra';
import { emptyRecord } from '../common/records';
import { shownColumns } from '../jobs/dataset';

export function intOption(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new UserError(`${name} must be a whole number, got "${value}"`, 'bad_option');
    const n = Number(value);
    if (n < min || n > max) throw new UserError(`${name} must be between ${min} and ${max}, got ${n}`, 'bad_option');
    return n;
  };
}

/** Parses `a=b,c=d` (values may not contain commas; labels never do). */
export function parseLabelMap(text: string): Record<string, string> {
  // Gold values are the user's strings: `constructor=positive` is a value like any other.
  const map = emptyRecord<string>();
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0 || eq === part.length - 1) throw new UserError(`--label-map: "${part.length > 60 ? `${part.slice(0, 59)}…` : part}" is not value=label`, 'bad_option');
    map[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  if (Object.keys(map).length === 0) throw new UserError('--label-map is empty; write value=label,value=label', 'bad_option');
  return map;
}

/**
 * The input and gold columns of a data file: as given (--text-col, --label-col), else guessed from
 * its columns. `gold`: 'none' (--no-label), 'optional' (no accuracy without one) or 'required'.
 */
export function dataColumnsFrom(
  ds: Pick<OpenedDataset, 'columns' | 'suggestedTextColumn' | 'suggestedLabelColumn'>,
  opts: { data: string; textCol?: string; labelCol?: string },
  gold: 'none' | 'unless-no-label' | 'required',
): { textColumn: string; labelColumn: string | null } {
  const textColumn = opts.textCol ?? ds.suggestedTextColumn;
  if (!textColumn) throw new UserError(`${opts.data}: say which column holds the input with --text-col (columns: ${shownColumns(ds.columns)})`, 'dataset_column');
  const labelColumn = gold === 'none' ? null : (opts.labelCol ?? ds.suggestedLabelColumn ?? null);
  if (labelColumn === null && gold === 'required') {
    throw new UserError(`${opts.data}: a sweep measures accuracy; say which column holds the gold label with --label-col (columns: ${shownColumns(ds.columns)})`, 'dataset_column');
  }
  // A job without gold runs for hours and measures nothing: only when the user says so.
  if (labelColumn === null && gold === 'unless-no-label') {
    throw new UserError(`${opts.data}: no gold label column recognised (columns: ${shownColumns(ds.columns)}); name it with --label-col, or run without gold labels with --no-label`, 'dataset_column');
  }
  return { textColumn, labelColumn };
}

/** Reads all of stdin when it is not a terminal (text piped in); otherwise undefined. */
export async function readStdinIfPiped(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** What the settings options parse into (commander's camel-cased names). */
export interface TatraSettingsCliOptions {
  paraphrases: number;
  examples: number;
  runs: number;
  seed: number;
  scope: ExampleScope;
}

function scopeOption(value: string): ExampleScope {
  const scope = SCOPES.find((s) => s === value);
  if (scope) return scope;
  throw new UserError(`${SCOPE_SETTING.flag} must be ${SCOPES.join(' or ')}, got "${value}"`, 'bad_option');
}

function intSettingOption(cmd: Command, name: IntSettingName): Command {
  const s = INT_SETTINGS[name];
  return cmd.option(s.flags, s.help, intOption(s.flag, s.min, s.max), s.default);
}

/**
 * -n -k -r --seed --scope: TATRA's settings, identical on every command that runs the method
 * (classify, eval, compare); bounds, defaults and help come from common/settings.ts.
 */
export function addTatraSettingsOptions(cmd: Command): Command {
  for (const name of INT_SETTING_NAMES) intSettingOption(cmd, name);
  return cmd.option(SCOPE_SETTING.flags, SCOPE_SETTING.help, scopeOption, SCOPE_SETTING.default);
}

export function tatraSettingsFrom(opts: TatraSettingsCliOptions): TatraSettings {
  return { n: opts.paraphrases, k: opts.examples, r: opts.runs, seed: opts.seed, scope: opts.scope };
}

/**
 * --early-stop [rule] / --no-early-stop: stop launching runs once the vote is decided (`exact`, the
 * default rule) or sure enough (`confident:P`). Commander leaves the value undefined when neither
 * is given: the command applies `withEarlyStop(settings, work)`.
 */
export function addEarlyStopOptions(cmd: Command, work: keyof typeof EARLY_STOP_DEFAULT, opts: { textArgument?: boolean } = {}): Command {
  const defaultOn = EARLY_STOP_DEFAULT[work];
  const on = defaultOn ? ' (default)' : '';
  const off = defaultOn ? '' : ' (default)';
  return cmd
    .option(
      '--early-stop [rule]',
      `stop launching runs once the vote is decided: "exact" (the leader beats the runner-up plus every vote to come; same label, fewer calls) or "confident:P" (sooner: ${confidentStopPromise()}; e.g. confident:0.99)${on}`,
      opts.textArgument ? earlyStopOrText : earlyStopOption,
    )
    .option('--no-early-stop', `always run all r runs${off}`);
}

/**
 * What --early-stop parses into: true (the exact rule) or the confident rule's P; for a command
 * whose text is an argument, a value that is no rule is `{ text }`: the first words of the input.
 */
export type EarlyStopCliValue = boolean | { confidence: number } | { text: string };

/**
 * `tatra classify --early-stop "an unforgettable film"`: the optional value took the text. A value
 * that is not a rule (nor a malformed confident:P) is the input's first words, and the exact rule is on.
 */
function earlyStopOrText(value: string): EarlyStopCliValue {
  const v = value.trim();
  if (v === 'exact' || v.startsWith('confident:')) return earlyStopOption(value);
  return { text: value };
}

function earlyStopOption(value: string): EarlyStopCliValue {
  const v = value.trim();
  if (v === 'exact') return true;
  const m = /^confident:(.+)$/.exec(v);
  const p = m ? Number(m[1]) : NaN;
  if (m && Number.isFinite(p) && p >= EARLY_STOP_CONFIDENCE.min && p <= 1) return p === 1 ? true : { confidence: p };
  if (m) throw new UserError(`--early-stop confident:P needs P between ${EARLY_STOP_CONFIDENCE.min} and 1, got "${m[1]}"`, 'bad_option');
  throw new UserError(`--early-stop takes "exact" or "confident:P" (e.g. confident:0.99), got "${value}"; put the text to classify before the options or after --`, 'bad_option');
}

/** The settings' early-stop fields from --early-stop/--no-early-stop; none when neither was given (`withEarlyStop` then applies the default). */
export function earlyStopFrom(value: EarlyStopCliValue | undefined): Pick<TatraSettings, 'earlyStop' | 'earlyStopConfidence'> {
  if (value === undefined) return {};
  if (typeof value === 'boolean') return { earlyStop: value };
  if ('text' in value) return { earlyStop: true };
  return { earlyStop: true, earlyStopConfidence: value.confidence };
}

export interface ModelCliOptions {
  model?: string;
  generator?: string;
  evaluator?: string;
}

/** What a model option takes, for the help text. */
export const MODEL_ARG_HELP = 'a GGUF file, remote:NAME (see `tatra models add-remote`) or openai+http://HOST:PORT/v1#MODEL';

/** --model, or --generator and --evaluator. */
export function addModelOptions(cmd: Command): Command {
  return cmd
    .option('--model <model>', `model used as both generator and evaluator: ${MODEL_ARG_HELP}`)
    .option('--generator <model>', 'model that writes examples and paraphrases (default --model)')
    .option('--evaluator <model>', 'model that classifies (default --model)');
}

/**
 * A model argument, parsed once (common/model-spec.ts): a GGUF file made absolute, so a run records
 * a path a resume finds from any folder; a remote model's spec (`remote:NAME`,
 * `openai+http://…#MODEL`) as written.
 */
export function modelArgument(text: string): ModelSpec {
  return parseModelSpec(text, { resolvePath: resolve });
}

/** --model, or --generator and --evaluator, parsed. */
export function modelsFrom(opts: ModelCliOptions): { generator: ModelSpec; evaluator: ModelSpec } {
  const generator = opts.generator ?? opts.model;
  const evaluator = opts.evaluator ?? opts.model;
  if (!generator || !evaluator) {
    throw new UserError('no model: give --model <model>, or both --generator <model> and --evaluator <model> (a GGUF file, remote:NAME or openai+http://HOST:PORT/v1#MODEL)', 'model_missing');
  }
  return { generator: modelArgument(generator), evaluator: modelArgument(evaluator) };
}

/** --threads and --context-size, for every command that loads models. */
export function addRuntimeOptions(cmd: Command): Command {
  return cmd
    .option('--threads <T>', THREADS_HELP, intOption('--threads', 1, 256))
    .option('--context-size <tokens>', 'context size per sequence', intOption('--context-size', CONTEXT_SIZE.min, CONTEXT_SIZE.max));
}

/** --min-confidence t: rows whose winning vote share is below t are marked abstained (selective prediction). */
export function minConfidenceOption(): Option {
  return new Option('--min-confidence <t>', 'answer only rows whose winning vote share is at least t (0..1): the rest are marked abstained, and the metrics add coverage and accuracy on the answered rows').argParser(
    fractionOption('--min-confidence'),
  );
}

/** The results view --min-confidence asks for. */
export function viewFrom(opts: { minConfidence?: number }): { minConfidence?: number } {
  return opts.minConfidence !== undefined ? { minConfidence: opts.minConfidence } : {};
}

/** A number between 0 and 1. */
export function fractionOption(name: string) {
  return (value: string): number => {
    const n = Number(value.trim());
    if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new UserError(`${name} must be a number between 0 and 1, got "${value}"`, 'bad_option');
    return n;
  };
}

/**
 * The --out folder of a long run, created if need be and checked writable before the run starts
 * (not after it ran for hours); one line when it is a file or cannot be written.
 */
export async function outputFolder(dir: string, what: string): Promise<string> {
  const existing = await stat(dir).catch(ifMissing(null));
  if (existing && !existing.isDirectory()) throw new UserError(`--out ${dir} is not a folder (${what})`, 'bad_option');
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (e) {
    throw new UserError(`--out ${dir}: cannot write there (${(e as NodeJS.ErrnoException).code ?? 'unwritable'})`, 'bad_option');
  }
  return dir;
}
