// Racing and intervals on simulated comparisons with known truths (docs/method.md §16).
//
//   npx tsx bench/stats.ts [--races 1000] [--sets 10000] [--sweeps 400] [--seed 1] [--only race|coverage|sweep|stability]
//
// Racing: 8 pairings, 1,000 rows in rounds of 50, each dropped once a betting test shows it worse
// than another at 95 % (electron/common/stats/race.ts), against every pairing running every row.
//   (a) the best at 80 %, the others 10-20 points behind: the model calls saved;
//   (b) true gaps from 0 to 10 points: how often a truly best pairing was dropped (the promise:
//       at most 5 %) and the calls saved.
// Each with errors independent between pairings and correlated (rows hard for all: 60 % of rows
// share one draw for every pairing). A call is a row of a pairing (every row costs the same).
//
// Coverage: how often 95 % intervals hold the truth over simulated data sets at 50, 200 and 1,000
// rows: Wilson for accuracy, the percentile bootstrap for macro-F1 (three labels), Tango's score interval for
// the paired difference. Sweep: the same for a sweep point's macro-F1 over rows and seeds
// (seedsMacroF1Interval, at a sweep's 2,000 resamples), with 2 and 3 seeds, the seeds only
// redrawing each row's vote or each also shifting its accuracy (±3 points). Stability: the macro-F1 bootstrap's bounds over five seeds, and its time.
import { parseArgs } from 'node:util';
import { f1Intervals, replayRace, seededRng } from '../electron/common/stats';
import { accuracyCoverage, macroF1Coverage, pairedCoverage, simulateComparison, sweepMacroF1Coverage, sweepTruth, threeLabels } from '../test/helpers/stats-sim';

const { values } = parseArgs({
  options: {
    races: { type: 'string', default: '1000' },
    sets: { type: 'string', default: '10000' },
    sweeps: { type: 'string', default: '400' },
    seed: { type: 'string', default: '1' },
    only: { type: 'string' },
  },
});
const races = Number(values.races);
const sets = Number(values.sets);
const sweeps = Number(values.sweeps);
const seed = Number(values.seed);
const ROWS = 1000;
const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

function raceScenario(name: string, accuracies: readonly number[], shared: number): void {
  const rng = seededRng(seed);
  const top = Math.max(...accuracies);
  let rowsRun = 0;
  let firstBestDropped = 0;
  let anyBestDropped = 0;
  const dropRows: number[] = [];
  for (let r = 0; r < races; r++) {
    const outcomes = simulateComparison(accuracies, ROWS, rng, shared);
    const race = replayRace(outcomes.map((o, i) => ({ key: String(i), rowsRun: ROWS, outcomes: o })), ROWS, { roundRows: 50 });
    race.standings.forEach((s, i) => {
      const ran = s.dropped?.afterRows ?? ROWS;
      rowsRun += ran;
      if (s.dropped) dropRows.push(ran);
      if (s.dropped && accuracies[i] === top) anyBestDropped++;
    });
    if (race.standings[0]!.dropped) firstBestDropped++;
  }
  const all = races * accuracies.length * ROWS;
  const meanDrop = dropRows.length ? dropRows.reduce((a, b) => a + b, 0) / dropRows.length : NaN;
  console.log(
    `${name.padEnd(34)} calls saved ${pct(1 - rowsRun / all).padStart(7)}   best dropped ${pct(firstBestDropped / races).padStart(6)}` +
      `   a top pairing dropped ${pct(anyBestDropped / races).padStart(6)}   dropped after ${meanDrop.toFixed(0)} rows on average`,
  );
}

if (!values.only || values.only === 'race') {
  console.log(`Racing: 8 pairings, ${ROWS} rows, rounds of 50, ${races} races each (seed ${seed})`);
  const behind = [0.8, ...Array.from({ length: 7 }, (_, i) => 0.7 - (0.1 * i) / 6)];
  const gaps = [0.8, ...Array.from({ length: 7 }, (_, i) => 0.8 - (0.1 * i) / 6)];
  const t0 = performance.now();
  raceScenario('(a) 10-20 points behind, independent', behind, 0);
  raceScenario('(a) 10-20 points behind, correlated', behind, 0.6);
  raceScenario('(b) gaps 0-10 points, independent', gaps, 0);
  raceScenario('(b) gaps 0-10 points, correlated', gaps, 0.6);
  console.log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
}

if (!values.only || values.only === 'coverage') {
  const bootSets = Math.min(sets, 2000);
  console.log(`Coverage of 95 % intervals (${sets} data sets; ${bootSets} for the bootstrap, 1,000 resamples each)`);
  console.log('rows   accuracy 70 %   accuracy 90 %   accuracy 97 %   macro-F1 (3 labels)   paired, 6 pts apart   paired, tied');
  for (const n of [50, 200, 1000]) {
    const cells = [
      accuracyCoverage(0.7, n, sets, seed * 11 + n),
      accuracyCoverage(0.9, n, sets, seed * 13 + n),
      accuracyCoverage(0.97, n, sets, seed * 17 + n),
      macroF1Coverage(threeLabels(), n, bootSets, seed * 19 + n, 1000),
      pairedCoverage([0.7, 0.12, 0.06, 0.12], n, sets, seed * 23 + n),
      pairedCoverage([0.8, 0.03, 0.03, 0.14], n, sets, seed * 29 + n),
    ];
    console.log(`${String(n).padStart(4)}   ${cells.map((c) => `${pct(c.coverage)} ±${(c.width * 50).toFixed(1)}`.padEnd(14)).join('  ')}`);
  }
  console.log('(each cell: coverage, then the mean half-width in points)\n');
}

if (!values.only || values.only === 'sweep') {
  const t0 = performance.now();
  const effects = [0, 0.03];
  console.log(`Coverage of a sweep point's macro-F1 over rows and seeds (${sweeps} simulated sweeps a cell, 2,000 resamples each)`);
  console.log(`truth ${effects.map((e) => (100 * sweepTruth({ seeds: 2, seedEffect: e })).toFixed(2)).join(' / ')} (no seed effect / ±3 points)`);
  console.log('rows   2 seeds, no seed effect   3 seeds, no seed effect   2 seeds, ±3 points   3 seeds, ±3 points');
  for (const n of [50, 200, 1000]) {
    const cells = effects.flatMap((seedEffect) => [2, 3].map((seeds) => sweepMacroF1Coverage({ seeds, seedEffect }, n, sweeps, seed * 31 + 1000 * n + seeds + 10 * seedEffect)));
    console.log(`${String(n).padStart(4)}   ${cells.map((c) => `${pct(c.coverage)} ±${(c.width * 50).toFixed(1)}`.padEnd(24)).join('  ')}`);
  }
  console.log(`(each cell: coverage, then the mean half-width in points; ${((performance.now() - t0) / 1000).toFixed(0)} s)\n`);
}

if (!values.only || values.only === 'stability') {
  console.log('Macro-F1 bootstrap: bounds over seeds 1-5 (the most they differ) and the time of one interval');
  for (const n of [50, 200, 1000, 100_000]) {
    const confusion = [
      [0.3, 0.03, 0, 0.005],
      [0.05, 0.25, 0.02, 0],
      [0.04, 0.06, 0.245, 0],
    ].map((row) => row.map((p) => Math.round(p * n)));
    const results = [1, 2, 3, 4, 5].map((s) => {
      const t0 = performance.now();
      const r = f1Intervals(confusion, { seed: s });
      return { r: r.macroF1!, ms: performance.now() - t0 };
    });
    const spread = (pick: (i: { low: number; high: number }) => number) => Math.max(...results.map((x) => pick(x.r))) - Math.min(...results.map((x) => pick(x.r)));
    const ms = results.map((x) => x.ms).sort((a, b) => a - b);
    console.log(
      `${String(n).padStart(6)} rows: macro-F1 ${(100 * results[0]!.r.estimate).toFixed(1)} [${(100 * results[0]!.r.low).toFixed(1)}, ${(100 * results[0]!.r.high).toFixed(1)}]` +
        `  low moves ${(100 * spread((i) => i.low)).toFixed(3)} pt, high ${(100 * spread((i) => i.high)).toFixed(3)} pt  median ${ms[2]!.toFixed(0)} ms`,
    );
  }
}
