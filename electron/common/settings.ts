// TATRA's run settings (docs/method.md §2) defined once: each field's bounds, default and wording. The zod
// schema (tatra.ts), the CLI options (cli/options.ts) and the renderer's one settings component
// (components/RunSettingsFields.tsx) all read them from here, so a bound changed here changes on
// every face at once instead of drifting apart in five copies.
// common/: no Node, no DOM.

import { UserError } from './errors';
import { isRemote, type ModelSpec } from './model-spec';

export interface IntSetting {
  min: number;
  max: number;
  /** The paper's recommended cost/quality trade-off, with a few runs (docs/method.md §2). */
  default: number;
  /** Field label in the UI. */
  label: string;
  /** One line for --help and the UI's hint. */
  help: string;
  /** commander flags; the short or long flag first is what error messages name. */
  flags: string;
  /** The flag named in a CLI error ("-n must be between …"). */
  flag: string;
}

export const INT_SETTINGS = {
  n: { min: 0, max: 64, default: 5, label: 'Paraphrases n', help: 'paraphrases per run', flags: '-n, --paraphrases <N>', flag: '-n' },
  k: { min: 0, max: 256, default: 8, label: 'Examples k', help: 'synthetic examples per run', flags: '-k, --examples <K>', flag: '-k' },
  r: { min: 1, max: 100, default: 3, label: 'Runs r', help: 'independent runs', flags: '-r, --runs <R>', flag: '-r' },
  seed: { min: 0, max: 2 ** 31 - 1, default: 1, label: 'Seed', help: 'base seed (run j uses seed + 10000·j)', flags: '--seed <S>', flag: '--seed' },
} as const satisfies Record<string, IntSetting>;

export type IntSettingName = keyof typeof INT_SETTINGS;
export const INT_SETTING_NAMES = Object.keys(INT_SETTINGS) as IntSettingName[];

export const SCOPES = ['run', 'input'] as const;

export const SCOPE_SETTING = {
  default: 'run' as (typeof SCOPES)[number],
  label: 'Examples made',
  help: 'example scope: run (made once per run and shared by all inputs, the paper) or input',
  flags: '--scope <scope>',
  flag: '--scope',
  /** How the UI names each choice. */
  choices: { run: 'once per run (paper)', input: 'for every input' } satisfies Record<(typeof SCOPES)[number], string>,
};

/** Evaluator calls one input costs: the original and n paraphrases, in each of r runs. */
export function evaluatorCalls(s: { n: number; r: number }): number {
  return (s.n + 1) * s.r;
}

/** The longest input one classify call takes, in characters (longer text belongs in a data file). */
export const INPUT_MAX_CHARS = 20_000;

/** "Only the first N rows" of a data set (eval, compare, the Evaluate and Compare views). */
export const ROW_LIMIT = { min: 1, max: 100_000_000, flags: '--limit <N>', flag: '--limit' } as const;

/**
 * Early decision's default for each kind of work, when the caller does not say: on for a single
 * input (the label is the same, with fewer calls), off for a data set (accuracy after 1…r runs
 * needs every run of every row). Every face (CLI, app, browser, service) applies it through
 * `withEarlyStop`.
 */
export const EARLY_STOP_DEFAULT = { input: true, dataset: false } as const;

/** `settings` with `earlyStop` set: as given, else the default for this kind of work. */
export function withEarlyStop<S extends { earlyStop?: boolean }>(settings: S, work: keyof typeof EARLY_STOP_DEFAULT): S & { earlyStop: boolean } {
  return { ...settings, earlyStop: settings.earlyStop ?? EARLY_STOP_DEFAULT[work] };
}

/**
 * Rows a job classifies at once. On a local model they are its parallel sequences, which cost
 * memory each (64 at most); rows on remote models only wait on the network, so a server that
 * batches hundreds of requests can be kept busy.
 */
export const CONCURRENCY = {
  min: 1,
  maxLocal: 64,
  maxRemote: 4096,
  default: 4,
  /** When both models are remote and nobody says: enough rows to fill a server's batch (one row sends up to (n+1)·r calls at once). */
  defaultRemote: 64,
  flags: '--concurrency <C>',
  flag: '--concurrency',
  help: 'rows classified at once (on a local model its parallel sequences, up to 64; up to 4096 when both models are remote)',
} as const;

/**
 * Refuses rows in flight that a job on these models could not run: checked where a job is created
 * and where a comparison or sweep is planned or started, so an experiment is refused in one line
 * before any of its jobs fails on it.
 */
export function checkRowsInFlight(concurrency: number, models: readonly ModelSpec[]): void {
  const remoteOnly = models.every(isRemote);
  const max = remoteOnly ? CONCURRENCY.maxRemote : CONCURRENCY.maxLocal;
  if (!Number.isInteger(concurrency) || concurrency < CONCURRENCY.min || concurrency > max) {
    throw new UserError(`concurrency must be between ${CONCURRENCY.min} and ${max}${remoteOnly ? '' : ' with a local model (its parallel sequences)'}, got ${concurrency}`, 'bad_option');
  }
}

/** Tokens per sequence a command may ask a local model's context for (--context-size). */
export const CONTEXT_SIZE = { min: 256, max: 131_072 } as const;

/**
 * Rows a job keeps in flight when its spec does not say: `base` (the data folder's default,
 * CONCURRENCY.default unless configured), raised to CONCURRENCY.defaultRemote when both models
 * are remote. The job manager runs by it and the planner plans by it.
 */
export function defaultRowsInFlight(generator: ModelSpec, evaluator: ModelSpec, base: number = CONCURRENCY.default): number {
  return isRemote(generator) && isRemote(evaluator) ? Math.max(base, CONCURRENCY.defaultRemote) : base;
}

/**
 * The confident early-stop level P (`--early-stop confident:P`, the app's "Stop once … sure"):
 * below one half the rule would stop on a coin flip; 1 is the exact rule.
 */
export const EARLY_STOP_CONFIDENCE = { min: 0.5, choices: [0.95, 0.99] } as const;

/**
 * What the confident early stop promises, in the words every face uses (docs/method.md §10): an
 * average over inputs under its stated model of the votes, not a bound for each input.
 */
export function confidentStopPromise(p: number | string = 'P'): string {
  const risk = typeof p === 'number' ? `${+(100 * (1 - p)).toFixed(2)} %` : `1 − ${p}`;
  return `the stopped vote disagrees with the full vote in at most ${risk} of inputs on average, if votes behaved like draws from the labels' shares (a Dirichlet model); one input's own risk at its stop may be higher, up to 49 %`;
}
