// The CLI's terminal side in one place. Every line a command prints goes through `out` (stdout:
// results, tables, JSON) or `err` (stderr: progress, notes, `tatra: …` errors), so whatever the
// terminal must be protected from has one home; the number, time and table formats every command
// shares; the progress bar; and the one Ctrl-C handler.
import cliProgress from 'cli-progress';
import { controlStream, rawWrite, terminalSafe } from './terminal';

/**
 * Writes `text` to stdout or stderr with every control character but the newline escaped
 * (terminal.ts): the one place the CLI's output leaves the process. Whatever bypasses it (a
 * library writing on its own) meets the same rule on the streams themselves (guardTerminalOutput).
 */
export function write(stream: 'out' | 'err', text: string): void {
  rawWrite(stream, terminalSafe(text));
}

/** Prints `text` and a newline on stdout. */
export function out(text: string): void {
  write('out', `${text}\n`);
}

/** Prints `text` and a newline on stderr. */
export function err(text: string): void {
  write('err', `${text}\n`);
}

/**
 * One line of tab-separated fields on stdout, for `cut -f` and the like: each field's control
 * characters escaped (a tab inside a field too), the tabs between the fields kept.
 */
export function outFields(fields: readonly string[]): void {
  rawWrite('out', `${fields.map(terminalSafe).join('\t')}\n`);
}

/** One JSON value on one stdout line (what --json prints). */
export function outJson(value: unknown): void {
  out(JSON.stringify(value));
}

/** Whether stderr is a terminal (live progress) rather than a file or a pipe (plain lines). */
export function stderrIsTerminal(): boolean {
  return process.stderr.isTTY === true;
}

/** Rewrites the current stderr line (a terminal's live status); '' clears it. */
export function statusLine(text: string): void {
  rawWrite('err', `\r\x1b[2K${terminalSafe(text)}`);
}

// ---------------------------------------------------------------- formats

/** A share as a percentage (`12.3%`), `—` when unknown; `unit: ''` for a column headed "%". */
export function pct(v: number | null, opts: { digits?: number; unit?: string } = {}): string {
  return v === null ? '—' : `${(v * 100).toFixed(opts.digits ?? 1)}${opts.unit ?? '%'}`;
}

/** A plain number with `digits` decimals, `—` when unknown. */
export function num(v: number | null, digits = 3): string {
  return v === null ? '—' : v.toFixed(digits);
}

/** A time span: `0.42 s`, `12.3 s`, `4 min 5 s`, `2 h 3 min`. */
export function duration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Time left: `…` while no rate is known. */
export function eta(seconds: number | null): string {
  return seconds === null || !Number.isFinite(seconds) ? '…' : duration(seconds * 1000);
}

/** A time left as a job's or an experiment's progress says it: a point, a range while it is one, '…' before anything can say. */
export function etaText(p: { etaSeconds: number | null; etaRange?: { min: number; max: number } | null | undefined }): string {
  return p.etaSeconds === null && p.etaRange && p.etaRange.max > p.etaRange.min ? `${eta(p.etaRange.min)}–${eta(p.etaRange.max)}` : eta(p.etaSeconds);
}

/**
 * Columns padded to their widest cell, two spaces apart, each line indented by `indent`;
 * `alignRight(column)` says which columns hold numbers.
 */
export function table(rows: string[][], alignRight: (col: number) => boolean = (c) => c > 0, indent = '  '): string {
  // Cells from outside are measured as they will be shown (escaped), so columns stay aligned.
  rows = rows.map((r) => r.map(terminalSafe));
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => indent + r.map((cell, c) => (alignRight(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd()).join('\n');
}

/** `text` as it will be shown (escaped), cut to `max` characters with `...`: a cut never splits an escape into a live one. */
export function clip(text: string, max: number): string {
  const safe = terminalSafe(text);
  return safe.length > max ? `${safe.slice(0, max - 3)}...` : safe;
}

/** `1 thing` / `2 things`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

// ---------------------------------------------------------------- progress and Ctrl-C

/**
 * A progress bar on stderr when it is a terminal (and not `quiet`), else null: callers then print
 * a plain line now and then. `format` is cli-progress's, e.g. '{bar} {value}/{total} | {note}'.
 */
export function progressBar(format: string, quiet = false): cliProgress.SingleBar | null {
  if (quiet || !stderrIsTerminal()) return null;
  // The bar moves the cursor with its own sequences (around the guard); what it shows from
  // outside (a file name, a note) is made safe here, on the way in.
  return new SafeBar({ format, stream: controlStream(), hideCursor: true, clearOnComplete: false }, cliProgress.Presets.shades_classic);
}

function safePayload(payload: unknown): unknown {
  if (!payload || typeof payload !== 'object') return payload;
  return Object.fromEntries(Object.entries(payload).map(([k, v]) => [k, typeof v === 'string' ? terminalSafe(v) : v]));
}

class SafeBar extends cliProgress.SingleBar {
  override start(total: number, startValue: number, payload?: object): void {
    super.start(total, startValue, safePayload(payload) as object);
  }

  override update(current: number | object, payload?: object): void {
    if (typeof current === 'object') super.update(safePayload(current) as object);
    else super.update(current, safePayload(payload) as object);
  }
}

/**
 * The CLI's one Ctrl-C handler: the first SIGINT (and any of `also`, e.g. SIGTERM) calls `stop`
 * once, which winds the work down (pause a job, abort a download); a second Ctrl-C then gets
 * Node's default and ends the process at once. Returns the function that removes the handler.
 */
export function onInterrupt(stop: (signal: NodeJS.Signals) => void, also: readonly NodeJS.Signals[] = []): () => void {
  const signals: NodeJS.Signals[] = ['SIGINT', ...also];
  let fired = false;
  const handler = (signal: NodeJS.Signals) => {
    if (fired) return;
    fired = true;
    stop(signal);
  };
  for (const s of signals) process.once(s, handler);
  return () => {
    for (const s of signals) process.off(s, handler);
  };
}

/** An AbortSignal that Ctrl-C (and `also`) aborts, with the function that removes the handler. */
export function interruptSignal(also: readonly NodeJS.Signals[] = []): { signal: AbortSignal; off: () => void } {
  const ac = new AbortController();
  return { signal: ac.signal, off: onInterrupt(() => ac.abort(), also) };
}
