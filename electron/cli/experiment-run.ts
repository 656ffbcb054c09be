// What `tatra sweep` and `tatra compare` share, one way for every kind of experiment: run or resume
// one to its end (progress on stderr; Ctrl-C pauses it, says how to resume it and exits 130), and
// the actions on one already made: list, show, resume, cancel, export. A command says only how its
// kind reads on a terminal (its table, its history line, its progress lines).
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { ExperimentKind, ExperimentProgressEvent } from '../common/contract/experiments';
import type { RaceDrop, RaceSummary } from '../common/contract/experiment-progress';
import type { Budget } from '../common/plan';
import { UserError, errorMessage } from '../common/errors';
import type { ExperimentManagers, ResultOf, SummaryOf } from '../experiments';
import { outputFolder } from './options';
import { type PlanCliOptions, priceFrom } from './plan';
import { type CliServices } from './session';
import { err, onInterrupt, out, outJson } from './ui';

/** How one kind reads on a terminal. */
export interface ExperimentCli<K extends ExperimentKind> {
  kind: K;
  /** "sweep", "comparison"; the command is `tatra <command>`. */
  noun: string;
  command: string;
  /** The human report of a result (what `show` and a finished run print without --json). */
  format(result: ResultOf<K>): string;
  /** One line of `list`. */
  listLine(summary: SummaryOf<K>): string;
  /** A raced one's dropped cells (a comparison's pairs, a sweep's settings), each once, with its drop. */
  dropped(result: ResultOf<K>): { name: string; drop: RaceDrop }[];
  /** Progress lines on stderr while it runs here: made once per run, called with each event. */
  progressLines?(manager: ExperimentManagers[K], id: string): (event: ExperimentProgressEvent) => void;
}

/** The options every experiment command takes for its actions. */
export interface ExperimentActionOptions extends PlanCliOptions {
  json?: boolean;
  out?: string;
  budget?: Budget;
}

/** What --out is for, in an error that refuses it. */
export function outWhat(cli: { noun: string }): string {
  return `a ${cli.noun} writes <${cli.noun} id>.csv and <${cli.noun} id>.json into it`;
}

/**
 * Runs (or resumes) an experiment to its end; Ctrl-C pauses it and says how to resume it. `budget`:
 * a new budget for all its jobs together, with the price given now or the one it had.
 */
export async function runExperimentToEnd<K extends ExperimentKind>(
  cli: ExperimentCli<K>,
  manager: ExperimentManagers[K],
  id: string,
  opts: { quiet: boolean; budget?: Budget | undefined; price?: ReturnType<typeof priceFrom> },
): Promise<ResultOf<K>> {
  const lines = opts.quiet ? undefined : cli.progressLines?.(manager, id);
  const off = manager.onProgress((e) => {
    if (e.id === id) lines?.(e);
  });
  let interrupted = false;
  const offInterrupt = onInterrupt(() => {
    interrupted = true;
    manager.pause(id).catch((e: unknown) => err(`cannot pause ${cli.noun} ${id}: ${errorMessage(e)}`));
  });
  try {
    await manager.start(id, { ...(opts.budget ? { budget: opts.budget } : {}), ...(opts.price ? { price: opts.price } : {}) });
    const end = await manager.wait(id);
    const resume = `tatra ${cli.command} resume`;
    if (end.stoppedBy === 'budget') err(`paused ${cli.noun} ${id}: its next job would have exceeded its budget; continue with: ${resume} ${id} --budget <a larger limit>`);
    if (interrupted) {
      err(`paused ${cli.noun} ${id} (${end.progress.jobsDone}/${end.progress.jobsTotal} jobs done); continue with: ${resume} ${id}`);
      process.exitCode = 130;
    }
    return manager.get(id) as ResultOf<K>;
  } finally {
    off();
    offInterrupt();
  }
}

/** Writes its CSV and JSON into --out, when given. */
export async function exportTo<K extends ExperimentKind>(cli: ExperimentCli<K>, manager: ExperimentManagers[K], id: string, outDir: string | undefined): Promise<void> {
  if (!outDir) return;
  const dir = await outputFolder(resolve(outDir), outWhat(cli));
  await manager.export(id, 'csv', join(dir, `${id}.csv`));
  await manager.export(id, 'json', join(dir, `${id}.json`));
  err(`exported ${join(dir, `${id}.csv`)} and ${id}.json`);
}

/** The result as the command prints it: one JSON object (what experiments.get answers) or its report; a failed one exits 1. */
export function printResult<K extends ExperimentKind>(cli: ExperimentCli<K>, result: ResultOf<K>, json: boolean): void {
  if (json) outJson(result);
  else out(cli.format(result) + raceText(result.race, cli.dropped(result)));
  if (result.status === 'failed') {
    err(`tatra: ${cli.noun} ${result.id} failed: ${result.error ?? 'unknown error'}`);
    process.exitCode = 1;
  }
}

/** --race, for both kinds: what it does and what it promises (docs/method.md §16, racing). */
export const RACE_HELP = 'run the rows in rounds (5 % of them, at least 20) and drop a pairing (a sweep: an n, k setting) once it is worse than another at 95 % under a test that may look after every round; the best is dropped in at most 5 % of races';

/** Where a race ended, and each drop with its reason, under a raced result's report. */
function raceText(race: RaceSummary | null, dropped: readonly { name: string; drop: RaceDrop }[]): string {
  if (!race) return '';
  const lines = [
    '',
    `  raced: ${race.rounds} ${race.rounds === 1 ? 'round' : 'rounds'} of ${race.roundRows} rows decided (${race.rowsDecided} rows), ${race.alive} still in, ${race.dropped} dropped`,
    ...dropped.map(({ name, drop }) => `  dropped ${name}: ${drop.reason} (${(drop.difference * 100).toFixed(1)} points behind on the rows both scored)`),
  ];
  return `\n${lines.join('\n')}`;
}

/** `tatra <command> [action] [id]`, with the options a new one of the kind takes first: its task and its data. */
export function experimentCommand(program: Command, cli: { noun: string; command: string }, description: string): Command {
  const { noun } = cli;
  // `resume ID` and `show ID` are arguments, not commander subcommands: those would share the
  // options' names with this command, which would take them from the subcommand.
  return program
    .command(cli.command)
    .description(description)
    .argument('[action]', `list (every ${noun}), show <id> (its result so far), resume <id> (continue a paused, interrupted, cancelled or failed one), cancel <id> (stop one not running, as cancelled) or export <id> (its CSV and JSON into --out); none: start a new ${noun}`)
    .argument('[id]', `${noun} id (or a unique prefix) for show, resume, cancel and export`)
    .option('--task <id|file>', `task id (see \`tatra tasks list\`) or a task JSON file (required for a new ${noun})`)
    .option('--data <file>', `CSV, TSV or JSONL file with gold labels (required for a new ${noun})`);
}

/** `list`, `show`, `resume`, `cancel` and `export` on an experiment already made. */
export async function experimentAction<K extends ExperimentKind>(services: CliServices, cli: ExperimentCli<K>, action: string, id: string | undefined, opts: ExperimentActionOptions): Promise<void> {
  const manager = services.experiments().of(cli.kind) as ExperimentManagers[K];
  const json = opts.json === true;
  if (action === 'list') {
    const all = manager.list() as SummaryOf<K>[];
    // --json: what experiments.list answers for this kind.
    if (json) outJson(all);
    else if (all.length === 0) out(`no ${cli.noun}s yet`);
    else for (const s of all) out(cli.listLine(s));
    return;
  }
  if (!['show', 'resume', 'cancel', 'export'].includes(action)) {
    throw new UserError(`unknown ${cli.command} action "${action}": use list, show <id>, resume <id>, cancel <id> or export <id>, or no action to start a ${cli.noun}`, 'bad_option');
  }
  if (!id) throw new UserError(`give the ${cli.noun} id: tatra ${cli.command} ${action} <id>`, 'bad_option');
  if (opts.out) await outputFolder(resolve(opts.out), outWhat(cli));
  const full = manager.summary(id).id;
  if (action === 'export' && !opts.out) throw new UserError(`give the folder to export into: tatra ${cli.command} export ${full} --out <dir>`, 'bad_option');
  if (action === 'cancel') await manager.cancel(full);
  const shown = manager.summary(full);
  const result =
    action === 'resume' && shown.status !== 'done'
      ? await runExperimentToEnd(cli, manager, full, { quiet: json, budget: opts.budget, price: priceFrom(opts) })
      : (manager.get(full) as ResultOf<K>);
  await exportTo(cli, manager, full, opts.out);
  printResult(cli, result, json);
}
