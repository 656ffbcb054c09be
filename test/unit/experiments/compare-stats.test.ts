// A comparison's pairs with their uncertainty (docs/method.md §16): each accuracy's Wilson interval,
// each pair against the best on the rows both scored, and the set tied for best after Holm, worked
// from outcomes chosen by hand; the CLI's table and the CSV export say the same.
import { describe, expect, it } from 'vitest';
import { pairsCsv, pendingPair } from '../../../electron/experiments';
import { pairsVersusBest } from '../../../electron/experiments/compare-stats';
import { formatComparison } from '../../../electron/cli/commands/compare';
import type { ComparisonResult, ComparisonPair } from '../../../electron/common/contract/comparisons';
import { holm, signTestExact, tangoInterval, wilson } from '../../../electron/common/stats';

/** `right` of `rows` right, the right ones first. */
const outcomes = (right: number, rows = 200): boolean[] => Array.from({ length: rows }, (_, i) => i < right);

function pair(generator: string, evaluator: string, jobId: string, right: number, rows = 200): ComparisonPair {
  return { ...pendingPair({ generator, evaluator }), jobId, status: 'done', rowsDone: rows, rowsTotal: rows, accuracy: right / rows };
}

// On 200 rows, each right on a prefix: A 170, B 166 (4 rows fewer: not told apart), C 140, D 120.
const rights: Record<string, number> = { a: 170, b: 166, c: 140, d: 120 };
const pairs = [pair('/g1', '/e1', 'a', 170), pair('/g1', '/e2', 'b', 166), pair('/g2', '/e1', 'c', 140), pair('/g2', '/e2', 'd', 120)];
const scored = pairsVersusBest('cmp', pairs, (id) => outcomes(rights[id]!));

describe('a comparison against its best pair', () => {
  it('gives each accuracy its Wilson interval and the best its name', () => {
    expect(scored.map((p) => p.accuracyInterval)).toEqual([wilson(170, 200), wilson(166, 200), wilson(140, 200), wilson(120, 200)]);
    expect(scored.map((p) => p.best)).toEqual([true, false, false, false]);
    expect(scored[0]!.versusBest).toBeNull();
  });

  it('compares each with the best on the rows both scored: Tango and exact McNemar, Holm over the three', () => {
    // Prefixes: B is right on a subset of A's rows, so only-B is 0 and only-A is 170 − right.
    const only = [4, 30, 50];
    scored.slice(1).forEach((p, i) => {
      expect(p.versusBest).toMatchObject({ rows: 200, firstBetter: 0, secondBetter: only[i], pValue: signTestExact(0, only[i]!) });
      expect(p.versusBest!.difference).toEqual(tangoInterval({ both: 170 - only[i]!, onlyFirst: 0, onlySecond: only[i]!, neither: 30 }));
    });
    const adjusted = holm(only.map((b) => signTestExact(0, b)));
    expect(scored.slice(1).map((p) => p.adjustedP)).toEqual(adjusted);
    // 4 discordant rows all one way: p = 2/16 = 0.125, the largest of the three, so Holm keeps it
    // (×1): tied; 30 and 50 such rows: far apart. (Tango's interval just excludes 0 here: the exact
    // test, the more conservative, decides, docs/method.md §16.)
    expect(adjusted[0]).toBeCloseTo(0.125, 12);
    expect(scored.map((p) => p.tiedForBest)).toEqual([true, true, false, false]);
  });

  it('ties nothing but the best where pairs share no scored row with it, and leaves unscored pairs alone', () => {
    const alone = pairsVersusBest('cmp', [pair('/g', '/e1', 'x', 150, 100), pair('/g', '/e2', 'y', 1, 100), { ...pendingPair({ generator: '/g', evaluator: '/e3' }) }], (id) =>
      id === 'x' ? outcomes(90, 100).map((v, i) => (i < 50 ? v : null)) : outcomes(60, 100).map((v, i) => (i < 50 ? null : v)),
    );
    expect(alone.map((p) => [p.best, p.tiedForBest, p.versusBest])).toEqual([
      [true, true, null],
      [false, false, null],
      [false, false, null],
    ]);
    expect(alone[2]!.accuracyInterval).toBeNull();
  });

  it('is said in the CLI table, its matrix and the CSV export', () => {
    // What the table reads of a result; the rest of its head is the experiment's.
    const result = {
      id: 'cmp', status: 'done', error: null, warnings: [],
      spec: { taskId: 'sst2', dataPath: '/d.csv', generators: ['/g1', '/g2'], evaluators: ['/e1', '/e2'], settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' } },
      pairs: scored,
    } as unknown as ComparisonResult;
    const text = formatComparison(result);
    expect(text).toContain('tied for best (*): g1 → e1, g1 → e2');
    expect(text).toMatch(/\* g1 +e2 +83\.0 +\[77\.2, 87\.6\] +-2\.0 \[-5\.0, -0\.1\] on 200 rows, Holm p = 0\.13 /);
    expect(text).toMatch(/\* g1 +e1 +85\.0 +\[79\.4, 89\.3\] +best /);
    expect(text).toMatch(/g1 +85\.0\* +83\.0\*\n +g2 +70\.0 +60\.0/);
    const csv = pairsCsv(scored).split('\r\n');
    expect(csv[0]).toBe('generator,evaluator,status,rowsDone,rowsTotal,accuracy,macroF1,elapsedMs,tokens,error,accuracyLow,accuracyHigh,macroF1Low,macroF1High,best,versusBest,versusBestLow,versusBestHigh,rowsBothScored,pValue,adjustedP,tiedForBest');
    expect(csv[1]).toMatch(/,true,,,,,,,true$/);
    expect(csv[2]).toMatch(new RegExp(`,false,-0\\.02,[-0-9.]+,[-0-9.]+,200,0\\.125,${String(scored[1]!.adjustedP).replace('.', '\\.')},true$`));
    expect(csv[4]).toMatch(/,false$/);
  });
});
