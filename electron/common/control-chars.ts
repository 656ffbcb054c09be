// Outside text (a model's metadata and answers, file names, CSV cells, a request's path or headers)
// can hold escape sequences: `\x1b]0;…\x07` retitles a terminal, `\x1b[2J` clears it, OSC 8 forges
// links, `\r` overwrites a line, bidirectional overrides reorder it. Wherever such text reaches a
// terminal or a log, every control character but the newline is shown as a visible `\uXXXX`
// escape instead. `\uXXXX` rather than `\xNN`: the same escape is valid inside a JSON string.

// C0 controls but newline, DEL, the C1 controls (0x9b is a one-byte CSI to some terminals), the
// bidirectional marks, embeddings, overrides and isolates, and the Unicode line separators.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `s` with every control character but newline written as `\uXXXX`; idempotent. */
export function terminalSafe(s: string): string {
  return s.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Whether `s` holds a character terminalSafe would escape. */
export function hasControl(s: string): boolean {
  CONTROL.lastIndex = 0;
  const found = CONTROL.test(s);
  CONTROL.lastIndex = 0;
  return found;
}
