// The one rule at the CLI's output boundary (electron/cli/terminal.ts), as properties over many
// random texts: nothing written to stdout or stderr, by whoever (ui.ts, a bare process.stdout.write,
// console.log, a Buffer, a library), reaches the terminal with a control character but the
// newline; printable text is untouched; the escape is idempotent and keeps JSON valid JSON.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasControl, terminalSafe } from '../../../electron/cli/terminal';

// What a terminal must never receive raw: C0 (but \n), DEL, C1, bidi controls, line separators.
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/** A seeded generator (mulberry32): the same texts every run, no dependency. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEQUENCES = ['\x1b]0;pwned\x07', '\x1b[2J', '\x1b[31m', '\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\', '\x9b31m', '\x1bP+q\x1b\\', '\r', '\b\b\b', '\u202e', '\u2066', '\u2028', '\x00', '\x7f', '\t', '\x1bc', '\x1b[?1049h'];

/** A random text mixing escape sequences, single controls, ASCII, accents, CJK and astral characters. */
function randomText(r: () => number): string {
  let s = '';
  const n = Math.floor(r() * 40);
  for (let i = 0; i < n; i++) {
    const pick = r();
    if (pick < 0.2) s += SEQUENCES[Math.floor(r() * SEQUENCES.length)];
    else if (pick < 0.35) s += String.fromCharCode(Math.floor(r() * 0xa0));
    else if (pick < 0.7) s += String.fromCharCode(0x20 + Math.floor(r() * 0x5f));
    else if (pick < 0.8) s += 'éüßñ€—…\n'[Math.floor(r() * 8)];
    else if (pick < 0.9) s += String.fromCharCode(0x2000 + Math.floor(r() * 0x80));
    else s += String.fromCodePoint(0x1f600 + Math.floor(r() * 50));
  }
  return s;
}

const TEXTS = (() => {
  const r = rng(24);
  return Array.from({ length: 3000 }, () => randomText(r));
})();

describe('terminalSafe', () => {
  it('leaves no control character but the newline, in 3,000 random texts', () => {
    for (const t of TEXTS) {
      const safe = terminalSafe(t);
      expect(FORBIDDEN.test(safe), JSON.stringify(t)).toBe(false);
      expect(hasControl(safe)).toBe(false);
      // Idempotent: escaping twice changes nothing (callers may escape early to measure).
      expect(terminalSafe(safe)).toBe(safe);
      // Newlines survive; nothing printable is lost.
      expect(safe.split('\n').length).toBe(t.split('\n').length);
      expect(safe.replace(/\\u[0-9a-f]{4}/g, '')).toBe(t.replace(FORBIDDEN_G, '').replace(/\\u[0-9a-f]{4}/g, ''));
    }
  });

  it('keeps JSON valid and equal: a control inside a JSON string becomes its own \\u escape', () => {
    for (const t of TEXTS.slice(0, 500)) {
      const json = JSON.stringify({ t, list: [t, 1] });
      expect(JSON.parse(terminalSafe(json))).toEqual({ t, list: [t, 1] });
    }
  });

  it('shows what it escaped', () => {
    expect(terminalSafe('a\x1b]0;x\x07b\x9bc\u202ed\r')).toBe('a\\u001b]0;x\\u0007b\\u009bc\\u202ed\\u000d');
  });
});
const FORBIDDEN_G = new RegExp(FORBIDDEN.source, 'g');

describe('guardTerminalOutput: every way a process writes', () => {
  it('process.stdout.write (strings, Buffers, with encodings and callbacks), console.log/error, stderr', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tatra-term-'));
    try {
      const texts = join(dir, 'texts.json');
      writeFileSync(texts, JSON.stringify(TEXTS.slice(0, 400)));
      const script = join(dir, 'writer.ts');
      writeFileSync(
        script,
        `import { readFileSync } from 'node:fs';
import { guardTerminalOutput } from ${JSON.stringify(resolve('electron/cli/terminal.ts'))};
import { write, out, err, statusLine } from ${JSON.stringify(resolve('electron/cli/ui.ts'))};
guardTerminalOutput();
const texts: string[] = JSON.parse(readFileSync(${JSON.stringify(texts)}, 'utf8'));
texts.forEach((t, i) => {
  switch (i % 9) {
    case 0: process.stdout.write(t); break;
    case 1: process.stdout.write(Buffer.from(t, 'utf8')); break;
    case 2: process.stderr.write(t, 'utf8', () => undefined); break;
    case 3: console.log(t); break;
    case 4: console.error('%s', t); break;
    case 5: write('out', t); break;
    case 6: out(t); break;
    case 7: err(t); break;
    case 8: process.stdout.write(Buffer.from(t, 'utf8'), () => undefined); break;
  }
});
`,
      );
      const r = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(1000);
      expect(FORBIDDEN.test(r.stdout)).toBe(false);
      expect(FORBIDDEN.test(r.stderr)).toBe(false);
      // Every text arrived, escaped: its printable parts are all there.
      for (const t of TEXTS.slice(0, 400)) {
        const piece = terminalSafe(t).trim().split('\n')[0]!;
        if (piece.length > 3) expect(r.stdout + r.stderr).toContain(piece);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
