// Calibration and selective prediction against values computed by hand (the comments show the
// arithmetic), then the same figures through computeMetrics, the exports and the CLI's report.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  JobManager,
  answeredMetrics,
  binOf,
  calibration,
  computeMetrics,
  openJobStore,
  readCsvExport,
  readJsonExport,
  reliabilityBins,
  selectiveCurve,
  type JobRow,
  type Scored,
} from '../../../electron/jobs';
import { JobMetrics as ApiJobMetrics } from '../../../electron/common/contract/jobs';
import { metricsPayload } from '../../../electron/api/handlers/jobs';
import { binaryTask as binary } from '../../helpers/tasks';

// Ten rows: vote share and whether the label was right.
const ROWS: Scored[] = [
  { confidence: 1, correct: true },
  { confidence: 1, correct: true },
  { confidence: 1, correct: false },
  { confidence: 0.95, correct: true },
  { confidence: 0.8, correct: true },
  { confidence: 0.8, correct: false },
  { confidence: 0.6, correct: true },
  { confidence: 0.5, correct: false },
  { confidence: 0.5, correct: false },
  // A row with no valid vote: confidence 0, wrong.
  { confidence: 0, correct: false },
];

describe('reliability bins, ECE and Brier', () => {
  it('bins by tenths, the last closed at 1, with counts, mean confidence and accuracy', () => {
    expect([0, 0.05, 0.1, 0.3, 0.7, 0.7000000001, 0.9, 0.95, 1].map((c) => binOf(c))).toEqual([0, 0, 1, 3, 7, 7, 9, 9, 9]);
    const bins = reliabilityBins(ROWS);
    expect(bins).toHaveLength(10);
    expect(bins[0]).toEqual({ from: 0, to: 0.1, count: 1, confidence: 0, accuracy: 0 });
    expect(bins[1]).toEqual({ from: 0.1, to: 0.2, count: 0, confidence: null, accuracy: null });
    expect(bins[5]).toEqual({ from: 0.5, to: 0.6, count: 2, confidence: 0.5, accuracy: 0 });
    expect(bins[6]).toMatchObject({ count: 1, confidence: 0.6, accuracy: 1 });
    expect(bins[8]).toMatchObject({ count: 2, confidence: 0.8, accuracy: 0.5 });
    // 1, 1, 1, 0.95: mean 0.9875, three of four right.
    expect(bins[9]!.count).toBe(4);
    expect(bins[9]!.confidence).toBeCloseTo(0.9875, 12);
    expect(bins[9]!.accuracy).toBe(0.75);
    expect(bins.reduce((s, b) => s + b.count, 0)).toBe(10);
  });

  it('ECE weights each bin by its rows; Brier is the mean squared gap to correctness', () => {
    const c = calibration(ROWS);
    // 0.4·|0.75−0.9875| + 0.2·|0.5−0.8| + 0.1·|1−0.6| + 0.2·|0−0.5| + 0.1·|0−0| = 0.095 + 0.06 + 0.04 + 0.1 + 0
    expect(c.ece).toBeCloseTo(0.295, 12);
    // (0+0+1+0.0025+0.04+0.64+0.16+0.25+0.25+0) / 10
    expect(c.brier).toBeCloseTo(0.23425, 12);
    // Perfectly calibrated: every bin's accuracy equals its confidence.
    const perfect = calibration([
      { confidence: 1, correct: true },
      { confidence: 0.5, correct: true },
      { confidence: 0.5, correct: false },
    ]);
    expect(perfect.ece).toBe(0);
    expect(perfect.brier).toBeCloseTo((0 + 0.25 + 0.25) / 3, 12);
    expect(calibration([])).toMatchObject({ ece: null, brier: null });
  });
});

describe('selective prediction', () => {
  it('the accuracy–coverage curve: one point per distinct confidence, answering rows at or above it', () => {
    const curve = selectiveCurve(ROWS);
    expect(curve.map((p) => p.threshold)).toEqual([0, 0.5, 0.6, 0.8, 0.95, 1]);
    expect(curve.map((p) => p.coverage)).toEqual([1, 0.9, 0.7, 0.6, 0.4, 0.3]);
    // Right: 5 of 10, 5 of 9, 5 of 7, 4 of 6, 3 of 4, 2 of 3.
    expect(curve.map((p) => p.accuracy)).toEqual([0.5, 5 / 9, 5 / 7, 4 / 6, 0.75, 2 / 3]);
    expect(selectiveCurve([])).toEqual([]);
  });

  it('at one minimum confidence: answered, correct, abstained, coverage and accuracy on the answered rows', () => {
    expect(answeredMetrics(ROWS, 0.8)).toEqual({ minConfidence: 0.8, answered: 6, correct: 4, abstained: 4, coverage: 0.6, accuracy: 4 / 6 });
    expect(answeredMetrics(ROWS, 0)).toMatchObject({ answered: 10, abstained: 0, coverage: 1, accuracy: 0.5 });
    // Between two shares: the same rows as at the next one up.
    expect(answeredMetrics(ROWS, 0.7)).toMatchObject({ answered: 6, accuracy: 4 / 6 });
    expect(answeredMetrics(ROWS.slice(7), 0.9)).toMatchObject({ answered: 0, abstained: 3, coverage: 0, accuracy: null });
  });
});


/** A done row with gold 'positive', predicted right or wrong at a given vote share. */
function jobRow(index: number, scored: Scored | null): JobRow {
  const prediction = scored === null ? 'positive' : scored.correct ? 'positive' : 'negative';
  return {
    index,
    line: index + 2,
    input: `input ${index}`,
    gold: scored === null ? null : 'positive',
    goldRaw: scored === null ? null : 'positive',
    status: 'done',
    prediction: scored?.confidence === 0 ? null : prediction,
    correct: scored === null ? null : scored.correct,
    lenientCorrect: null,
    confidence: scored?.confidence ?? 0.9,
    votes: {},
    tieBreak: 'none',
    runs: [],
    baseline: null,
    stages: null,
    ms: 1,
    error: null,
  };
}

describe('in the job metrics, the API and the exports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tatra-calibration-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('computeMetrics scores rows with gold only, and reports coverage at the minimum confidence asked for', () => {
    // Row 10 has no gold: counted in rowsDone, not in calibration.
    const rows = [...ROWS.map((s, i) => jobRow(i, s)), jobRow(10, null), { ...jobRow(11, ROWS[0]!), status: 'pending' as const }];
    const m = computeMetrics({ task: binary, r: 1, rowsTotal: 12, rows });
    expect(m.evaluated).toBe(10);
    expect(m.calibration.ece).toBeCloseTo(0.295, 12);
    expect(m.calibration.brier).toBeCloseTo(0.23425, 12);
    expect(m.selective).toEqual(selectiveCurve(ROWS));
    expect(m.answered).toBeNull();
    const at = computeMetrics({ task: binary, r: 1, rowsTotal: 12, rows, minConfidence: 0.8 });
    expect(at.answered).toEqual(answeredMetrics(ROWS, 0.8));
    expect(at.accuracy).toBe(0.5);
    // The contract's schema takes the payload as is.
    expect(() => ApiJobMetrics.parse(metricsPayload('job', at))).not.toThrow();
  });

  it('exports mark the done rows below the minimum confidence abstained, and only when one is given', async () => {
    const store = openJobStore(dir);
    try {
      const manager = new JobManager({ store, backends: { acquire: () => Promise.reject(new Error('no models here')) } });
      const id = store.createJob({
        name: 'calibration',
        task: binary,
        settings: { n: 0, k: 0, r: 1, seed: 1, scope: 'run' },
        generator: { path: 'g', sizeBytes: 0, headerHash: '' },
        evaluator: { path: 'e', sizeBytes: 0, headerHash: '' },
        dataset: { path: 'd.csv', fingerprint: '', format: 'csv', mapping: { textColumn: 'text', labelColumn: 'label' }, stats: { rows: 3, skippedEmpty: 0, unmappedGold: {}, missingGold: 0, ragged: 0 } },
        limit: null,
        baseline: false,
        concurrency: 1,
      });
      store.insertRows(id, [0, 1, 2].map((index) => ({ index, line: index + 2, input: `input ${index}`, gold: 'positive', goldRaw: 'positive' })));
      store.markImported(id);
      const save = (index: number, confidence: number, prediction: string) =>
        store.saveRowResult(id, index, { prediction, correct: prediction === 'positive', lenientCorrect: null, confidence, votes: {}, tieBreak: 'none', runs: [], baseline: null, stages: { examples: { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 }, paraphrases: { calls: 0, promptTokens: 0, completionTokens: 0, ms: 0 }, evaluation: { calls: 1, promptTokens: 1, completionTokens: 1, ms: 1 } }, ms: 1 });
      save(0, 1, 'positive');
      save(1, 0.6, 'negative');
      // Row 2 stays pending: neither answered nor abstained.
      const csv = join(dir, 'at.csv');
      await manager.export(id, 'csv', csv, undefined, { minConfidence: 0.75 });
      expect((await readCsvExport(csv)).map((r) => r.abstained)).toEqual([false, true, null]);
      const json = join(dir, 'at.json');
      await manager.export(id, 'json', json, undefined, { minConfidence: 0.75 });
      const exported = await readJsonExport(json);
      expect(exported.rows.map((r) => r.abstained)).toEqual([false, true, undefined]);
      expect(exported.metrics.answered).toMatchObject({ minConfidence: 0.75, answered: 1, correct: 1, abstained: 1, coverage: 0.5, accuracy: 1 });
      const plain = join(dir, 'plain.csv');
      await manager.export(id, 'csv', plain);
      expect((await readCsvExport(plain))[0]).not.toHaveProperty('abstained');
    } finally {
      store.close();
    }
  });
});
