// A row's paraphrases stored once: each run's paraphrases were parsed out of one generator output,
// which the generation cache keeps anyway, so a finished row may refer to that output (its cache
// key) and say where in it each paraphrase lies, instead of holding the paraphrases again.
//
// Where, not how: a paraphrase is recorded as the span of the output's text it equals, found when
// the row is saved, so reading a row back never parses anything and a change to the parser
// (engine/parse.ts) cannot change what an old row shows. A paraphrase the output does not contain
// as it is (a run padded with copies of the input) is kept as text. The output a row refers to is
// immutable: cache entries are written once and never changed or deleted (store.ts).
import type { RowRun } from './types';

/** A run as stored: its paraphrases as they are, or as spans of a cached generator output. */
export type StoredRun = RowRun | (Omit<RowRun, 'paraphrases'> & { paraphrasesIn: ParaphraseSpans });

/**
 * Where a run's paraphrases lie in a cached output: `entry` is the cache's stored key (base64),
 * `spans` one item per paraphrase, `[skip, length]` (the paraphrase starts `skip` characters after
 * the previous one ended, negative when it starts before; the first one after position 0), or the
 * paraphrase's text where the output does not contain it.
 */
export interface ParaphraseSpans {
  entry: string;
  spans: Array<[number, number] | string>;
}

/** The spans of `paraphrases` in `text`, or null when `text` holds none of them. */
export function locateParaphrases(text: string, paraphrases: readonly string[]): ParaphraseSpans['spans'] | null {
  let cursor = 0;
  let found = 0;
  const spans: ParaphraseSpans['spans'] = paraphrases.map((p) => {
    if (p === '') return p;
    let at = text.indexOf(p, cursor);
    if (at < 0) at = text.indexOf(p);
    if (at < 0) return p;
    found++;
    const span: [number, number] = [at - cursor, p.length];
    cursor = at + p.length;
    return span;
  });
  return found === 0 ? null : spans;
}

/** The paraphrases that `spans` locate in `text`. */
export function paraphrasesAt(text: string, spans: ParaphraseSpans['spans']): string[] {
  let cursor = 0;
  return spans.map((s) => {
    if (typeof s === 'string') return s;
    const at = cursor + s[0];
    cursor = at + s[1];
    return text.slice(at, cursor);
  });
}

/**
 * A row's runs as the app reads them. `entryText` gives a cached output's text by its stored key
 * (base64); an output that is missing (a file edited by hand) leaves its run with no paraphrases
 * rather than failing the whole row.
 */
export function expandRuns(stored: readonly StoredRun[], entryText: (entry: string) => string | undefined): RowRun[] {
  return stored.map((run) => {
    if (!('paraphrasesIn' in run)) return run;
    const { paraphrasesIn, ...rest } = run;
    const text = entryText(paraphrasesIn.entry);
    // Key order as the runner writes a run (manager.ts rowRecord), so a row reads back identical.
    const { run: n, seed, ...tail } = rest;
    return { run: n, seed, paraphrases: text === undefined ? [] : paraphrasesAt(text, paraphrasesIn.spans), ...tail };
  });
}
