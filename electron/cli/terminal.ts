// The one rule for what reaches the terminal: a model's metadata and answers, file names, CSV
// headers, cells and gold values, task labels, a server's answers can all hold escape sequences
// (`\x1b]0;…\x07` retitles the window, `\x1b[2J` clears it, OSC 8 forges links, `\r` overwrites
// a line, bidirectional overrides reorder it). Every control character but the newline is shown
// as a visible `\uXXXX` escape instead, whoever writes it: guardTerminalOutput() puts the rule on
// the process's stdout and stderr, so commands, commander's usage errors, llama.cpp's log lines
// and Node's own warnings all pass through it. Only the CLI's own control sequences (the live
// status line, the progress bar) go around it, through `rawWrite` / `controlStream`, and they
// carry outside text only after terminalSafe.
//
// `\uXXXX` rather than `\xNN`: the same escape is valid inside a JSON string, so `--json` output
// stays valid JSON (a raw C1 or DEL inside a string becomes its own \u escape).

import { terminalSafe } from '../common/control-chars';

export { hasControl, terminalSafe } from '../common/control-chars';

type WriteFn = NodeJS.WriteStream['write'];

let rawWrites: { out: WriteFn; err: WriteFn } = {
  out: process.stdout.write.bind(process.stdout) as WriteFn,
  err: process.stderr.write.bind(process.stderr) as WriteFn,
};

let guarded = false;

/** The text of a chunk written to a stream (strings as they are, bytes as UTF-8). */
function chunkText(chunk: unknown, encoding: unknown): string {
  if (typeof chunk === 'string') return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString(typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8');
  return String(chunk);
}

function guardedWrite(raw: WriteFn): WriteFn {
  return function write(this: unknown, chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
    const cb = typeof encoding === 'function' ? encoding : callback;
    return (raw as (c: string, cb?: unknown) => boolean)(terminalSafe(chunkText(chunk, encoding)), cb);
  } as WriteFn;
}

/**
 * From now on every write to this process's stdout and stderr passes through terminalSafe (the
 * CLI calls this first thing). Idempotent.
 */
export function guardTerminalOutput(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.write = guardedWrite(rawWrites.out);
  process.stderr.write = guardedWrite(rawWrites.err);
}

/** Writes the CLI's own control sequences (and text already made safe) around the guard. */
export function rawWrite(stream: 'out' | 'err', text: string): void {
  rawWrites[stream](text);
}

/**
 * A stand-in for stderr that a progress renderer (cli-progress) may drive with its own cursor
 * and erase sequences: its writes go around the guard, so what it is given to show (payload
 * values) must be made safe first (see ui.ts progressBar).
 */
export function controlStream(): NodeJS.WriteStream {
  return new Proxy(process.stderr, {
    get(target, prop, receiver) {
      if (prop === 'write') return (text: string, cb?: () => void) => (rawWrites.err as (t: string, cb?: () => void) => boolean)(text, cb);
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** Where output goes while redirected: one function a stream. */
export interface OutputSink {
  out(text: string): void;
  err(text: string): void;
}

/**
 * Sends everything the process writes to stdout and stderr to `sink` instead, with the guard's
 * rule applied as on the streams, until the returned function puts the streams back: for running
 * the program inside another process (a test's), whose output it must not mix with its own.
 */
export function redirectOutput(sink: OutputSink): () => void {
  const saved = { raw: rawWrites, out: process.stdout.write, err: process.stderr.write };
  const to = (put: (text: string) => void): WriteFn =>
    function write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
      put(chunkText(chunk, encoding));
      const cb = typeof encoding === 'function' ? encoding : callback;
      if (typeof cb === 'function') process.nextTick(cb as () => void);
      return true;
    } as WriteFn;
  rawWrites = { out: to((t) => sink.out(t)), err: to((t) => sink.err(t)) };
  process.stdout.write = guardedWrite(rawWrites.out);
  process.stderr.write = guardedWrite(rawWrites.err);
  return () => {
    rawWrites = saved.raw;
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
  };
}
