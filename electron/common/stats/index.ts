// Uncertainty and comparisons (docs/method.md §16): pure functions, usable anywhere (the
// bootstrap runs in the main process or a worker, never on the renderer's thread).
export { LEVEL, wilson, zFor } from './wilson';
export { EXACT_MAX, type CountsStatistic } from './exact';
export { seededRng, seedOf, resampleCounts, type Rng } from './random';
export { bootstrapCounts, bootstrapTable, confusionF1, f1Intervals, BOOTSTRAP_MAX, BOOTSTRAP_MIN, BOOTSTRAP_TOLERANCE, type BootstrapOptions, type TableStatistic } from './bootstrap';
export { compareTable, comparePaired, holm, tangoInterval, pairedTable, signTestExact, tiedForBest, type Contender, type Outcomes, type PairedTable, type VersusBest } from './paired';
export { seedsInterval, seedsMacroF1Interval, type LabelledRow } from './seeds';
export { ASSUMED_DISAGREEMENT, POWER, detectableDifference, independentDisagreement, rowsNeeded, type PowerOptions } from './power';
export { RACE_ALPHA, replayRace, roundRows, type RaceDrop, type RaceEntrant, type RaceStanding, type RaceState } from './race';
