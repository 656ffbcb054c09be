// Streaming import of labelled data sets: CSV/TSV (csv-parse) and JSONL (the paper's
// messages/solution format and flat objects). Files are never read whole: a 50 MB file streams
// through in chunks, so memory stays bounded whatever its size.
//
// Decisions, documented here because the UI and the CLI both surface them:
// - Invalid UTF-8 is a UserError naming the line (we never guess an encoding and lose text).
// - A leading BOM is dropped; CRLF, LF and quoted fields spanning lines are accepted.
// - Ragged CSV rows are an error naming the line unless `allowRagged` (then counted).
// - Duplicate header names become `name`, `name_2`, …; an empty header name becomes `column_N`.
// - Rows whose input is empty are skipped and counted; they take no row index.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse as csvParse } from 'csv-parse';
import { parse as csvParseSync } from 'csv-parse/sync';
import { UserError, isAbortError } from '../common/errors';
import { emptyRecord, own } from '../common/records';
import type {
  ColumnMapping,
  DatasetFormat,
  DatasetOptions,
  DatasetPreview,
  DatasetReader,
  DatasetRow,
  DatasetScan,
  DatasetStats,
  OpenedDataset,
} from './types';
import { textSource, type TextSource } from './text-source';
import { goldLabelResolver } from './gold-labels';

const PREVIEW_ROWS = 20;
const DELIMITERS = [',', '\t', ';', '|'] as const;

// ---------------------------------------------------------------- format detection

async function firstText(path: string, maxBytes = 64 * 1024): Promise<string> {
  const stream = createReadStream(path, { start: 0, end: maxBytes - 1 });
  const parts: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) parts.push(c);
  // Non-fatal here: detection only; the real read reports bad bytes with their line.
  return new TextDecoder('utf-8').decode(Buffer.concat(parts)).replace(/^\uFEFF/, '');
}

function detectDelimiter(headerLine: string): string {
  let best = ',';
  let bestCount = 0;
  for (const d of DELIMITERS) {
    let inQuotes = false;
    let count = 0;
    for (const ch of headerLine) {
      if (ch === '"') inQuotes = !inQuotes;
      else if (ch === d && !inQuotes) count++;
    }
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
}

interface DetectedFormat {
  format: DatasetFormat;
  delimiter?: string;
}

/** Decides the format (and CSV delimiter) from the extension, then from the first bytes. */
export async function detectFormat(path: string, opts: Pick<DatasetOptions, 'format' | 'delimiter'> = {}): Promise<DetectedFormat> {
  await assertReadableFile(path);
  return formatOf(path, await firstText(path), opts);
}

/** The format (and CSV delimiter) a file's first bytes, `head`, show. */
function formatOf(path: string, head: string, opts: Pick<DatasetOptions, 'format' | 'delimiter'>): DetectedFormat {
  if (head.trim().length === 0) throw new UserError(`${basename(path)} is empty`, 'dataset_empty');
  const ext = extname(path).toLowerCase();
  let format = opts.format;
  if (!format) {
    if (ext === '.jsonl' || ext === '.ndjson' || ext === '.json') format = 'jsonl';
    else if (ext === '.tsv' || ext === '.tab') format = 'tsv';
    else if (ext === '.csv') format = 'csv';
    else format = head.trimStart().startsWith('{') ? 'jsonl' : 'csv';
  }
  if (format === 'jsonl') return { format };
  if (format === 'tsv') return { format, delimiter: opts.delimiter ?? '\t' };
  const firstLine = head.split(/\r?\n/, 1)[0] ?? '';
  const delimiter = opts.delimiter ?? detectDelimiter(firstLine);
  return { format: delimiter === '\t' ? 'tsv' : 'csv', delimiter };
}

async function assertReadableFile(path: string): Promise<number> {
  let s;
  try {
    s = await stat(path);
  } catch {
    throw new UserError(`data file not found: ${path}`, 'dataset_missing');
  }
  if (s.isDirectory()) throw new UserError(`${path} is a folder, not a data file`, 'dataset_missing');
  if (s.size === 0) throw new UserError(`${basename(path)} is empty`, 'dataset_empty');
  return s.size;
}

// ---------------------------------------------------------------- records

interface RawRecord {
  line: number;
  values: Record<string, string>;
}

interface RecordStream {
  format: DatasetFormat;
  delimiter?: string;
  /** CSV: known after the header is read (before the first record). JSONL: grows as keys appear. */
  columns: string[];
  records: AsyncGenerator<RawRecord>;
  bytesRead(): number;
  fingerprint(): Promise<string>;
  ragged(): number;
}

export function disambiguateHeaders(names: string[]): string[] {
  const used = new Set<string>();
  return names.map((raw, i) => {
    const base = raw.trim() === '' ? `column_${i + 1}` : raw.trim();
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  });
}

function stringify(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** Paper format: {"messages":[…{"role":"user","content":…}…],"solution":…} → input, solution. */
function flattenJsonObject(obj: Record<string, unknown>): Record<string, string> {
  // Keys are the file's: no prototype to answer `constructor` or to be replaced by `__proto__`.
  const out = emptyRecord<string>();
  if (Array.isArray(obj.messages)) {
    const user = (obj.messages as unknown[]).find(
      (m): m is { content: unknown } => typeof m === 'object' && m !== null && (m as { role?: unknown }).role === 'user',
    );
    out.input = user ? stringify(user.content) : '';
    for (const [k, v] of Object.entries(obj)) if (k !== 'messages') out[k] = stringify(v);
    return out;
  }
  for (const [k, v] of Object.entries(obj)) out[k] = stringify(v);
  return out;
}

/**
 * A data file's records as they are, every value a string, in one pass (format, encoding and
 * ragged rows checked as a job's import checks them): for files that are not a job's rows, such as
 * the decisions `tatra jobs review --import` reads.
 */
export async function readRecords(path: string, opts: Pick<DatasetOptions, 'signal'> = {}): Promise<AsyncIterable<{ line: number; values: Record<string, string> }>> {
  await assertReadableFile(path);
  return (await openRecords(path, opts)).records;
}

/** The file's records, in one pass; `detected`: its format as openDataset found it (else read from its head now). */
async function openRecords(path: string, opts: DatasetOptions, detected?: DetectedFormat): Promise<RecordStream> {
  const { format, delimiter } = detected ?? (await detectFormat(path, opts));
  const src = textSource(path, opts.signal);
  return format === 'jsonl' ? jsonlRecords(src, basename(path)) : delimitedRecords(src, basename(path), format, delimiter, opts);
}

/** JSON Lines: one object per line (blank lines skipped); the columns are the keys, as they appear. */
function jsonlRecords(src: TextSource, name: string): RecordStream {
  const columns: string[] = [];
  async function* jsonl(): AsyncGenerator<RawRecord> {
    let pending = '';
    let line = 0;
    const known = new Set<string>();
    const handle = (text: string): RawRecord | null => {
      line++;
      const t = text.replace(/\r$/, '');
      if (t.trim() === '') return null;
      let obj: unknown;
      try {
        obj = JSON.parse(t);
      } catch (e) {
        throw new UserError(`${name}: line ${line} is not valid JSON (${e instanceof Error ? e.message : String(e)})`, 'dataset_malformed');
      }
      if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
        throw new UserError(`${name}: line ${line} is not a JSON object`, 'dataset_malformed');
      }
      const values = flattenJsonObject(obj as Record<string, unknown>);
      for (const k of Object.keys(values)) {
        if (!known.has(k)) {
          known.add(k);
          columns.push(k);
        }
      }
      return { line, values };
    };
    for await (const chunk of src.chunks) {
      pending += chunk;
      // Walk the lines with an index and keep only the unfinished tail, so a chunk of many
      // short lines is not re-copied once per line.
      let start = 0;
      let nl: number;
      while ((nl = pending.indexOf('\n', start)) >= 0) {
        const rec = handle(pending.slice(start, nl));
        start = nl + 1;
        if (rec) yield rec;
      }
      pending = pending.slice(start);
    }
    if (pending.length > 0) {
      const rec = handle(pending);
      if (rec) yield rec;
    }
  }
  return { format: 'jsonl', columns, records: jsonl(), bytesRead: src.bytesRead, fingerprint: src.fingerprint, ragged: () => 0 };
}

/** CSV or TSV: a header line, then records; a row with another field count is refused unless ragged rows are allowed (then counted). */
function delimitedRecords(src: TextSource, name: string, format: DatasetFormat, delimiter: string | undefined, opts: DatasetOptions): RecordStream {
  let ragged = 0;
  const columns: string[] = [];
  const parser = csvParse({
    delimiter: delimiter ?? ',',
    // LF and CRLF; a bare CR (classic Mac) is not a line end, which keeps CRLF split across two
    // read chunks from ever looking like two lines.
    record_delimiter: ['\r\n', '\n'],
    relax_column_count: true,
    raw: true,
    bom: true,
    // TSV exports rarely quote; a quote inside a TSV field is text (it's "fine").
    relax_quotes: delimiter === '\t',
  });
  const feeding = pipeline(Readable.from(src.chunks), parser).catch((e: unknown) => {
    // The parser is destroyed with the same error and the iterator below rethrows it.
    void e;
  });
  async function* csv(): AsyncGenerator<RawRecord> {
    let line = 1;
    let header: string[] | null = null;
    try {
      for await (const item of parser as AsyncIterable<{ record: string[]; raw: string }>) {
        const start = line;
        const inner = item.raw.replace(/[\r\n]$/, '');
        line += 1 + (inner.match(/\n/g)?.length ?? 0);
        const rec = item.record;
        if (rec.length === 1 && rec[0]!.trim() === '') continue; // blank line
        if (!header) {
          header = disambiguateHeaders(rec);
          columns.push(...header);
          continue;
        }
        if (rec.length !== header.length) {
          if (!opts.allowRagged) {
            throw new UserError(
              `${name}: line ${start} has ${rec.length} fields but the header has ${header.length} (quote fields that contain "${delimiter === '\t' ? '\\t' : delimiter}", or allow ragged rows)`,
              'dataset_ragged',
            );
          }
          ragged++;
        }
        const values = emptyRecord<string>();
        header.forEach((h, i) => (values[h] = rec[i] ?? ''));
        yield { line: start, values };
      }
    } catch (e) {
      if (e instanceof UserError || isAbortError(e)) throw e;
      if (e instanceof CsvError) {
        // An unclosed quote is reported where the file ends; the record began where we stand.
        const at = e.code === 'CSV_QUOTE_NOT_CLOSED' ? line : ((e as CsvError & { lines?: number }).lines ?? line);
        throw new UserError(`${name}: line ${at} cannot be read: ${e.message.replace(/ at line \d+.*$/, '').toLowerCase()}`, 'dataset_malformed');
      }
      throw e;
    } finally {
      parser.destroy();
      await feeding;
    }
    if (!header) throw new UserError(`${name} has no header line`, 'dataset_empty');
  }
  return { format, delimiter, columns, records: csv(), bytesRead: src.bytesRead, fingerprint: src.fingerprint, ragged: () => ragged };
}

// ---------------------------------------------------------------- public API

/** Reads the first rows of a data file for the mapping UI. */
export async function previewDataset(path: string, opts: DatasetOptions & { maxRows?: number } = {}): Promise<DatasetPreview> {
  const sizeBytes = await assertReadableFile(path);
  const maxRows = opts.maxRows ?? PREVIEW_ROWS;
  const src = await openRecords(path, { ...opts, allowRagged: true });
  const rows: Record<string, string>[] = [];
  let exhausted = true;
  for await (const rec of src.records) {
    if (rows.length >= maxRows) {
      exhausted = false;
      break;
    }
    rows.push(rec.values);
  }
  if (src.columns.length === 0) throw new UserError(`${basename(path)} has no columns`, 'dataset_empty');
  const read = src.bytesRead();
  const totalRowsEstimate = exhausted ? rows.length : read > 0 ? Math.round((rows.length * sizeBytes) / read) : undefined;
  const preview: DatasetPreview = {
    path,
    format: src.format,
    columns: [...src.columns],
    rows,
    sizeBytes,
    ...(src.delimiter !== undefined ? { delimiter: src.delimiter } : {}),
    ...(totalRowsEstimate !== undefined ? { totalRowsEstimate } : {}),
  };
  return { ...preview, ...suggestColumns(preview.columns) };
}

/** Best guesses for the input and gold columns: the paper's JSONL gives `input`/`solution`. */
function suggestColumns(columns: readonly string[]): Pick<DatasetPreview, 'suggestedTextColumn' | 'suggestedLabelColumn'> {
  const lower = columns.map((c) => c.toLowerCase());
  const pick = (cands: string[]) => {
    for (const c of cands) {
      const i = lower.indexOf(c);
      if (i >= 0) return columns[i];
    }
    return undefined;
  };
  const text = pick(['input', 'text', 'sentence', 'question', 'problem', 'headline', 'content', 'review']) ?? columns[0];
  const label = pick(['solution', 'label', 'gold', 'answer', 'target', 'class', 'category', 'sentiment']);
  return { ...(text ? { suggestedTextColumn: text } : {}), ...(label && label !== text ? { suggestedLabelColumn: label } : {}) };
}

/** The columns in a file's first bytes; null when they do not hold a whole header line or first object. */
function headColumns(head: string, detected: DetectedFormat): string[] | null {
  const lines = head.split('\n');
  // The last piece may be cut short by the end of the head.
  const first = lines.slice(0, -1).find((l) => l.trim() !== '');
  if (first === undefined) return null;
  if (detected.format === 'jsonl') {
    try {
      const obj: unknown = JSON.parse(first);
      return typeof obj === 'object' && obj !== null && !Array.isArray(obj) ? Object.keys(flattenJsonObject(obj as Record<string, unknown>)) : null;
    } catch {
      return null;
    }
  }
  try {
    const [record] = csvParseSync(first.replace(/\r$/, ''), { delimiter: detected.delimiter ?? ',', relax_column_count: true, relax_quotes: detected.delimiter === '\t', bom: true }) as string[][];
    return record ? disambiguateHeaders(record) : null;
  } catch {
    // A header line with a quoted line break: the full reader knows.
    return null;
  }
}

/** Opens a data file for a job: its first bytes read once for the format and the columns. */
export async function openDataset(path: string, opts: DatasetOptions = {}): Promise<OpenedDataset> {
  const sizeBytes = await assertReadableFile(path);
  const head = await firstText(path);
  const detected = formatOf(path, head, opts);
  // A header longer than the head (or a header line with a quoted line break): read by the full parser.
  const columns = headColumns(head, detected) ?? (await previewDataset(path, { ...opts, ...detected, maxRows: 1 })).columns;
  return {
    path,
    ...detected,
    sizeBytes,
    columns,
    ...suggestColumns(columns),
    read: (mapping, readOpts = {}) => mappedReader(path, mapping, { ...opts, ...readOpts }, detected),
  };
}

function newStats(): DatasetStats {
  return { rows: 0, skippedEmpty: 0, unmappedGold: emptyRecord<number>(), missingGold: 0, ragged: 0 };
}

/** A name from a file, cut for an error line (a 100 KB column name is still one short line). */
export function shownName(name: string, max = 60): string {
  return name.length > max ? `${name.slice(0, max - 1)}…` : name;
}

/** Column names for an error line: at most a dozen, each cut. */
export function shownColumns(cols: readonly string[]): string {
  const shown = cols.slice(0, 12).map((c) => shownName(c, 40));
  return shown.join(', ') + (cols.length > 12 ? `, … (${cols.length} in all)` : '');
}

/**
 * Streams the rows of a data file through a column (and optional label) mapping. Unknown
 * columns, unreadable lines and bad bytes are UserErrors naming the file and line.
 */
export function readDataset(path: string, mapping: ColumnMapping, opts: DatasetOptions = {}): DatasetReader {
  return mappedReader(path, mapping, opts);
}

function mappedReader(path: string, mapping: ColumnMapping, opts: DatasetOptions, detected?: DetectedFormat): DatasetReader {
  const stats = newStats();
  let format: DatasetFormat = detected?.format ?? 'csv';
  let opened: Promise<RecordStream> | null = null;
  async function* rows(): AsyncGenerator<DatasetRow> {
    opened = openRecords(path, opts, detected);
    const src = await opened;
    format = src.format;
    const name = basename(path);
    let index = 0;
    let checked = false;
    const labelCol = mapping.labelColumn ?? null;
    const goldOf = goldLabelResolver(mapping.labelMap, opts.labels);
    for await (const rec of src.records) {
      if (!checked) {
        checked = true;
        // CSV columns are fixed by the header; JSONL keys may vary, so check the first row.
        const cols = src.format === 'jsonl' ? Object.keys(rec.values) : src.columns;
        for (const col of [mapping.textColumn, labelCol]) {
          if (col !== null && !cols.includes(col)) {
            throw new UserError(`${name}: no column "${shownName(col)}" (columns: ${shownColumns(cols)})`, 'dataset_column');
          }
        }
      }
      const input = own(rec.values, mapping.textColumn) ?? '';
      if (input.trim() === '') {
        stats.skippedEmpty++;
        continue;
      }
      let gold: string | null = null;
      let goldRaw: string | null = null;
      if (labelCol !== null) {
        const v = (own(rec.values, labelCol) ?? '').trim();
        if (v === '') stats.missingGold++;
        else {
          goldRaw = v;
          gold = goldOf(v);
          if (gold === null) stats.unmappedGold[v] = (own(stats.unmappedGold, v) ?? 0) + 1;
        }
      }
      stats.rows++;
      // Every column as the file had it, kept with the row for the final export (the input once: its own column).
      const record: Record<string, string | null> = Object.assign(emptyRecord<string | null>(), rec.values);
      record[mapping.textColumn] = null;
      yield { index: index++, line: rec.line, input, gold, goldRaw, record: JSON.stringify(record) };
    }
    stats.ragged = src.ragged();
  }
  const it = rows();
  return {
    get format() {
      return format;
    },
    stats,
    // After iterating (to the end or to a break); a reader never iterated reads the file just to hash it.
    fingerprint: async () => (opened ? (await opened).fingerprint() : textSource(path).fingerprint()),
    [Symbol.asyncIterator]: () => it,
  };
}

/** Streams the whole file once: row count, empty inputs, gold value counts and fingerprint. */
export async function scanDataset(path: string, mapping: { textColumn: string; labelColumn?: string | null }, opts: DatasetOptions = {}): Promise<DatasetScan> {
  const ds = await openDataset(path, opts);
  const reader = ds.read({ textColumn: mapping.textColumn, labelColumn: mapping.labelColumn ?? null }, opts);
  const goldValueCounts = emptyRecord<number>();
  for await (const row of reader) {
    if (row.goldRaw !== null) goldValueCounts[row.goldRaw] = (own(goldValueCounts, row.goldRaw) ?? 0) + 1;
  }
  return {
    format: ds.format,
    ...(ds.delimiter !== undefined ? { delimiter: ds.delimiter } : {}),
    columns: [...ds.columns],
    rows: reader.stats.rows,
    skippedEmpty: reader.stats.skippedEmpty,
    goldValueCounts,
    fingerprint: await reader.fingerprint(),
  };
}
