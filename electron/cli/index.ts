// `tatra`: the command-line face of the engine. Each command group lives in commands/<name>.ts
// and registers itself here; the commands are thin: they parse options, call the engine, jobs or
// model library, and print.
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
import { guardTerminalOutput } from './terminal';

// Before anything prints: no control character from outside (a file, a model, a server) reaches
// the terminal, whoever writes it (terminal.ts).
guardTerminalOutput();

// `tatra jobs show ID --rows 2000 | head -1`: the reader went away, which ends the output; it is
// not an error worth a stack trace. Anything else on these streams still is.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw e;
  });
}

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
  if (program.opts<{ verbose?: boolean }>().verbose) showLlamaWarnings(true);
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

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // Help and version exit 0; usage errors were already printed by commander.
    process.exit(e.exitCode === 0 ? 0 : 2);
  }
  if (e instanceof UserError) {
    err(`tatra: ${e.message}`);
    process.exit(2);
  }
  if (isAbortError(e)) {
    err('tatra: cancelled');
    process.exit(130);
  }
  // A full or read-only disk, a missing folder: the user's to fix, said as such.
  const env = environmentError(e);
  if (env) {
    err(`tatra: ${env.message}`);
    process.exit(2);
  }
  err(`tatra: unexpected error: ${errorMessage(e)}`);
  if (program.opts<{ debug?: boolean }>().debug && e instanceof Error && e.stack) err(e.stack);
  process.exit(1);
}
