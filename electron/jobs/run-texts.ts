// A row's paraphrases stored once: each run's paraphrases were parsed out of one generator output,
// which the generation cache keeps anyway, so a finished row may refer to that output (its cache
// key) and say where in it each paraphrase lies, instead of holding the paraphrases again.
//
// Where, not how: a paraphrase is recorded as the span of the output's text it equals, found when
// the row is saved, so reading a row back never parses anything and a change to the parser
// (engine/parse.ts) cannot change what an old row shows. A paraphrase the output does not contain
// as it is (a run padded with copies of the input) is kept as text. The output a row refers to is
// immutable: cache entries are written once and never changed or deleted (store.ts).
import type Database from 'better-sqlite3';
import { cachedParaphrases } from '../engine/classify';
import { packText, unpackText } from './stored-text';
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

/**
 * `runs` as stored: each run's paraphrases as spans of the first of its `candidates` (stored cache
 * keys) whose output holds any of them, else as they are. `referred`: the runs that refer.
 */
export function referRuns(
  runs: readonly StoredRun[],
  candidates: (run: RowRun) => Iterable<Buffer>,
  entryText: (entry: Buffer) => string | null,
): { runs: StoredRun[]; referred: number } {
  let referred = 0;
  const stored = runs.map((run): StoredRun => {
    if ('paraphrasesIn' in run || run.paraphrases.length === 0) return run;
    for (const entry of candidates(run)) {
      const text = entryText(entry);
      const spans = text === null ? null : locateParaphrases(text, run.paraphrases);
      if (spans === null) continue;
      referred++;
      const { paraphrases: _, ...rest } = run;
      return { ...rest, paraphrasesIn: { entry: entry.toString('base64'), spans } };
    }
    return run;
  });
  return { runs: stored, referred };
}

/**
 * Makes rows written before schema v11 refer to the cache as new rows do (`tatra jobs gc`), where
 * that stores them smaller; every row reads the same afterwards. Their outputs are found by
 * content, since the cache's keys no longer name the row they served: each cached output is
 * indexed by the first paraphrase today's parser reads in it, and a run's first paraphrase looks
 * it up; the spans are then checked against the text itself, as for new rows, so an output the
 * parser reads differently now is only not found. Returns the rows rewritten.
 */
export function referStoredParaphrases(db: Database.Database, batch = 500): number {
  const byFirst = new Map<string, Buffer[]>();
  for (const { key, value } of db.prepare(`SELECT key, value FROM generation_cache`).iterate() as Iterable<{ key: Buffer; value: string | Buffer }>) {
    const first = cachedParaphrases(unpackText(value)!, 1, '')[0];
    if (!first) continue;
    const keys = byFirst.get(first);
    if (keys) keys.push(key);
    else byFirst.set(first, [key]);
  }
  if (byFirst.size === 0) return 0;
  const read = db.prepare(`SELECT value FROM generation_cache WHERE key = ?`);
  const entryText = (entry: Buffer) => unpackText((read.get(entry) as { value: string | Buffer } | undefined)?.value);
  const page = db.prepare(`SELECT job_id, idx, runs_json FROM job_rows WHERE runs_json IS NOT NULL AND (job_id > ? OR (job_id = ? AND idx > ?)) ORDER BY job_id, idx LIMIT ?`);
  const set = db.prepare(`UPDATE job_rows SET runs_json = ? WHERE job_id = ? AND idx = ?`);
  let rewritten = 0;
  let after = { job: '', idx: -1 };
  for (;;) {
    const rows = page.all(after.job, after.job, after.idx, batch) as { job_id: string; idx: number; runs_json: string | Buffer }[];
    if (rows.length === 0) break;
    db.transaction(() => {
      for (const r of rows) {
        const { runs, referred } = referRuns(JSON.parse(unpackText(r.runs_json)!) as StoredRun[], (run) => byFirst.get(run.paraphrases[0]!) ?? [], entryText);
        if (referred === 0) continue;
        const packed = packText(JSON.stringify(runs));
        if (packed.length >= r.runs_json.length) continue;
        set.run(packed, r.job_id, r.idx);
        rewritten++;
      }
    })();
    const last = rows.at(-1)!;
    after = { job: last.job_id, idx: last.idx };
  }
  return rewritten;
}
