// Exports of a job: CSV with one row per input (what a spreadsheet wants) and JSON with
// everything (examples and paraphrases included). Both are written row by row, so a 100,000-row
// job never builds its export in memory, and via a temporary file renamed at the end, so a
// half-written export never looks finished (a device or a pipe is written in place: exportTarget). The readers exist so tests (and users' scripts)
// can round-trip an export.
import { createWriteStream } from 'node:fs';
import { lstat, readFile, realpath, rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { parse as parseCsvSync } from 'csv-parse/sync';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import { dirname } from 'node:path';
import { UserError } from '../common/errors';
import { environmentError, ifMissing } from '../common/env-errors';
import type { JobStore } from './store';
import type { JobInfo, JobMetrics, JobRow, StoredRunExamples } from './types';
import { answeredAt } from './calibration';
import { emptyRecord, own } from '../common/records';

export interface JsonExport {
  format: 'tatra-job-export';
  version: 1;
  job: JobInfo;
  metrics: JobMetrics;
  /** Scope `run`: the examples every row of run j shared. Empty for scope `input`. */
  runExamples: StoredRunExamples[];
  /** `abstained` present when exported with a minimum confidence. */
  rows: (JobRow & { abstained?: boolean })[];
}

/** One CSV export row as read back: `votes` per label from the `votes:<label>` columns. */
export interface CsvExportRow {
  index: number;
  line: number;
  input: string;
  gold: string | null;
  goldRaw: string | null;
  prediction: string | null;
  correct: boolean | null;
  confidence: number | null;
  votes: Record<string, number>;
  baselinePrediction: string | null;
  baselineCorrect: boolean | null;
  status: string;
  error: string | null;
  /** Present when the export was made with a minimum confidence: a done row below it (null: not done). */
  abstained?: boolean | null;
}

/**
 * One CSV record (RFC 4180, CRLF) written by csv-stringify, the sibling of the csv-parse we import
 * with. Exports are opened in spreadsheets, where a cell starting with `=`, `+`, `-`, `@`, tab or
 * CR runs as a formula: a data set or a model output could carry `=HYPERLINK(…)` or worse. Such
 * cells get a leading `'` (escape_formulas), which spreadsheets show as text;
 * `readCsvExport` takes it off again.
 */
export function toCsv(values: ReadonlyArray<string | number | boolean | null | undefined>): string {
  return stringifyCsv([values.map((v) => (v === null || v === undefined ? '' : typeof v === 'number' ? String(v) : formulaSafe(String(v))))], { record_delimiter: '\r\n' });
}

/**
 * csv-stringify's escape_formulas for text. A JS number (a negative difference) is written as it is:
 * it is no formula, and a spreadsheet must read it as a number.
 */
function formulaSafe(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/** Undoes escape_formulas on a cell read back. */
function unescapeFormula(cell: string): string {
  return /^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
}

function boolCell(v: boolean | null): string {
  return v === null ? '' : v ? 'true' : 'false';
}

/**
 * Where an export's bytes go. A new path or a regular file is replaced atomically (a temporary
 * file beside it, renamed over it at the end); a symbolic link to a regular file keeps its link
 * and has its target replaced so. Anything else (a device such as /dev/null, a named pipe, a
 * link to one, /proc/self/fd/1) is written in place and never renamed over or removed: renaming
 * over /dev/null as root replaced the system's /dev/null with a regular file.
 */
async function exportTarget(outPath: string): Promise<{ path: string; atomic: boolean }> {
  const link = await lstat(outPath).catch(ifMissing(null));
  if (!link || link.isFile()) return { path: outPath, atomic: true };
  if (link.isSymbolicLink()) {
    // A link to nothing is written in place.
    const target = await realpath(outPath).catch(ifMissing(null));
    const st = target === null ? null : await stat(target).catch(ifMissing(null));
    if (target !== null && st?.isFile()) return { path: target, atomic: true };
  }
  return { path: outPath, atomic: false };
}

export async function writeAtomically(outPath: string, body: (write: (s: string) => Promise<void>) => Promise<void>, signal?: AbortSignal): Promise<void> {
  const target = await exportTarget(outPath);
  const tmp = target.atomic ? `${target.path}.partial` : null;
  const out = createWriteStream(tmp ?? target.path, { encoding: 'utf8' });
  // Kept, not thrown from the event: an 'error' with no listener would end the process.
  let failed: unknown = null;
  out.on('error', (e) => (failed ??= e));
  const write = async (s: string) => {
    // Stopped (Ctrl-C): the catch below removes the partial file, so nothing half-written stays.
    signal?.throwIfAborted();
    if (failed !== null) throw failed;
    if (!out.write(s)) await once(out, 'drain');
  };
  try {
    await body(write);
    if (failed !== null) throw failed;
    out.end();
    // finished() also settles for a stream that failed before we started waiting.
    await finished(out);
    if (tmp !== null) await rename(tmp, target.path);
  } catch (e) {
    out.destroy();
    if (tmp !== null) await rm(tmp, { force: true });
    // A full or read-only disk names the export, not the temporary file.
    throw environmentError(e, outPath) ?? e;
  }
}

/** Vote columns: the task's labels; for math (free-form answers) one JSON column. */
export function voteLabels(job: JobInfo): string[] | null {
  return job.task.kind === 'math' ? null : job.task.labels.map((l) => l.name);
}

/** A done row below the minimum confidence is abstained; other rows (pending, failed) are neither. */
function abstainedCell(row: JobRow, minConfidence: number | undefined): boolean | null {
  if (minConfidence === undefined || row.status !== 'done') return null;
  return !answeredAt(row.confidence, minConfidence);
}

export async function exportCsv(store: JobStore, job: JobInfo, outPath: string, signal?: AbortSignal, minConfidence?: number): Promise<void> {
  const labels = voteLabels(job);
  const marked = minConfidence !== undefined;
  await writeAtomically(outPath, async (write) => {
    await write(
      toCsv([
        'index',
        'line',
        'input',
        'gold',
        'gold_raw',
        'prediction',
        'correct',
        'confidence',
        ...(marked ? ['abstained'] : []),
        ...(labels ? labels.map((l) => `votes:${l}`) : ['votes']),
        'baseline_prediction',
        'baseline_correct',
        'status',
        'error',
      ]),
    );
    for (const row of store.iterateRows(job.id)) {
      await write(
        toCsv([
          row.index,
          row.line,
          row.input,
          row.gold,
          row.goldRaw,
          row.prediction,
          boolCell(row.correct),
          row.confidence,
          ...(marked ? [boolCell(abstainedCell(row, minConfidence))] : []),
          ...(labels ? labels.map((l) => (row.votes ? (own(row.votes, l) ?? 0) : '')) : [row.votes ? JSON.stringify(row.votes) : '']),
          row.baseline?.label ?? null,
          boolCell(row.baseline?.correct ?? null),
          row.status,
          row.error,
        ]),
      );
    }
  }, signal);
}

export async function exportJson(store: JobStore, job: JobInfo, metrics: JobMetrics, outPath: string, signal?: AbortSignal, minConfidence?: number): Promise<void> {
  await writeAtomically(outPath, async (write) => {
    const head = { format: 'tatra-job-export', version: 1, job, metrics, runExamples: store.runExamples(job.id) };
    const headText = JSON.stringify(head, null, 1);
    await write(`${headText.slice(0, -2)},\n "rows": [`);
    let first = true;
    for (const row of store.iterateRows(job.id)) {
      const abstained = abstainedCell(row, minConfidence);
      await write(`${first ? '\n' : ',\n'}${JSON.stringify(abstained === null ? row : { ...row, abstained })}`);
      first = false;
    }
    await write('\n ]\n}\n');
  }, signal);
}

/** Writes a job's export; the manager's `export()` calls this. */
export async function exportJob(store: JobStore, job: JobInfo, metrics: JobMetrics, format: 'csv' | 'json', outPath: string, signal?: AbortSignal, minConfidence?: number): Promise<void> {
  if (format === 'csv') await exportCsv(store, job, outPath, signal, minConfidence);
  else await exportJson(store, job, metrics, outPath, signal, minConfidence);
}

export async function readJsonExport(path: string): Promise<JsonExport> {
  const data = JSON.parse(await readFile(path, 'utf8')) as JsonExport;
  if (data.format !== 'tatra-job-export') throw new Error(`${path} is not a TATRA job export`);
  return data;
}

export async function readCsvExport(path: string): Promise<CsvExportRow[]> {
  const raw = parseCsvSync(await readFile(path, 'utf8'), { columns: true, bom: true }) as Record<string, string>[];
  const records = raw.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, unescapeFormula(v)])));
  const nul = (s: string | undefined) => (s === undefined || s === '' ? null : s);
  const boolOf = (s: string | undefined) => (s === 'true' ? true : s === 'false' ? false : null);
  return records.map((r) => {
    const votes = emptyRecord<number>();
    for (const [k, v] of Object.entries(r)) {
      if (k.startsWith('votes:') && v !== '') votes[k.slice('votes:'.length)] = Number(v);
    }
    if (r.votes) Object.assign(votes, JSON.parse(r.votes) as Record<string, number>);
    return {
      index: Number(r.index),
      line: Number(r.line),
      input: r.input ?? '',
      gold: nul(r.gold),
      goldRaw: nul(r.gold_raw),
      prediction: nul(r.prediction),
      correct: boolOf(r.correct),
      confidence: nul(r.confidence) === null ? null : Number(r.confidence),
      votes,
      baselinePrediction: nul(r.baseline_prediction),
      baselineCorrect: boolOf(r.baseline_correct),
      status: r.status ?? '',
      error: nul(r.error),
      ...(r.abstained !== undefined ? { abstained: boolOf(r.abstained) } : {}),
    };
  });
}

/** Refuses an export path that cannot work, before any row is read: a folder, or a missing folder. */
export async function checkOutPath(outPath: string): Promise<void> {
  const target = await stat(outPath).catch(ifMissing(null));
  if (target?.isDirectory()) throw new UserError(`${outPath} is a folder; give a file name to export to`, 'bad_option');
  const folder = dirname(outPath);
  const parent = await stat(folder).catch(ifMissing(null));
  if (!parent) throw new UserError(`cannot export to ${outPath}: the folder ${folder} does not exist`, 'bad_option');
  if (!parent.isDirectory()) throw new UserError(`cannot export to ${outPath}: ${folder} is a file, not a folder`, 'bad_option');
}
