// The `tatra` program itself: its commands, options and how an error ends it, as one function of
// the arguments, so the launcher (index.ts) runs it once per process and a test may run it in its
// own process (test/helpers/tatra-cli.ts tatraInProcess) without paying Node's start-up each time.
import { Command, CommanderError } from 'commander';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import { environmentError } from '../common/env-errors';
import { showLlamaWarnings } from '../llama';
import { registerTasks } from './commands/tasks';
import { registerClassify } from './commands/classify';
import { registerEval } from './commands/eval';
import { registerJobs } from './commands/jobs';
import { registerModels } from './commands/models';
import { registerCompare } from './commands/compare';
import { registerServe } from './commands/serve';
import { registerSweep } from './commands/sweep';
import { registerApi } from './commands/api';
import { err, write } from './ui';

function tatraProgram(): Command {
  const program = new Command('tatra')
    .description('TATRA Studio: training-free classification with synthetic examples, paraphrases and voting')
    .version('0.1.0')
    .option('--debug', 'print stack traces for unexpected errors')
    .option('--verbose', "show llama.cpp's own log lines (warnings and errors) while loading models; without it, a model llama.cpp refuses gets one line with its reason")
    .showSuggestionAfterError()
    .exitOverride()
    // Usage errors say `tatra: …` like every other bad input, not commander's own `error: …`.
    // Set before the commands are registered, so every subcommand inherits it.
    .configureOutput({
      writeOut: (s) => write('out', s),
      writeErr: (s) => write('err', s),
      // One line: commander puts its "(Did you mean …?)" on a line of its own.
      outputError: (s, write) => write(`tatra: ${s.replace(/^error: /, '').trimEnd().replace(/\s*\n\s*/g, ' ')}\n`),
    });

  // Before any command loads a model: the option may come before or after the command's name.
  program.hook('preAction', () => {
    showLlamaWarnings(program.opts<{ verbose?: boolean }>().verbose === true);
  });

  registerTasks(program);
  registerClassify(program);
  registerEval(program);
  registerJobs(program);
  registerModels(program);
  registerCompare(program);
  registerSweep(program);
  registerServe(program);
  registerApi(program);
  return program;
}

/**
 * Runs `tatra` on `argv` (Node's form: the executable and the script first). Resolves with the exit
 * code an error calls for, after saying it in one line; undefined when the command ended on its own,
 * having set process.exitCode where it ends otherwise than 0.
 */
export async function runTatra(argv: readonly string[]): Promise<number | undefined> {
  const program = tatraProgram();
  try {
    await program.parseAsync([...argv]);
    return undefined;
  } catch (e) {
    // Help and version exit 0; usage errors were already printed by commander.
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof UserError) {
      err(`tatra: ${e.message}`);
      return 2;
    }
    if (isAbortError(e)) {
      err('tatra: cancelled');
      return 130;
    }
    // A full or read-only disk, a missing folder: the user's to fix, said as such.
    const env = environmentError(e);
    if (env) {
      err(`tatra: ${env.message}`);
      return 2;
    }
    err(`tatra: unexpected error: ${errorMessage(e)}`);
    if (program.opts<{ debug?: boolean }>().debug && e instanceof Error && e.stack) err(e.stack);
    return 1;
  }
}
