// The statistics of docs/method.md §16 against values computed by hand, published, or by
// enumeration on small tables; the bootstrap's reproducibility; the racing rule's promise.
import { describe, expect, it } from 'vitest';
import {
  compareTable,
  comparePaired,
  confusionF1,
  detectableDifference,
  f1Intervals,
  holm,
  tangoInterval,
  replayRace,
  rowsNeeded,
  seededRng,
  signTestExact,
  tiedForBest,
  wilson,
} from '../../../electron/common/stats';
import { labelScores } from '../../../electron/jobs/metrics';

describe('Wilson score interval', () => {
  it('matches published values', () => {
    // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3.
    const cases: Array<[number, number, number, number]> = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ];
    for (const [x, n, low, high] of cases) {
      const i = wilson(x, n)!;
      expect(i.low).toBeCloseTo(low, 4);
      expect(i.high).toBeCloseTo(high, 4);
      expect(i).toMatchObject({ estimate: x / n, method: 'wilson', level: 0.95 });
    }
  });

  it('is worked by hand at 8 of 10', () => {
    // z = 1.959964; z²/n = 0.384146; centre (0.8 + 0.192073)/1.384146; half-width 1.416011·√(0.016 + 0.009604).
    const i = wilson(8, 10)!;
    expect(i.low).toBeCloseTo(0.490162, 5);
    expect(i.high).toBeCloseTo(0.943318, 5);
  });

  it('touches 0 and 1 exactly at the ends, and has none without rows', () => {
    expect(wilson(0, 10)).toMatchObject({ low: 0 });
    expect(wilson(10, 10)).toMatchObject({ high: 1 });
    expect(wilson(0, 0)).toBeNull();
  });
});

/** Two-sided exact binomial p-value by enumeration: every outcome at most as likely as the one observed. */
function enumeratedSignTest(x: number, y: number): number {
  const m = x + y;
  const choose = (n: number, k: number) => {
    let c = 1;
    for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
    return c;
  };
  const probability = (k: number) => choose(m, k) / 2 ** m;
  const observed = probability(x);
  let p = 0;
  for (let k = 0; k <= m; k++) if (probability(k) <= observed * (1 + 1e-12)) p += probability(k);
  return Math.min(1, p);
}

describe('exact McNemar test', () => {
  it('equals the enumeration on every small table', () => {
    for (let x = 0; x <= 12; x++) for (let y = 0; y <= 12; y++) expect(signTestExact(x, y)).toBeCloseTo(enumeratedSignTest(x, y), 12);
  });

  it('is worked by hand at 1 against 6', () => {
    // P(X ≤ 1) for X ~ Bin(7, ½) = (1 + 7)/128; doubled.
    expect(signTestExact(1, 6)).toBeCloseTo(16 / 128, 14);
    expect(signTestExact(0, 0)).toBe(1);
  });

  it('stays accurate far in the tail', () => {
    // 2·P(X ≤ 0) for X ~ Bin(60, ½) = 2^-59.
    expect(signTestExact(0, 60) / 2 ** -59).toBeCloseTo(1, 9);
  });

  it('reads the discordant cells of a table', () => {
    const c = compareTable({ both: 50, onlyFirst: 12, onlySecond: 4, neither: 34 })!;
    expect(c).toMatchObject({ rows: 100, firstBetter: 12, secondBetter: 4, test: 'mcnemar-exact' });
    expect(c.pValue).toBeCloseTo(enumeratedSignTest(12, 4), 12);
    expect(c.difference.estimate).toBeCloseTo(0.08, 12);
  });
});

describe("Tango's paired score interval", () => {
  it('matches the published example', () => {
    // Fagerland, Lydersen & Laake (2014), the airway hyper-responsiveness data (1, 1, 7, 12): −0.5172 to −0.0260.
    const i = tangoInterval({ both: 1, onlyFirst: 1, onlySecond: 7, neither: 12 })!;
    expect(i.estimate).toBeCloseTo(-6 / 21, 12);
    expect(i.low).toBeCloseTo(-0.5172, 4);
    expect(i.high).toBeCloseTo(-0.026, 4);
    expect(i.method).toBe('tango');
  });

  it('keeps a width worked by hand when the two never disagree', () => {
    // b = c = 0: |Z(δ)| = √(nδ/(1 − δ)) ≤ z gives |δ| ≤ z²/(n + z²), 3.8415/43.8415 at n = 40.
    const i = tangoInterval({ both: 20, onlyFirst: 0, onlySecond: 0, neither: 20 })!;
    expect(i.high).toBeCloseTo(1.959964 ** 2 / (40 + 1.959964 ** 2), 5);
    expect(i.low).toBeCloseTo(-i.high, 10);
  });

  it('is symmetric when the two swap, stays within [-1, 1], and has none without rows', () => {
    const t = { both: 30, onlyFirst: 9, onlySecond: 3, neither: 8 };
    const i = tangoInterval(t)!;
    const swapped = tangoInterval({ ...t, onlyFirst: 3, onlySecond: 9 })!;
    expect(swapped.low).toBeCloseTo(-i.high, 10);
    expect(swapped.high).toBeCloseTo(-i.low, 10);
    expect(tangoInterval({ both: 0, onlyFirst: 10, onlySecond: 0, neither: 0 })!.high).toBe(1);
    expect(tangoInterval({ both: 0, onlyFirst: 0, onlySecond: 0, neither: 0 })).toBeNull();
  });
});

describe('Holm', () => {
  it('is worked by hand', () => {
    // Sorted 0.005, 0.01, 0.03, 0.04 → 4·0.005, 3·0.01, 2·0.03, max(1·0.04, 0.06).
    const adjusted = holm([0.01, 0.04, 0.03, 0.005]);
    [0.03, 0.06, 0.06, 0.02].forEach((v, i) => expect(adjusted[i]).toBeCloseTo(v, 12));
    expect(holm([0.6, 0.9])).toEqual([1, 1]);
  });
});

describe('tied for best', () => {
  const outcomes = (right: number, n: number, offset = 0) => Array.from({ length: n }, (_, i) => (i + offset) % n < right);

  it('names every pairing not told apart from the best, after Holm', () => {
    const n = 200;
    const result = tiedForBest(
      [
        { key: 'a', outcomes: [outcomes(170, n)], accuracy: 170 / n },
        { key: 'b', outcomes: [outcomes(166, n, 3)], accuracy: 166 / n },
        { key: 'c', outcomes: [outcomes(120, n)], accuracy: 120 / n },
      ],
      { seed: 1 },
    );
    expect(result.best).toBe('a');
    expect(result.versus.map((v) => [v.key, v.tied])).toEqual([['a', true], ['b', true], ['c', false]]);
    const c = result.versus[2]!;
    // c is right on a subset of a's rows: 50 rows only a, none only c; Holm doubles the smaller p.
    expect(c.comparison).toMatchObject({ rows: 200, firstBetter: 0, secondBetter: 50 });
    expect(c.adjustedP).toBeCloseTo(Math.min(1, 2 * signTestExact(0, 50)), 12);
  });

  it('compares only the rows both scored', () => {
    const first = [true, true, null, false, true];
    const second = [false, true, true, undefined, true];
    expect(comparePaired([first], [second], { seed: 1 })).toMatchObject({ rows: 3, firstBetter: 1, secondBetter: 0 });
  });
});

describe('binomial draws', () => {
  it('follow the exact distribution, by inversion and by rejection', () => {
    const rng = seededRng(9);
    // n·p below 10 (inversion), above it (BTRS), and p above ½ (drawn as n minus its mirror).
    for (const [n, p] of [[20, 0.2], [30, 0.4], [40, 0.7], [300, 0.1]] as const) {
      const draws = 200_000;
      const seen = new Float64Array(n + 1);
      for (let i = 0; i < draws; i++) seen[rng.binomial(n, p)]!++;
      let pmf = (1 - p) ** n;
      let distance = 0;
      for (let k = 0; k <= n; k++) {
        distance += Math.abs(seen[k]! / draws - pmf) / 2;
        pmf *= ((n - k) / (k + 1)) * (p / (1 - p));
      }
      // Total variation distance; sampling alone leaves about 0.005 at these sizes.
      expect(distance, `Bin(${n}, ${p})`).toBeLessThan(0.01);
    }
  });
});

describe('the percentile bootstrap', () => {
  const confusion = [
    [40, 6, 2, 1],
    [5, 30, 4, 0],
    [3, 3, 20, 2],
  ];

  it('computes F1 from the confusion matrix as the job metrics do from rows', () => {
    const labels = ['a', 'b', 'c'];
    const pairs = confusion.flatMap((row, g) => row.flatMap((count, p) => Array.from({ length: count }, () => ({ gold: labels[g]!, prediction: labels[p] ?? null }))));
    const fromRows = labelScores(labels, pairs);
    const out = new Float64Array(4);
    confusionF1(confusion.flat(), 3, 4, out);
    expect(out[0]).toBeCloseTo(fromRows.macroF1!, 12);
    fromRows.perLabel.forEach((m, i) => expect(out[i + 1]).toBeCloseTo(m.f1, 12));
  });

  it('gives the same interval for the same seed, and bounds within 0.1 point for another', () => {
    const a = f1Intervals(confusion, { seed: 42 });
    expect(f1Intervals(confusion, { seed: 42 })).toEqual(a);
    const b = f1Intervals(confusion, { seed: 43 });
    expect(a.macroF1!.low).toBeLessThan(a.macroF1!.estimate);
    expect(a.macroF1!.high).toBeGreaterThan(a.macroF1!.estimate);
    expect(Math.abs(a.macroF1!.low - b.macroF1!.low)).toBeLessThan(0.001);
    expect(Math.abs(a.macroF1!.high - b.macroF1!.high)).toBeLessThan(0.001);
    a.perLabel.forEach((i, l) => {
      expect(Math.abs(i!.low - b.perLabel[l]!.low)).toBeLessThan(0.001);
      expect(Math.abs(i!.high - b.perLabel[l]!.high)).toBeLessThan(0.001);
    });
  });
});

describe('rows needed at 80 % power', () => {
  it("is Connor's formula worked by hand", () => {
    // (1.959964·√0.2 + 0.841621·√(0.2 − 0.0025))² / 0.0025 = 625.5 → 626.
    expect(rowsNeeded(0.05, 0.2)).toBe(626);
    expect(rowsNeeded(0.3, 0.2)).toBeNull();
  });

  it('inverts to the difference a number of rows detects', () => {
    const d = detectableDifference(626, 0.2)!;
    expect(d).toBeGreaterThan(0.049);
    expect(d).toBeLessThanOrEqual(0.05);
    expect(rowsNeeded(d, 0.2)).toBeLessThanOrEqual(626);
    expect(detectableDifference(5, 0.2)).toBeNull();
  });
});

describe('racing', () => {
  /** Independent pairings with true accuracies; outcomes as 0/1 by race position. */
  function simulate(accuracies: readonly number[], rows: number, seed: number) {
    const rng = seededRng(seed);
    return accuracies.map((p, i) => ({ key: `p${i}`, rowsRun: rows, outcomes: Array.from({ length: rows }, () => (rng.uniform() < p ? 1 : 0)) }));
  }

  it('drops a pairing that has plainly lost, and says after how many rows and by whom', () => {
    const race = replayRace(simulate([0.85, 0.55], 400, 1), 400);
    expect(race.alive).toEqual(['p0']);
    const drop = race.standings[1]!.dropped!;
    expect(drop.by).toBe('p0');
    expect(drop.afterRows).toBeLessThan(400);
    expect(drop.afterRows % 20).toBe(0);
    expect(drop.evidence).toBeGreaterThanOrEqual(race.threshold);
    expect(drop.difference).toBeLessThan(0);
  });

  it('drops nobody after the last round: a pairing that ran every row is not said to be dropped', () => {
    // p1 is right on the first 20 rows and wrong on the next 20, where p0 is right: shown worse only by rows 20-39.
    const outcomes = (rows: number, wrongFrom: number, wrongTo: number) => Array.from({ length: rows }, (_, t) => (t >= wrongFrom && t < wrongTo ? 0 : 1));
    const entrants = (rows: number) => [
      { key: 'p0', rowsRun: rows, outcomes: outcomes(rows, rows, rows) },
      { key: 'p1', rowsRun: rows, outcomes: outcomes(rows, 20, 40) },
    ];
    // Three rounds of 20: the evidence of rows 20-39 drops p1 after the second, with a round left to save.
    const longer = replayRace(entrants(60), 60, { roundRows: 20 });
    expect(longer.standings[1]!.dropped).toMatchObject({ afterRows: 40, by: 'p0' });
    // Two rounds: the same evidence comes only with the last one, after which there is nothing to save.
    const last = replayRace(entrants(40), 40, { roundRows: 20 });
    expect(last.standings.map((s) => s.dropped)).toEqual([null, null]);
    expect(last.alive).toEqual(['p0', 'p1']);
    expect(last.rowsDecided).toBe(40);
  });

  it('replays the same drops from a race cut short, so a resumed race goes on as it was', () => {
    const full = simulate([0.8, 0.6, 0.78, 0.5], 600, 2);
    const whole = replayRace(full, 600);
    const upTo = whole.standings.map((s) => s.dropped?.afterRows ?? 600);
    // A race that stopped part-way: the pairings still in had run 300 rows, the dropped ones no more than their drop.
    const cut = full.map((e, i) => ({ ...e, rowsRun: Math.min(300, upTo[i]!), outcomes: e.outcomes.slice(0, Math.min(300, upTo[i]!)) }));
    const part = replayRace(cut, 600);
    part.standings.forEach((s, i) => {
      if (s.dropped) expect(s.dropped).toEqual(whole.standings[i]!.dropped);
    });
    expect(part.rowsDecided).toBe(300);
  });

  it('drops a pairing as good as the best in well under 5 % of races (looking after every round)', () => {
    let dropped = 0;
    const races = 400;
    for (let s = 0; s < races; s++) if (replayRace(simulate([0.8, 0.8, 0.8, 0.8], 500, 100 + s), 500).alive.length < 4) dropped++;
    expect(dropped / races).toBeLessThan(0.05);
  });
});
