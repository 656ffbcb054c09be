// The labelled data set out of a job (`tatra jobs export <id> --final`, the app's "Export labels"):
// every row of the file with its original columns (kept with the row at import: job_rows.record_json),
// then TATRA's columns, prefixed so they never take an original column's name:
//   tatra_index        the row's index (what `tatra jobs review --import` names it by)
//   tatra_final_label  the person's label where the row was reviewed, else the file's gold where
//                      it has one, else TATRA's label
//   tatra_final_source reviewed | gold | tatra ('' where the row has no label: not finished, no vote)
//   tatra_label, tatra_confidence, tatra_votes (one column per label in CSV, an object in JSONL)
// CSV or JSONL, written row by row through a temporary file renamed at the end (export.ts), so a
// 100,000-row job never sits in memory and a half-written export never looks finished.
import type Database from 'better-sqlite3';
import { emptyRecord, own } from '../common/records';
import { toCsv, voteLabels, writeAtomically } from './export';
import type { JobInfo } from './types';

export type FinalFormat = 'csv' | 'jsonl';

interface FinalDbRow {
  idx: number;
  input: string;
  gold: string | null;
  gold_raw: string | null;
  status: string;
  prediction: string | null;
  confidence: number | null;
  votes_json: string | null;
  record_json: string | null;
  decided: string | null;
}

/** A name not among `taken`: `name`, else `name_2`, `name_3`… */
function freeName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  let i = 2;
  while (taken.has(`${name}_${i}`)) i++;
  return `${name}_${i}`;
}

/** The row's original columns, its input in its column; a row imported before they were kept has its input and gold columns. */
function originalRecord(job: JobInfo, r: FinalDbRow): Record<string, string> {
  const out = emptyRecord<string>();
  if (r.record_json !== null) {
    for (const [k, v] of Object.entries(JSON.parse(r.record_json) as Record<string, string | null>)) out[k] = v ?? r.input;
    return out;
  }
  out[job.dataset.mapping.textColumn] = r.input;
  const gold = job.dataset.mapping.labelColumn;
  if (gold) out[gold] = r.gold_raw ?? '';
  return out;
}

function finalLabel(r: FinalDbRow): { label: string | null; source: 'reviewed' | 'gold' | 'tatra' | '' } {
  if (r.decided !== null) return { label: r.decided, source: 'reviewed' };
  if (r.gold !== null) return { label: r.gold, source: 'gold' };
  if (r.status === 'done' && r.prediction !== null) return { label: r.prediction, source: 'tatra' };
  return { label: null, source: '' };
}

/** The original columns of every row, in the order they first appear (a JSONL file's rows may differ). */
function originalColumns(job: JobInfo, rows: Iterable<FinalDbRow>): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(originalRecord(job, r))) seen.add(k);
  return [...seen];
}

export async function exportFinal(db: Database.Database, job: JobInfo, format: FinalFormat, outPath: string, signal?: AbortSignal): Promise<void> {
  const rows = () =>
    db
      .prepare(
        `SELECT r.idx, r.input, r.gold, r.gold_raw, r.status, r.prediction, r.confidence, r.votes_json, r.record_json, d.label AS decided
         FROM job_rows r LEFT JOIN review_decisions d ON d.job_id = r.job_id AND d.idx = r.idx WHERE r.job_id = ? ORDER BY r.idx`,
      )
      .iterate(job.id) as Iterable<FinalDbRow>;
  const originals = originalColumns(job, rows());
  const taken = new Set(originals);
  const name = (n: string) => freeName(n, taken);
  const cols = { index: name('tatra_index'), final: name('tatra_final_label'), source: name('tatra_final_source'), label: name('tatra_label'), confidence: name('tatra_confidence'), votes: name('tatra_votes') };
  const labels = voteLabels(job);
  await writeAtomically(
    outPath,
    async (write) => {
      if (format === 'csv') await write(toCsv([...originals, cols.index, cols.final, cols.source, cols.label, cols.confidence, ...(labels ? labels.map((l) => `${cols.votes}:${l}`) : [cols.votes])]));
      for (const r of rows()) {
        const record = originalRecord(job, r);
        const final = finalLabel(r);
        const done = r.status === 'done';
        const votes = r.votes_json === null ? null : (JSON.parse(r.votes_json) as Record<string, number>);
        if (format === 'csv') {
          await write(
            toCsv([
              ...originals.map((c) => own(record, c) ?? ''),
              r.idx,
              final.label,
              final.source,
              done ? r.prediction : null,
              done ? r.confidence : null,
              ...(labels ? labels.map((l) => (votes ? (own(votes, l) ?? 0) : '')) : [votes ? JSON.stringify(votes) : '']),
            ]),
          );
        } else {
          const out: Record<string, unknown> = Object.assign(emptyRecord<unknown>(), record);
          out[cols.index] = r.idx;
          out[cols.final] = final.label;
          out[cols.source] = final.source;
          out[cols.label] = done ? r.prediction : null;
          out[cols.confidence] = done ? r.confidence : null;
          out[cols.votes] = votes;
          await write(`${JSON.stringify(out)}\n`);
        }
      }
    },
    signal,
  );
}
