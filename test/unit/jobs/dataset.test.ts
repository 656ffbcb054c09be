// Importer tests on awkward files the tests write: BOM, CRLF, quoted newlines, ragged rows,
// duplicate headers, invalid UTF-8, empty files, JSONL in the paper's format and flat objects.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { TaskDefinition } from '../../../electron/common/task';
import { previewDataset, readDataset, scanDataset, suggestLabelMapping } from '../../../electron/jobs';
import type { ColumnMapping, DatasetRow } from '../../../electron/jobs';

const dir = mkdtempSync(join(tmpdir(), 'tatra-ds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

async function readAll(path: string, mapping: ColumnMapping, opts = {}): Promise<{ rows: DatasetRow[]; reader: ReturnType<typeof readDataset> }> {
  const reader = readDataset(path, mapping, opts);
  const rows: DatasetRow[] = [];
  for await (const r of reader) rows.push(r);
  return { rows, reader };
}

async function errorOf(p: Promise<unknown>): Promise<UserError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return e as UserError;
  }
  throw new Error('expected a UserError');
}

const sst2 = TaskDefinition.parse({
  id: 'sst2t',
  name: 'SST-2',
  kind: 'classification',
  labels: [{ name: 'negative' }, { name: 'positive' }],
  defaultLabel: 'negative',
  instruction: 'Classify the sentiment.',
  inputName: 'Sentence',
  topics: ['acting'],
  preserve: 'the sentiment',
  evaluatorMaxTokens: 4,
});

describe('CSV/TSV import', () => {
  it('strips a BOM, accepts CRLF and quoted fields spanning lines, and numbers lines from the file', async () => {
    const p = file('bom.csv', '\uFEFFtext,label\r\n"great, really",1\r\n"line one\r\nline two",0\r\nplain,1\r\n');
    const prev = await previewDataset(p);
    expect(prev.format).toBe('csv');
    expect(prev.delimiter).toBe(',');
    expect(prev.columns).toEqual(['text', 'label']);
    expect(prev.rows).toEqual([
      { text: 'great, really', label: '1' },
      { text: 'line one\r\nline two', label: '0' },
      { text: 'plain', label: '1' },
    ]);
    expect(prev.totalRowsEstimate).toBe(3);
    const { rows } = await readAll(p, { textColumn: 'text', labelColumn: 'label', labelMap: { '0': 'negative', '1': 'positive' } });
    expect(rows.map((r) => [r.index, r.line, r.gold])).toEqual([
      [0, 2, 'positive'],
      [1, 3, 'negative'],
      [2, 5, 'positive'],
    ]);
  });

  it('detects ; and tab delimiters and TSV by extension', async () => {
    const semi = await previewDataset(file('semi.txt', 'a;b\n"x;y";z\n'));
    expect(semi.delimiter).toBe(';');
    expect(semi.rows[0]).toEqual({ a: 'x;y', b: 'z' });
    const tsv = await previewDataset(file('t.tsv', 'sentence\tlabel\nit, was "fine"\tpositive\n'));
    expect(tsv.format).toBe('tsv');
    expect(tsv.rows[0]).toEqual({ sentence: 'it, was "fine"', label: 'positive' });
  });

  it('disambiguates duplicate and empty header names', async () => {
    const prev = await previewDataset(file('dup.csv', 'name,name,,name\na,b,c,d\n'));
    expect(prev.columns).toEqual(['name', 'name_2', 'column_3', 'name_3']);
    expect(prev.rows[0]).toEqual({ name: 'a', name_2: 'b', column_3: 'c', name_3: 'd' });
  });

  it('rejects a ragged row naming its line, or tolerates and counts it when allowed', async () => {
    const p = file('ragged.csv', 'text,label\nok,1\ntoo,many,fields\nshort\nfine,0\n');
    const e = await errorOf(readAll(p, { textColumn: 'text', labelColumn: 'label' }));
    expect(e.message).toMatch(/ragged\.csv: line 3 has 3 fields but the header has 2/);
    const { rows, reader } = await readAll(p, { textColumn: 'text', labelColumn: 'label' }, { allowRagged: true });
    expect(rows.map((r) => r.input)).toEqual(['ok', 'too', 'short', 'fine']);
    expect(reader.stats.ragged).toBe(2);
    expect(reader.stats.missingGold).toBe(1);
  });

  it('names the line of an unclosed quote', async () => {
    const p = file('quote.csv', 'text,label\nok,1\n"never closed,0\nmore,1\n');
    const e = await errorOf(readAll(p, { textColumn: 'text' }));
    expect(e.message).toMatch(/^quote\.csv: line 3 cannot be read: quote not closed/);
    const q = file('opening.csv', 'text,label\nok,1\nbad "quote" here,0\n');
    expect((await errorOf(readAll(q, { textColumn: 'text' }))).message).toMatch(/^opening\.csv: line 3 cannot be read: invalid opening quote/);
  });

  it('rejects invalid UTF-8 naming the line', async () => {
    const bytes = Buffer.concat([Buffer.from('text,label\nfine,1\nalso fine,0\nbad '), Buffer.from([0xff, 0xfe]), Buffer.from(' byte,1\n')]);
    const e = await errorOf(readAll(file('latin.csv', bytes), { textColumn: 'text' }));
    expect(e.message).toBe('latin.csv: line 4 is not valid UTF-8 (save the file as UTF-8)');
    expect(e.code).toBe('dataset_encoding');
  });

  it('accepts multi-byte characters split across read chunks', async () => {
    // 256 KiB chunks: put a 4-byte emoji across the boundary.
    const head = 'text\n' + 'a'.repeat(256 * 1024 - 5 - 2) + '\n';
    const p = file('emoji.csv', head + '😀 smile\n');
    const { rows } = await readAll(p, { textColumn: 'text' });
    expect(rows[1]!.input).toBe('😀 smile');
    expect(rows[1]!.line).toBe(3);
  });

  it('keeps CRLF whole when a read chunk ends between CR and LF', async () => {
    // The file is read in 256 KiB chunks: put the first row's CR as the chunk's last byte.
    const header = 'text,label\r\n';
    const first = 'x'.repeat(256 * 1024 - header.length - 3) + ',1\r\n';
    const p = file('crlf-split.csv', header + first + 'second,0\r\n');
    const { rows } = await readAll(p, { textColumn: 'text', labelColumn: 'label' });
    expect(rows.map((r) => [r.goldRaw, r.line])).toEqual([
      ['1', 2],
      ['0', 3],
    ]);
  });

  it('gives a clear error for an empty file, a header-only file, a missing file and a missing column', async () => {
    expect((await errorOf(previewDataset(file('empty.csv', '')))).message).toBe('empty.csv is empty');
    expect((await errorOf(previewDataset(file('blank.csv', '\n\n  \n')))).message).toBe('blank.csv is empty');
    expect((await errorOf(previewDataset(join(dir, 'nope.csv')))).message).toMatch(/data file not found/);
    const headerOnly = await readAll(file('header.csv', 'text,label\n'), { textColumn: 'text' });
    expect(headerOnly.rows).toEqual([]);
    const e = await errorOf(readAll(file('cols.csv', 'a,b\n1,2\n'), { textColumn: 'text' }));
    expect(e.message).toBe('cols.csv: no column "text" (columns: a, b)');
  });

  it('skips and counts empty inputs and reports unmapped gold values', async () => {
    const p = file('gold.csv', 'text,label\none,pos\n  ,pos\ntwo,neg\nthree,meh\nfour,meh\n');
    const { rows, reader } = await readAll(p, { textColumn: 'text', labelColumn: 'label', labelMap: { pos: 'positive', neg: 'negative' } });
    expect(rows.map((r) => [r.index, r.input, r.gold, r.goldRaw])).toEqual([
      [0, 'one', 'positive', 'pos'],
      [1, 'two', 'negative', 'neg'],
      [2, 'three', null, 'meh'],
      [3, 'four', null, 'meh'],
    ]);
    expect(reader.stats).toMatchObject({ rows: 4, skippedEmpty: 1, unmappedGold: { meh: 2 } });
  });
});

describe('JSONL import', () => {
  it("reads the paper's messages/solution format (input = the user message)", async () => {
    const line = (u: string, s: string) => JSON.stringify({ messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: u }, { role: 'assistant', content: '0' }], solution: s });
    const p = file('paper.jsonl', `${line('bad film', 'negative')}\r\n\n${line('good "film"', 'positive')}\n`);
    const prev = await previewDataset(p);
    expect(prev.format).toBe('jsonl');
    expect(prev.columns).toEqual(['input', 'solution']);
    expect(prev.suggestedTextColumn).toBe('input');
    expect(prev.suggestedLabelColumn).toBe('solution');
    const { rows } = await readAll(p, { textColumn: 'input', labelColumn: 'solution' });
    expect(rows).toEqual([
      // Every column kept with the row, the input's in its place (the final export gives them back).
      { index: 0, line: 1, input: 'bad film', gold: 'negative', goldRaw: 'negative', record: '{"input":null,"solution":"negative"}' },
      { index: 1, line: 3, input: 'good "film"', gold: 'positive', goldRaw: 'positive', record: '{"input":null,"solution":"positive"}' },
    ]);
  });

  it('reads flat objects (columns = keys, non-strings stringified)', async () => {
    const p = file('flat.jsonl', '{"text":"a","label":1}\n{"text":"b","label":0,"extra":true}\n');
    const prev = await previewDataset(p);
    expect(prev.columns).toEqual(['text', 'label', 'extra']);
    expect(prev.rows[1]).toEqual({ text: 'b', label: '0', extra: 'true' });
  });

  it('names the line of invalid JSON and of a non-object', async () => {
    const p = file('broken.jsonl', '{"text":"a"}\n{"text":"b"\n');
    expect((await errorOf(readAll(p, { textColumn: 'text' }))).message).toMatch(/^broken\.jsonl: line 2 is not valid JSON/);
    const q = file('array.jsonl', '{"text":"a"}\n\n[1,2]\n');
    expect((await errorOf(readAll(q, { textColumn: 'text' }))).message).toBe('array.jsonl: line 3 is not a JSON object');
  });

  it('scans gold value counts and fingerprints the file', async () => {
    const p = file('scan.jsonl', '{"t":"a","g":"Pos"}\n{"t":"b","g":"Pos"}\n{"t":"","g":"neg"}\n{"t":"c","g":"NEG"}\n');
    const scan = await scanDataset(p, { textColumn: 't', labelColumn: 'g' });
    expect(scan).toMatchObject({ format: 'jsonl', rows: 3, skippedEmpty: 1, goldValueCounts: { Pos: 2, NEG: 1 } });
    expect(scan.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('suggestLabelMapping', () => {
  it('maps case-insensitively and reports unmapped values with counts, most frequent first', () => {
    const s = suggestLabelMapping({ Positive: 5, NEGATIVE: 3, neutral: 2, meh: 4 }, sst2);
    expect(s.map).toEqual({ Positive: 'positive', NEGATIVE: 'negative' });
    expect(s.how).toEqual({ Positive: 'case-insensitive', NEGATIVE: 'case-insensitive' });
    expect(s.unmapped).toEqual([
      { value: 'meh', count: 4 },
      { value: 'neutral', count: 2 },
    ]);
  });

  it('maps numeric indexes to labels in task order', () => {
    const s = suggestLabelMapping({ '0': 10, '1': 7 }, sst2);
    expect(s.map).toEqual({ '0': 'negative', '1': 'positive' });
    expect(s.how['1']).toBe('index');
    // An index beyond the labels means the numbers are not indexes: nothing numeric is mapped.
    expect(suggestLabelMapping({ '0': 1, '1': 1, '2': 1 }, sst2).unmapped.map((u) => u.value)).toEqual(['0', '1', '2']);
  });

  it('maps an unambiguous abbreviation of one label (pos/neg), never an ambiguous or one-letter one', () => {
    const s = suggestLabelMapping({ pos: 6, NEG: 4, p: 1 }, sst2);
    expect(s.map).toEqual({ pos: 'positive', NEG: 'negative' });
    expect(s.how).toEqual({ pos: 'prefix', NEG: 'prefix' });
    expect(s.unmapped.map((u) => u.value)).toEqual(['p']);
    const five = TaskDefinition.parse({ ...sst2, id: 's5', labels: ['very negative', 'negative', 'neutral', 'positive', 'very positive'].map((name) => ({ name, description: name })) });
    expect(suggestLabelMapping({ neg: 1, ne: 1, very: 1 }, five).map).toEqual({ neg: 'negative' });
  });

  it('maps nothing for math tasks (gold is the answer)', () => {
    const math = TaskDefinition.parse({ id: 'm', name: 'M', kind: 'math', instruction: 'Solve.', inputName: 'Problem', topics: ['algebra'], preserve: 'numbers', evaluatorMaxTokens: 64 });
    expect(suggestLabelMapping({ '12': 1 }, math)).toEqual({ map: {}, how: {}, unmapped: [] });
  });
});
