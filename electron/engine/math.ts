// Math answers (docs/method.md §8): pull the final answer out of what the evaluator wrote, bring it to one
// canonical form so equal answers vote together, and the reference code's lenient score.

/**
 * The answer after the last `Final Answer:` (rest of that line); failing that, the last
 * `\boxed{...}`. Null when neither is there: that prediction is no vote.
 */
export function extractFinalAnswer(raw: string): string | null {
  const re = /final answer\s*[:：]\s*([^\n]*)/gi;
  let last: string | null = null;
  for (let m = re.exec(raw); m !== null; m = re.exec(raw)) last = m[1] ?? '';
  if (last !== null && last.trim() !== '') return last.trim();
  const boxed = lastBoxed(raw);
  if (boxed !== null && boxed.trim() !== '') return boxed.trim();
  return null;
}

/** Content of the last `\boxed{...}` (or `\fbox{...}`), braces balanced; null when absent. */
function lastBoxed(text: string): string | null {
  const at = Math.max(text.lastIndexOf('\\boxed{'), text.lastIndexOf('\\fbox{'));
  if (at < 0) return null;
  const open = text.indexOf('{', at);
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}') {
      depth--;
      if (depth === 0) return text.slice(open + 1, i);
    }
  }
  return null;
}

/** Replaces every `\boxed{x}` by `x`, keeping nested braces intact. */
function unbox(text: string): string {
  let out = text;
  for (;;) {
    const at = out.search(/\\(boxed|fbox)\{/);
    if (at < 0) return out;
    const open = out.indexOf('{', at);
    let depth = 0;
    let close = -1;
    for (let i = open; i < out.length; i++) {
      if (out[i] === '{') depth++;
      else if (out[i] === '}' && --depth === 0) {
        close = i;
        break;
      }
    }
    if (close < 0) return out.slice(0, at) + out.slice(open + 1);
    out = out.slice(0, at) + out.slice(open + 1, close) + out.slice(close + 1);
  }
}

const THOUSANDS = /^-?\d{1,3}(,\d{3})+(\.\d+)?$/;

/** The number an answer denotes when it is a plain number, a fraction or `\frac{a}{b}`; else null. */
export function numericValue(answer: string): number | null {
  const s = answer.replace(/\s+/g, '');
  if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(s)) return Number(s);
  const plain = /^([-+]?)(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)$/.exec(s);
  if (plain) return fraction(plain[1] ?? '', plain[2] ?? '', plain[3] ?? '');
  const tex = /^([-+]?)\\frac\{([-+]?\d+(?:\.\d+)?)\}\{(\d+(?:\.\d+)?)\}$/.exec(s);
  if (tex) return fraction(tex[1] ?? '', tex[2] ?? '', tex[3] ?? '');
  const short = /^([-+]?)\\frac(\d)(\d)$/.exec(s);
  if (short) return fraction(short[1] ?? '', short[2] ?? '', short[3] ?? '');
  return null;
}

function fraction(sign: string, num: string, den: string): number | null {
  const d = Number(den);
  if (d === 0) return null;
  const v = Number(num) / d;
  return sign === '-' ? -v : v;
}

/** Canonical text of a number: 12.0 -> "12", 1/2 -> "0.5", float noise rounded away. */
function canonicalNumber(v: number): string {
  const rounded = Number(v.toPrecision(12));
  return Object.is(rounded, -0) ? '0' : String(rounded);
}

/**
 * One canonical form per answer, so equal answers vote together: `$`, `\(...\)`, `\boxed{}`,
 * `\text{}` wrappers, `\left`/`\right`, spaces and a trailing full stop go; thousands separators go
 * (`1,234` -> `1234`); numbers, fractions and `\frac{a}{b}` become their decimal value
 * (`$\frac{1}{2}$` and `0.5` both -> `0.5`). Anything else stays as tidied TeX.
 */
export function normaliseMathAnswer(answer: string): string {
  let s = answer.trim();
  s = s.replace(/^final answer\s*[:：]\s*/i, '');
  s = unbox(s);
  s = s.replace(/^\\\(|\\\)$/g, '').replace(/^\\\[|\\\]$/g, '');
  s = s.replace(/\$/g, '');
  s = s.replace(/\\text\{\s*([^{}]*)\}/g, '$1').replace(/\\mathrm\{([^{}]*)\}/g, '$1');
  s = s.replace(/\\left|\\right|\\displaystyle|\\!|\\,|\\;|\\ /g, '');
  s = s.replace(/\\[dt]frac/g, '\\frac');
  s = s.replace(/\^\{?\\circ\}?/g, '').replace(/\\%|%/g, '');
  s = s.trim().replace(/[.。]+$/, '').trim();
  if (THOUSANDS.test(s.replace(/\s+/g, ''))) s = s.replace(/[,\s]/g, '');
  // Whole numbers stay exact digit strings: a float would round long ones (111111111111111).
  const whole = /^([-+]?)0*(\d+)(?:\.0+)?$/.exec(s.replace(/\s+/g, ''));
  if (whole) return (whole[1] === '-' && /[1-9]/.test(whole[2] ?? '') ? '-' : '') + (whole[2] ?? '0');
  const n = numericValue(s);
  if (n !== null && Number.isFinite(n)) return canonicalNumber(n);
  // A number followed by a unit word ("18 dollars") votes as the number.
  const lead = /^(-?\d[\d,]*(?:\.\d+)?)\s*[a-zA-Z ]+$/.exec(s);
  if (lead?.[1]) {
    const v = numericValue(lead[1].replace(/,/g, ''));
    if (v !== null) return canonicalNumber(v);
  }
  return s.replace(/\s+/g, '');
}

/** True when two answers normalise to the same form (numbers compared with a tiny tolerance). */
export function mathAnswersEqual(a: string, b: string): boolean {
  const na = normaliseMathAnswer(a);
  const nb = normaliseMathAnswer(b);
  if (na === nb) return true;
  const va = numericValue(na);
  const vb = numericValue(nb);
  return va !== null && vb !== null && Math.abs(va - vb) <= 1e-9 * Math.max(1, Math.abs(va), Math.abs(vb));
}

/**
 * The reference code's score: correct when the gold answer string appears anywhere in the raw
 * output. Reported beside the strict score, under its own name, for comparison with the paper.
 */
export function lenientMathCorrect(gold: string, rawOutput: string): boolean {
  const g = gold.trim();
  return g.length > 0 && rawOutput.includes(g);
}

/** Strict score: the extracted, normalised answer equals the gold one. */
export function strictMathCorrect(gold: string, rawOutput: string): boolean {
  const answer = extractFinalAnswer(rawOutput);
  return answer !== null && mathAnswersEqual(gold, answer);
}
