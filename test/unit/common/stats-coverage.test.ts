// Coverage by simulation (docs/method.md §16): thousands of data sets drawn from populations with a
// known truth at 50, 200 and 1,000 rows; about 95 % of the intervals must hold the truth. Seeded,
// so each figure is the same on every run; bench/stats.ts prints the table with more data sets.
import { describe, expect, it } from 'vitest';
import { accuracyCoverage, macroF1Coverage, pairedCoverage, sweepMacroF1Coverage, threeLabels } from '../../helpers/stats-sim';

const SIZES = [50, 200, 1000] as const;

describe('95 % intervals hold the truth about 95 % of the time', () => {
  it('Wilson, for accuracy (4,000 data sets a size and accuracy)', () => {
    for (const n of SIZES) {
      for (const p of [0.7, 0.9, 0.97]) {
        const c = accuracyCoverage(p, n, 4000, 1000 * n + p * 100);
        // The binomial error of 4,000 data sets is 0.35 points; Wilson's own coverage wobbles a point or two
        // around 95 % with n and p (97 % at 50 rows and 90 %).
        expect(c.coverage, `n ${n}, p ${p}`).toBeGreaterThan(0.93);
        expect(c.coverage, `n ${n}, p ${p}`).toBeLessThan(0.975);
      }
    }
  });

  it("Tango's, for the paired difference (4,000 data sets a size and table)", () => {
    const tables: Array<[number, number, number, number]> = [
      // Disagreeing on 18 % of rows, 6 points apart; on 6 % of rows, tied.
      [0.7, 0.12, 0.06, 0.12],
      [0.8, 0.03, 0.03, 0.14],
    ];
    for (const n of SIZES) {
      for (const [i, t] of tables.entries()) {
        const c = pairedCoverage(t, n, 4000, 7000 * n + i);
        expect(c.coverage, `n ${n}, table ${i}`).toBeGreaterThan(0.93);
        expect(c.coverage, `n ${n}, table ${i}`).toBeLessThan(0.975);
      }
    }
  });

  it('the percentile bootstrap, for macro-F1 (1,000-2,000 data sets a size, three labels)', { timeout: 300_000 }, () => {
    for (const n of SIZES) {
      const c = macroF1Coverage(threeLabels(), n, n === 50 ? 2000 : 1000, 31 * n, 1000);
      // 1,000 data sets leave 0.7 points of binomial error, 2,000 half a point; the percentile
      // bootstrap of a ratio runs a point or two short at 50 rows (93.5 % in bench/stats.ts).
      expect(c.coverage, `n ${n}`).toBeGreaterThan(n === 50 ? 0.92 : 0.925);
      expect(c.coverage, `n ${n}`).toBeLessThan(0.97);
    }
  });

  it("the bootstrap over rows and seeds, for a sweep point's macro-F1 (300 sweeps, 2 seeds each shifting its accuracy)", { timeout: 300_000 }, () => {
    // 200 rows, 2 seeds whose accuracies differ by a seed effect of ±3 points (standard deviation):
    // both the rows and the seeds vary, and the interval must cover both (bench/stats.ts --only
    // sweep: 92.5 % over 400 sweeps at 2,000 resamples; 95.3 % here). 300 sweeps leave 1.3 points
    // of binomial error; 1,000 resamples each, as the other coverage checks (the coverage is the method's).
    const c = sweepMacroF1Coverage({ seeds: 2, seedEffect: 0.03 }, 200, 300, 5200, 1000);
    expect(c.coverage).toBeGreaterThan(0.9);
    expect(c.coverage).toBeLessThan(0.99);
  });
});
