// Experiments: grids of evaluation jobs run as one piece of work, resumable after a pause, a crash
// or a SIGKILL. Each kind is one definition (kind.ts), registered once (registry.ts); one runner
// (experiment.ts) claims, walks, pauses and resumes every kind, one manager (manager.ts) creates,
// shows, exports and plans it. Built on the jobs (electron/jobs/: the job database, JobManager,
// the planner) and the model library (electron/models/: a model file's checks); the API handlers
// and the CLI use it through `Experiments`.
//
//   kind.ts           what a kind of experiment is: its cells and how it is created, shown, planned
//   registry.ts       every kind, registered once: Experiments, the one entry of the faces
//   manager.ts        one kind as every face uses it: create, start, pause, cancel, get, export, plan
//   experiment.ts     ExperimentRunner: the one runner, its progress model; experiment-eta.ts its time left
//   sweep.ts          sensitivity sweeps: one job per (n, k, seed), shared work, aggregated points
//   sweep-metrics.ts  a sweep's points read off its jobs' rows; sweep-backends.ts: shared evaluations
//   compare.ts        generator × evaluator comparisons: one job per pair, generator-major
//   race.ts           racing (--race): the rounds' rows, the race replayed from the rows scored
export { ExperimentRunner, spentIn, type ExperimentRunnerOptions } from './experiment';
export type { CellState, ExperimentCells, ExperimentKindDefinition, ExperimentStatus, PlanOptions, ResultOf, SummaryOf } from './kind';
export { ExperimentManager, type BudgetChange } from './manager';
export { Experiments, type ExperimentManagers, type ExperimentsOptions } from './registry';
export { sweepCells, sweepDeterministic, sweepKind, type StoredSweep, type StoredSweepSpec, type SweepCellKey } from './sweep';
export { aggregateSweep, meanStd, scoreUpTo, pointCost, costIndex, evaluationCallsUpTo, sweepPointsCsv, type SweepCell, type SweepAggregate, type CostIndex } from './sweep-metrics';
export { sweepBackend, evaluationCacheKey, type EvaluationStore } from './sweep-backends';
export { checkComparisonInputs, comparisonKind, comparisonSpec, orderPairs, pendingPair, pairsCsv, type PairCell, type StoredComparison, type StoredComparisonSpec } from './compare';
