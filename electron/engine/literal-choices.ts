// The strings a GBNF grammar allows when it is a plain set of literals (the evaluator's label set).
// Backends use it to take a shortcut: node-llama-cpp biases the tokens that spell the choices
// (llama/choices.ts); remote servers without GBNF get the set as a `choice` list or a JSON-schema
// enum (remote/). Pure: no model, no I/O.

const MAX_CHOICES = 256;

/** Grammars already read: a remote backend asks for every evaluator call, with a handful of grammars. */
const known = new Map<string, readonly string[] | null>();
const MAX_KNOWN = 256;

/**
 * The strings a grammar allows when it is a single `root` rule made of string literals, sequences
 * and alternations (`root ::= " " ("positive" | "negative")`); null for anything else.
 */
export function literalChoices(grammar: string): readonly string[] | null {
  let choices = known.get(grammar);
  if (choices === undefined) {
    const parsed = parseChoices(grammar);
    choices = parsed && Object.freeze(parsed);
    if (known.size >= MAX_KNOWN) known.delete(known.keys().next().value as string);
    known.set(grammar, choices);
  }
  return choices;
}

function parseChoices(grammar: string): string[] | null {
  const lines = grammar
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (lines.length !== 1) return null;
  const m = /^root\s*::=\s*(.*)$/.exec(lines[0]!);
  if (!m) return null;
  const src = m[1]!;
  let pos = 0;
  const skip = () => {
    while (pos < src.length && /\s/.test(src[pos]!)) pos++;
  };
  const literal = (): string | null => {
    if (src[pos] !== '"') return null;
    pos++;
    let out = '';
    while (pos < src.length && src[pos] !== '"') {
      let c = src[pos++]!;
      if (c === '\\') {
        const e = src[pos++];
        const map: Record<string, string> = { n: '\n', r: '\r', t: '\t', '\\': '\\', '"': '"' };
        if (e === undefined || !(e in map)) return null;
        c = map[e]!;
      }
      out += c;
    }
    if (src[pos] !== '"') return null;
    pos++;
    return out;
  };
  const alt = (): string[] | null => {
    const options: string[] = [];
    for (;;) {
      const s = seq();
      if (!s) return null;
      options.push(...s);
      skip();
      if (src[pos] !== '|') return options;
      pos++;
    }
  };
  const seq = (): string[] | null => {
    let acc = [''];
    let items = 0;
    for (;;) {
      skip();
      let part: string[] | null;
      if (src[pos] === '"') {
        const l = literal();
        if (l === null) return null;
        part = [l];
      } else if (src[pos] === '(') {
        pos++;
        part = alt();
        skip();
        if (!part || src[pos] !== ')') return null;
        pos++;
      } else break;
      acc = acc.flatMap((a) => part.map((p) => a + p));
      if (acc.length > MAX_CHOICES) return null;
      items++;
    }
    return items > 0 ? acc : null;
  };
  const result = alt();
  skip();
  if (!result || pos !== src.length) return null;
  const unique = [...new Set(result)];
  return unique.length > 0 && unique.every((s) => s !== '') ? unique : null;
}
