// What the CLI prints to a terminal: data-set cells and model outputs can hold escape sequences
// (`\x1b]0;…\x07` retitles the window, `\x1b[2J` clears it, OSC 8 forges links). Shown as
// visible escapes instead, so a hostile file cannot drive the user's terminal.

// C0 controls except newline, DEL, and the C1 controls (0x9b is a one-byte CSI to some terminals).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

/** `s` with every control character but newline written as `\xNN`. */
export function terminalSafe(s: string): string {
  return s.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
