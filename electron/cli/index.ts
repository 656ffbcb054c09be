// `tatra`: the command-line face of the engine. Each command group lives in commands/<name>.ts
// and registers itself in program.ts; the commands are thin: they parse options, call the engine,
// jobs or model library, and print. This file is the process around the program.
import { runTatra } from './program';
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

// An error's exit is at once; a command that ended on its own lets the process end when its
// output is flushed, with the exit code it set.
const code = await runTatra(process.argv);
if (code !== undefined) process.exit(code);
