// Gold labels from hostile files, through every path a gold value takes (import, the suggested map,
// an explicit map from the CLI or the API contract, the stored job, metrics, CSV and JSON
// exports): the one rule (an explicit map's entry, else the label named in any case, else
// unmapped), a map that maps nothing refused, and JavaScript property names (`constructor`,
// `toString`, `__proto__`, …) as gold values, label-map keys and column names treated as the
// strings they are. Real JobManager, real SQLite, real engine, scripted backend.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { JobStartInput } from '../../../electron/common/contract/jobs';
import type { TatraSettings } from '../../../electron/common/tatra';
import { parseLabelMap } from '../../../electron/cli/options';
import { JobManager, openJobStore, plainModelRef, readCsvExport, readJsonExport, type BackendProvider, type JobStore } from '../../../electron/jobs';
import { previewDataset, readDataset } from '../../../electron/jobs/dataset';
import { goldLabelResolver } from '../../../electron/jobs/gold-labels';
import { ScriptedBackend, politeScript } from '../../helpers/scripted-backend';
import { failure } from '../../helpers/failure';

const dir = mkdtempSync(join(tmpdir(), 'tatra-gold-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const stores: JobStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});
let n = 0;

/** Names every JavaScript object answers from its prototype, or that replace it. */
const PROPERTY_NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__', 'toLocaleString', 'prototype', 'length'];

function manager() {
  const store = openJobStore(join(dir, `d${n++}`));
  stores.push(store);
  const backend = new ScriptedBackend(politeScript({ answer: (c) => (/good|great|fine/.test(c) ? 'positive' : 'negative') }), { id: 'scripted', contextSize: 8192 });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  return new JobManager({ store, backends: provider, inspectModel: plainModelRef });
}

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const settings: TatraSettings = { n: 1, k: 2, r: 1, seed: 3, scope: 'run' };
const spec = (path: string, mapping: Record<string, unknown>) => ({ task: 'sst2', settings, generatorPath: 'g.gguf', evaluatorPath: 'e.gguf', dataset: { path, mapping: mapping as never }, concurrency: 2 });

describe('the one gold rule: the map first, then the label named in any case', () => {
  it('values the map does not list match label names case-insensitively (the issue: pos + negative with --label-map pos=positive scores 4 of 4)', async () => {
    const data = file('pos-negative.csv', 'text,label\na good film,pos\na dull film,negative\nfine work,POSITIVE\nawful,Negative\n');
    const m = manager();
    const job = await m.create(spec(data, { textColumn: 'text', labelColumn: 'label', labelMap: parseLabelMap('pos=positive') }));
    expect(job.rowsTotal).toBe(4);
    expect(job.dataset.stats.unmappedGold).toEqual({});
    await m.start(job.id);
    const done = await m.wait(job.id);
    expect(m.metrics(done.id).evaluated).toBe(4);
  });

  it('resolver variants: exact map, case, whitespace-trimmed values, abstain, unknown', () => {
    const labels = ['negative', 'positive', 'unsure'];
    const of = goldLabelResolver(parseLabelMap('pos=positive,0=negative,Constructor=positive'), labels);
    const cases: Array<[string, string | null]> = [
      ['pos', 'positive'],
      ['0', 'negative'],
      ['Constructor', 'positive'],
      ['POSITIVE', 'positive'],
      ['Negative', 'negative'],
      ['UNSURE', 'unsure'],
      ['pos ', null], // values arrive trimmed; an untrimmed key is not a map entry
      ['neg', null],
      ['1', null],
    ];
    for (const v of PROPERTY_NAMES) cases.push([v, null]);
    for (const [v, want] of cases) expect(of(v), v).toBe(want);
    // Without labels (math tasks) and without a map, a value is its own gold.
    expect(goldLabelResolver(undefined, undefined)('42')).toBe('42');
    expect(goldLabelResolver(undefined, undefined)('constructor')).toBe('constructor');
  });
});

describe('a label map that maps none of the file\'s values is refused', () => {
  it.each([
    ['a map of other values', 'yes=positive,no=negative'],
    ['a map of property names only', 'constructor=positive,__proto__=negative'],
    ['a map with a typo', 'Positiv=positive'],
  ])('%s: one line, and no job is left', async (_name, map) => {
    const data = file(`unmapped-${n}.csv`, 'text,label\na good film,thumbs up\na dull film,thumbs down\n');
    const m = manager();
    const e = await failure(m.create(spec(data, { textColumn: 'text', labelColumn: 'label', labelMap: parseLabelMap(map) })));
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).code).toBe('label_unmapped');
    expect(e.message).toMatch(/^no value of the gold column "label" maps to a label of task sst2 \(values thumbs (down|up), thumbs (down|up); labels negative, positive\): fix the label map/);
    expect(m.list()).toEqual([]);
  });

  it.each([
    ['__proto__=positive', '__proto__'],
    ['constructor=negative,yes=positive', 'constructor, yes'],
  ])('a map whose entries are none of the values is refused even when every value names a label (%s on positive/negative)', async (map, entries) => {
    const data = file(`labels-${n}.csv`, 'text,label\na good film,positive\na dull film,negative\n');
    const m = manager();
    const e = await failure(m.create(spec(data, { textColumn: 'text', labelColumn: 'label', labelMap: parseLabelMap(map) })));
    expect(e).toBeInstanceOf(UserError);
    expect((e as UserError).code).toBe('label_unmapped');
    expect(e.message).toBe(
      `the label map maps none of the values of the gold column "label" (map entries ${entries}; values positive, negative): fix the label map (--label-map value=label,…), leave it out to use the suggested one, or run without gold labels (--no-label)`,
    );
    expect(m.list()).toEqual([]);
    // Nothing was polluted on the way: plain objects still have their own prototype.
    expect(({} as Record<string, unknown>)['positive']).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it('a map that maps some values runs, and counts the rest as unmapped', async () => {
    const data = file('some.csv', 'text,label\na good film,yes\na dull film,meh\n');
    const m = manager();
    const job = await m.create(spec(data, { textColumn: 'text', labelColumn: 'label', labelMap: parseLabelMap('yes=positive') }));
    expect(job.dataset.stats.unmappedGold).toEqual({ meh: 1 });
  });
});

describe('JavaScript property names are strings like any other', () => {
  const rows = PROPERTY_NAMES.map((v, i) => `${i % 2 ? 'a dull film' : 'a good film'} ${i},${v}`).join('\n');

  it.each(PROPERTY_NAMES)('gold value "%s" without a map: unmapped and counted, never a crash or a stored function', async (v) => {
    const data = file(`prop-${n}.csv`, `text,label\na good film,positive\nanother,${v}\n`);
    const m = manager();
    const job = await m.create(spec(data, { textColumn: 'text', labelColumn: 'label' }));
    expect(Object.keys(job.dataset.stats.unmappedGold)).toEqual([v]);
    expect(job.dataset.stats.unmappedGold[v]).toBe(1);
    await m.start(job.id);
    expect((await m.wait(job.id)).status).toBe('done');
  });

  it('every property name mapped explicitly (CLI parser and API contract alike): all rows scored, exports carry them', async () => {
    const data = file('props.csv', `text,label\n${rows}\n`);
    const cliMap = parseLabelMap(PROPERTY_NAMES.map((v, i) => `${v}=${i % 2 ? 'negative' : 'positive'}`).join(','));
    expect(Object.keys(cliMap)).toEqual(PROPERTY_NAMES);
    // The page's map comes through the contract (JSON): every key survives, `__proto__` included.
    const wire = JSON.parse(JSON.stringify({ taskId: 'sst2', dataPath: data, inputColumn: 'text', goldColumn: 'label', labelMap: cliMap, generator: 'g', evaluator: 'e', settings })) as unknown;
    const apiMap = JobStartInput.parse(wire).labelMap;
    expect(Object.keys(apiMap)).toEqual(PROPERTY_NAMES);
    for (const map of [cliMap, apiMap]) {
      const m = manager();
      const job = await m.create(spec(data, { textColumn: 'text', labelColumn: 'label', labelMap: map }));
      expect(job.rowsTotal).toBe(PROPERTY_NAMES.length);
      expect(job.dataset.stats.unmappedGold).toEqual({});
      expect(Object.keys(m.get(job.id).dataset.mapping.labelMap ?? {})).toEqual(PROPERTY_NAMES);
      await m.start(job.id);
      await m.wait(job.id);
      expect(m.metrics(job.id).evaluated).toBe(PROPERTY_NAMES.length);
      const csvOut = join(dir, `props-${n}.csv`);
      const jsonOut = join(dir, `props-${n}.json`);
      await m.export(job.id, 'csv', csvOut);
      await m.export(job.id, 'json', jsonOut);
      const exported = await readCsvExport(csvOut);
      expect(exported.map((r) => r.goldRaw)).toEqual(PROPERTY_NAMES);
      expect((await readJsonExport(jsonOut)).rows.map((r) => r.gold)).toEqual(PROPERTY_NAMES.map((_, i) => (i % 2 ? 'negative' : 'positive')));
    }
  });

  it('the suggested map (no --label-map) over property-name values with some real labels', async () => {
    const data = file('suggest.csv', `text,label\na good film,Positive\na dull film,neg\n${rows}\n`);
    const m = manager();
    const job = await m.create(spec(data, { textColumn: 'text', labelColumn: 'label' }));
    expect(job.dataset.mapping.labelMap).toEqual({ Positive: 'positive', neg: 'negative' });
    expect(Object.keys(job.dataset.stats.unmappedGold).sort()).toEqual([...PROPERTY_NAMES].sort());
  });

  it('column names that are property names, in CSV and JSONL: previewed, read and imported', async () => {
    for (const col of ['__proto__', 'constructor', 'toString']) {
      const csvPath = file(`col-${n}.csv`, `${col},label\na good film,positive\n`);
      const jsonl = file(`col-${n}.jsonl`, `${JSON.stringify({ [col]: 'a good film', label: 'positive' }).replace('"' + col + '"', JSON.stringify(col))}\n`);
      for (const p of [csvPath, jsonl]) {
        const preview = await previewDataset(p);
        expect(preview.columns, p).toContain(col);
        expect(preview.rows[0]![col], p).toBe('a good film');
        const rowsRead = [];
        for await (const r of readDataset(p, { textColumn: col, labelColumn: 'label' }, { labels: ['negative', 'positive'] })) rowsRead.push(r);
        expect(rowsRead.map((r) => [r.input, r.gold]), p).toEqual([['a good film', 'positive']]);
      }
    }
  });
});

describe('errors naming file content stay one short line', () => {
  it('a 100 KB column name, a 100 KB gold value and 5,000 columns', async () => {
    const huge = 'c'.repeat(100_000);
    const wide = Array.from({ length: 5000 }, (_, i) => `col${i}`);
    const cases = [
      file('huge-col.csv', `text,${huge}\na good film,positive\n`),
      file('wide.csv', `${wide.join(',')}\n${wide.map(() => 'x').join(',')}\n`),
    ];
    for (const data of cases) {
      const m = manager();
      // A missing column named by a 100 KB name, listing the file's columns (one of them 100 KB, or 5,000 of them).
      const e = await failure(m.create(spec(data, { textColumn: 'text', labelColumn: `${huge}-missing` })));
      expect(e).toBeInstanceOf(UserError);
      expect(e.message.length, e.message.slice(0, 200)).toBeLessThan(1000);
      expect(e.message).not.toContain('\n');
    }
    const gold = file('huge-gold.csv', `text,label\na good film,${'g'.repeat(100_000)}\n`);
    const e = await failure(manager().create(spec(gold, { textColumn: 'text', labelColumn: 'label' })));
    expect(e.message.length).toBeLessThan(1000);
  });
});
